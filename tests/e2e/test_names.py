"""Names through a real `dicehall serve` (docs/protocol.md, "Names"; issue 39): a player
may not wear a house bot's name or hide characters in theirs, and the refusal changes
nothing (a `hello` refused may come again); the house bots keep their names."""

from __future__ import annotations

from tests.support.servers import running_server

from .helpers import new_room
from .wire import RawClient


async def test_names_that_pass_for_someone_else_are_refused() -> None:
    with running_server() as server:
        client = await RawClient.open(server.ws, hello={})
        try:
            for name in ("strong-bot-1", "Random Bot 2", "house:strong", "Ada\u0085", "\u202eAda"):
                error = await client.fails("hello", client="e2e", name=name)
                assert error["name"] == "invalid-message" and "name: " in error["message"]
            assert (await client.fails("games"))["name"] == "hello-first"  # (nothing changed)
            assert (await client.call("hello", client="e2e", name="Ada"))["name"] == "Ada"

            room = await new_room(client, "qwixx", 3, public=False)
            refused = await client.fails("join", room=room, seat=0, name="A\u200bda")
            assert refused["name"] == "invalid-message" and "U+200B" in refused["message"]
            await client.call("join", room=room, seat=0)
            await client.call("add_bots", room=room)  # (random, the default kind)
            names = [s["name"] for s in (await client.next("room"))["info"]["seats"]]
            while names[1:] != ["random-bot-1", "random-bot-2"]:
                names = [s["name"] for s in (await client.next("room"))["info"]["seats"]]
            assert names[0] == "Ada"

            bidi = await client.fails("chat", room=room, text="gg \u202eyllaer")
            assert bidi["name"] == "invalid-message" and "U+202E" in bidi["message"]
            await client.call("chat", room=room, text="gg 👨\u200d👩\u200d👧")
        finally:
            await client.close()
