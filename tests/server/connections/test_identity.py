"""Player identity (the `identity` feature): keys the server signs, sessions that say who
they are, seats that know their player, on one process and across two sharing Redis."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Iterator

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dicehall.protocol import errors
from dicehall.protocol.messages import client as requests
from dicehall.protocol.messages.results import HelloResult
from dicehall.rules import get_game
from dicehall.server.connections.identity import Player, PlayerKeys, house_player
from dicehall.server.connections.tokens import TokenSigner
from dicehall.server.edge.process import Server
from dicehall.server.rooms.room import RoomCore
from tests.support.redis import RedisServer
from tests.support.wait import eventually

from ..test_redis_backend import backend, processes
from .test_session import Member, create, running

SECRET = b"0123456789abcdef0123456789abcdef"
OTHER = b"another deployment's secret, 32b"


def signed(secret: bytes, player_id: str) -> str:
    """A key made by hand the way the server makes one (a forger with the secret)."""
    body = f"pk1.{player_id}"
    mac = hmac.new(secret, body.encode(), hashlib.sha256).digest()[:24]
    return f"{body}.{base64.urlsafe_b64encode(mac).decode().rstrip('=')}"


# --- keys --------------------------------------------------------------------------------


def test_a_new_player_has_a_public_id_and_a_key_that_names_it_again() -> None:
    keys = PlayerKeys(SECRET)
    players = [keys.issue() for _ in range(50)]
    assert len({p.id for p in players}) == 50
    for player in players:
        assert re.fullmatch(r"[A-Za-z0-9_-]{16}", player.id)
        assert player.key.startswith(f"pk1.{player.id}.") and len(player.key) <= 128
        assert keys.verify(player.key) == player
        assert PlayerKeys(SECRET).verify(player.key) == player  # another process, same secret


def test_a_key_of_another_secret_or_changed_anywhere_is_no_player() -> None:
    keys = PlayerKeys(SECRET)
    player = keys.issue()
    assert PlayerKeys(OTHER).verify(player.key) is None
    for i, c in enumerate(player.key):
        changed = player.key[:i] + ("B" if c == "A" else "A") + player.key[i + 1 :]
        assert keys.verify(changed) is None, changed
    assert keys.verify(player.key + "A") is None and keys.verify(player.key[:-1]) is None


@pytest.mark.parametrize(
    "key",
    [
        "",
        "pk1",
        "pk1..",
        "pk2.abc.def",
        "pk1.abc.def.ghi",
        "pk1.Zq4mR8tWc2Lx0bNs.forged",
        signed(SECRET, "house:strong"),  # the secret's own mac: still not an id a key names
        signed(SECRET, "x" * 65),
        signed(SECRET, "caf\u00e9"),
        "x" * 129,
    ],
)
def test_forged_and_malformed_keys_are_no_player(key: str) -> None:
    assert PlayerKeys(SECRET).verify(key) is None


def test_a_hand_made_key_with_the_secret_is_a_player_so_the_secret_is_all_it_takes() -> None:
    assert PlayerKeys(SECRET).verify(signed(SECRET, "someone")) == Player(
        "someone", signed(SECRET, "someone")
    )


def test_seat_tokens_and_player_keys_are_never_each_other() -> None:
    token = TokenSigner(SECRET).issue("room", 0, "nonce")
    assert PlayerKeys(SECRET).verify(token) is None
    assert TokenSigner(SECRET).verify(PlayerKeys(SECRET).issue().key) is None


@given(
    st.one_of(
        st.text(max_size=200),
        st.builds(lambda a, b: f"pk1.{a}.{b}", st.text(max_size=70), st.text(max_size=40)),
        st.binary(max_size=60),
        st.integers(),
        st.none(),
        st.lists(st.text(max_size=5), max_size=3),
    )
)
def test_garbage_never_raises(key: object) -> None:
    assert PlayerKeys(SECRET).verify(key) is None


def test_a_short_secret_is_refused_and_house_bots_have_their_own_ids() -> None:
    with pytest.raises(ValueError):
        PlayerKeys(b"short")
    assert house_player("strong") == "house:strong"


# --- sessions --------------------------------------------------------------------------------


async def say_hello(server: Server, name: str = "p", **fields: object) -> Member:
    member = Member(server)
    await member.ask(requests.Hello, client="test", name=name, **fields)
    return member


def hello_result(member: Member) -> HelloResult:
    result = member.out[-1][2]
    assert isinstance(result, HelloResult)
    return result


def room_core(server: Server, room: str) -> RoomCore:
    core = server.backend.local_room(room)
    assert core is not None
    return core


async def test_hello_issues_a_player_and_takes_its_key_back() -> None:
    async with running() as server:
        first = await say_hello(server, features=["identity"])
        issued = hello_result(first)
        assert issued.features == ["identity"]
        assert not isinstance(issued.player, msgspec.UnsetType)
        assert first.session.player == issued.player.id
        again = await say_hello(server, "other name", features=["identity"], key=issued.player.key)
        assert hello_result(again).player == issued.player
        assert again.session.player == issued.player.id
        plain = await say_hello(server)
        assert hello_result(plain).player is msgspec.UNSET and plain.session.player is None


async def test_a_key_not_signed_here_fails_hello_and_changes_nothing() -> None:
    async with running() as server:
        real = server.services.players.issue()
        for key in [
            PlayerKeys(OTHER).issue().key,  # another deployment's
            real.key[:-1] + ("A" if real.key[-1] != "A" else "B"),  # altered
            "pk1.Zq4mR8tWc2Lx0bNs.forged",
        ]:
            member = Member(server)
            with pytest.raises(errors.BadKeyError) as caught:
                await member.ask(
                    requests.Hello, client="t", name="Ada", features=["identity"], key=key
                )
            assert "without a key" in caught.value.message
            assert (member.session.name, member.session.player) == (None, None)
            assert not member.session.stream.progress
            await member.ask(requests.Hello, client="t", name="Ada", features=["identity"])
            player = hello_result(member).player
            assert not isinstance(player, msgspec.UnsetType) and player.id != real.id


async def test_a_key_without_the_feature_is_an_invalid_message() -> None:
    async with running() as server:
        key = server.services.players.issue().key
        member = Member(server)
        with pytest.raises(errors.InvalidMessageError):
            await member.ask(requests.Hello, client="t", key=key)
        assert member.session.player is None


async def test_a_seat_is_played_as_the_player_that_joined_or_took_it_back() -> None:
    async with running() as server:
        ada = await say_hello(server, "Ada", features=["identity"])
        ada_id = ada.session.player
        bo = await say_hello(server, "Bo")  # no identity
        room = await create(ada, "qwixx", 3, turn_window=600)
        token = (await ada.ask(requests.Join, room=room)).token
        await bo.ask(requests.Join, room=room)
        await ada.ask(requests.AddBots, room=room)
        core = room_core(server, room)
        assert core.players() == [ada_id, None, "house:random"]
        assert {bot.session.player for bot in server.bots.values()} == {"house:random"}

        plain = await say_hello(server, "Ada", tokens=[token])  # no identity: keeps Ada's
        assert [h.seat for h in hello_result(plain).seats] == [0]
        assert core.players()[0] == ada_id
        other = await say_hello(server, "Ada", tokens=[token], features=["identity"])
        assert [h.seat for h in hello_result(other).seats] == [0]
        assert core.players()[0] == other.session.player != ada_id


def test_a_finished_games_players_stay_as_they_were() -> None:
    core = RoomCore("r1", get_game("qwixx"), get_game("qwixx").resolve_options(), 1, 30)
    core.join("Ada", 0, "n0", 0.0, player="p0")
    assert core.take_back(0, "n0", "p1") and core.players() == ["p1"]
    assert core.take_back(0, "n0", None) and core.players() == ["p1"]
    assert not core.take_back(0, "wrong", "p2") and core.players() == ["p1"]
    core.status = "over"  # (as the end of the game leaves it)
    assert core.take_back(0, "n0", "p2") and core.players() == ["p1"]


# --- two processes sharing Redis -------------------------------------------------------------


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    yield redis_server.url_db(redis_server.fresh_db())


async def test_a_key_from_one_process_is_the_same_player_on_the_other(redis_url: str) -> None:
    """No DICEHALL_SECRET: the processes sign with the secret the first one stored in
    Redis, as seat tokens do."""
    async with processes(redis_url) as (a, b):
        issued = hello_result(await say_hello(a, features=["identity"])).player
        assert not isinstance(issued, msgspec.UnsetType)
        on_b = hello_result(await say_hello(b, features=["identity"], key=issued.key))
        assert on_b.player == issued


async def test_a_room_handed_over_keeps_its_seats_players(redis_url: str) -> None:
    async with processes(redis_url, 1, 10_000) as (a,), processes(redis_url, 1, 10_000) as (b,):
        ada = await say_hello(a, "Ada", features=["identity"])
        room = await create(ada, "qwixx", 2, turn_window=600)
        await ada.ask(requests.Join, room=room)
        await ada.ask(requests.AddBots, room=room)
        players = room_core(a, room).players()
        assert players == [ada.session.player, "house:random"]
        await a.stop()
        await eventually(lambda: backend(b).local_room(room) is not None, timeout=5.0)
        assert room_core(b, room).players() == players
