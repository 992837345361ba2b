"""Player identity in the Python clients: the `Client` asks for it and keeps its key
across reconnects, `dicehall play` keeps the key of each server in the user's state
directory and says `hello` with it next time."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from dicehall.clients.client import Client
from dicehall.clients.playerkeys import PlayerKeyStore, origin
from dicehall.protocol import errors
from tests.support.servers import ServerProcess
from tests.support.wait import eventually

from .test_terminal import Terminal

FORGED = "pk1.Zq4mR8tWc2Lx0bNs.forged"


# --- the store --------------------------------------------------------------------------------


def test_keys_are_kept_per_origin_for_the_user_only(tmp_path: Path) -> None:
    store = PlayerKeyStore(tmp_path / "dicehall" / "player-keys.json")
    assert store.get("ws://a:8000/ws") is None
    store.put("ws://a:8000/ws", "pk1.a.mac")
    store.put("wss://b.example/dice/ws", "pk1.b.mac")
    assert store.get("ws://A:8000/") == "pk1.a.mac"  # the same deployment, another path
    assert store.get("ws://a:8001/ws") is None and store.get("wss://b.example") == "pk1.b.mac"
    assert store.path.stat().st_mode & 0o777 == 0o600
    store.forget("ws://a:8000/ws")
    assert store.get("ws://a:8000/ws") is None and store.get("wss://b.example/ws") is not None
    assert json.loads(store.path.read_text()) == {"wss://b.example": "pk1.b.mac"}
    assert origin("WS://Host:1/ws?x=1") == "ws://host:1"


def test_a_broken_file_counts_as_empty_and_the_path_follows_xdg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    store = PlayerKeyStore()
    assert store.path == tmp_path / "dicehall" / "player-keys.json"
    store.path.parent.mkdir(parents=True)
    store.path.write_text("[not a map", encoding="utf-8")
    assert store.get("ws://a/ws") is None
    store.put("ws://a/ws", "pk1.a.mac")
    assert store.get("ws://a/ws") == "pk1.a.mac"


# --- the client library -----------------------------------------------------------------------


async def test_the_client_is_given_a_player_and_is_that_player_again(
    server: ServerProcess,
) -> None:
    async with Client(server.ws, name="Ada") as first:
        player = first.player
        assert first.hello is not None and "identity" in first.hello.features
    assert player is not None and player.key.startswith(f"pk1.{player.id}.")
    async with Client(server.ws, name="another name", key=player.key) as again:
        assert again.player == player
    async with Client(server.ws) as stranger:
        assert stranger.player is not None and stranger.player.id != player.id


async def test_a_key_the_server_did_not_sign_fails_connect(server: ServerProcess) -> None:
    client = Client(server.ws, key=FORGED)
    with pytest.raises(errors.BadKeyError) as caught:
        await client.connect()
    assert caught.value.code == 2012 and "without a key" in caught.value.message
    await client.close()


async def test_a_reconnect_says_hello_as_the_same_player(server: ServerProcess) -> None:
    async with Client(server.ws, backoff=(0.05, 0.5)) as client:
        player = client.player
        wire = client._wire
        assert wire is not None and player is not None
        wire.ws.transport.abort()
        await eventually(lambda: client.reconnects == 1 and client.connected)
        assert client.player == player and client.hello is not None
        assert client.hello.player == player  # (the hello of the new connection)


# --- dicehall play ----------------------------------------------------------------------------


def quit_at_the_first_prompt(term: Terminal) -> str:
    try:
        seen = term.prompt()
        term.type("quit")
        seen += term.read_until(r"bye: your seat stays yours", 10)
        assert term.proc.wait(10) == 0
        return seen
    finally:
        term.close()


def kept(state: Path) -> dict[str, str]:
    path = state / "dicehall" / "player-keys.json"
    assert path.stat().st_mode & 0o077 == 0, "only the user may read player keys"
    data: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
    return data


def play(server: ServerProcess, state: Path, *extra: str) -> Terminal:
    return Terminal(
        "play", "--url", server.ws, "--game", "qwinto", "--seats", "1", *extra, state=state
    )


def test_dicehall_play_keeps_the_key_it_was_given_and_comes_back_with_it(
    server: ServerProcess, tmp_path: Path
) -> None:
    quit_at_the_first_prompt(play(server, tmp_path))
    keys = kept(tmp_path)
    assert list(keys) == [origin(server.ws)]
    quit_at_the_first_prompt(play(server, tmp_path))
    assert kept(tmp_path) == keys, "said hello with it: the server gave the same key back"
    player = asyncio.run(_player(server, keys[origin(server.ws)]))
    assert keys[origin(server.ws)].startswith(f"pk1.{player}.")


async def _player(server: ServerProcess, key: str) -> str:
    async with Client(server.ws, key=key) as client:
        assert client.player is not None
        return client.player.id


def test_a_kept_key_the_server_does_not_know_makes_way_for_a_new_one(
    server: ServerProcess, tmp_path: Path
) -> None:
    PlayerKeyStore(tmp_path / "dicehall" / "player-keys.json").put(server.ws, FORGED)
    seen = quit_at_the_first_prompt(play(server, tmp_path))
    assert "does not know the player you were here" in seen
    assert kept(tmp_path)[origin(server.ws)] not in {FORGED, ""}


def test_a_key_given_is_used_not_kept_and_its_refusal_is_an_error(
    server: ServerProcess, tmp_path: Path
) -> None:
    term = play(server, tmp_path, "--key", FORGED)
    try:
        term.read_until(r"dicehall play: --key: .*without a key.*\n", 30)
        assert term.proc.wait(10) == 1
    finally:
        term.close()
    assert not (tmp_path / "dicehall" / "player-keys.json").exists()
