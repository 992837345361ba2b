"""The `rooms` request, a page at a time (issue 39: one reply of every room grew to 1.87 MB,
past what clients take in one frame). Sessions with the real server parts, no sockets."""

from __future__ import annotations

import json

import msgspec
import pytest

from dicehall.protocol import errors
from dicehall.protocol.features import LOBBY_PAGES
from dicehall.protocol.limits import MAX_CURSOR, MAX_ROOMS_PAGE, MAX_SEATS, ReaderLimits
from dicehall.protocol.messages import client as requests
from dicehall.protocol.messages.common import RoomInfo, SeatInfo
from dicehall.protocol.messages.results import RoomsResult
from dicehall.server.backends import RoomSpec

from .connections.test_bounds import running
from .connections.test_session import hello


async def test_every_rooms_reply_is_one_page_and_the_feature_walks_the_rest() -> None:
    async with running() as server:
        spec = RoomSpec(game="qwixx", options={}, seats=2, turn_window=30, public=True)
        made = {(await server.backend.create(spec)).room for _ in range(MAX_ROOMS_PAGE + 5)}
        plain = await hello(server, "p")
        first = await plain.ask(requests.Rooms)
        assert len(first.rooms) == MAX_ROOMS_PAGE and first.total == len(made)
        assert first.next is not None
        for fields in ({"limit": 5}, {"cursor": first.next}):
            with pytest.raises(errors.InvalidMessageError, match=LOBBY_PAGES):
                await plain.ask(requests.Rooms, **fields)

        paging = await hello(server, "q", features=(LOBBY_PAGES,))
        seen: list[str] = []
        page = await paging.ask(requests.Rooms, limit=40)
        while True:
            assert len(page.rooms) <= 40 and page.total == len(made)
            seen += [r.room for r in page.rooms]
            if page.next is None:
                break
            page = await paging.ask(requests.Rooms, limit=40, cursor=page.next)
        assert len(seen) == len(made) and set(seen) == made
        assert seen[:MAX_ROOMS_PAGE] == [r.room for r in first.rooms], "one order for all"


def test_a_page_of_the_largest_rooms_fits_in_a_clients_frame() -> None:
    """However many rooms there are, a `rooms` reply stays within the Python client's frame
    limit: a full page of rooms as large as the schema lets them be, in JSON (the larger
    encoding), with every character escaped as long as JSON may write it."""
    wide = "\U0001f3b2"  # (4 bytes in UTF-8, 12 characters escaped as a surrogate pair)
    seat = SeatInfo(seat=0, kind="human", name=wide * 40, connected=True)
    room = RoomInfo(
        room="r" * 32,
        name=wide * 60,
        game="g" * 32,
        options={f"{i:032d}": "v" * 32 for i in range(16)},
        status="playing",
        public=True,
        turn_window=3600,
        seats=[msgspec.structs.replace(seat, seat=i) for i in range(MAX_SEATS)],
        spectators=2**53 - 1,
        commitment="c" * 64,
        host=MAX_SEATS - 1,
        url="wss://" + "u" * 506,
    )
    page = RoomsResult(rooms=[room] * MAX_ROOMS_PAGE, total=2**53 - 1, next="n" * MAX_CURSOR)
    reply = {"type": "reply", "id": 2**31 - 1, "ok": True, "result": msgspec.to_builtins(page)}
    escaped = json.dumps(reply, ensure_ascii=True)
    assert len(escaped) < ReaderLimits().max_frame
    assert len(page.rooms) < ReaderLimits().max_list
