"""Every HTTP endpoint of a real `dicehall serve` takes any parameter without a 500: what
it cannot take is a 400 with a JSON error naming the parameter (server/edge/params.py), what
it does not have a 404 (issue 39: `²`, numbers of thousands of digits and numbers of 2**63
or more reached `int()` and SQLite and answered 500)."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.e2e.helpers import games_against_a_house_bot, metrics
from tests.support.servers import ServerProcess, running_server
from tests.support.wait import eventually


class Served(NamedTuple):
    server: ServerProcess
    player: str
    room: str
    """A finished room whose game is stored (and whose record the room's process keeps)."""


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with running_server() as server:
        player, (room,) = asyncio.run(games_against_a_house_bot(server, 1, public=True))
        saved = "dicehall_history_saved_total"
        asyncio.run(eventually(lambda: metrics(server)[saved] == 1, "stored", timeout=30))
        yield Served(server, player, room)


def fetch(server: ServerProcess, path: str) -> tuple[int, str]:
    """GET `path`, its characters beyond ASCII percent-encoded (UTF-8), as a browser does."""
    path = "".join(c if c.isascii() else urllib.parse.quote(c) for c in path)
    try:
        with urllib.request.urlopen(server.http + path, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


HUGE = "9" * 4301
"""More digits than `int()` takes (4,300 by default since Python 3.11)."""
TOO_BIG = str(2**63)
"""The first integer SQLite and PostgreSQL refuse (OverflowError on the way there)."""


@pytest.mark.parametrize(
    "path",
    [
        "/api/leaderboards/qwixx?limit=²",
        "/api/leaderboards/qwixx?offset=²",
        f"/api/leaderboards/qwixx?offset={TOO_BIG}",
        f"/api/leaderboards/qwixx?offset={HUGE}",
        f"/api/leaderboards/qwixx?limit={HUGE}",
        "/api/leaderboards/qwixx?limit=١٢",  # (Arabic-Indic digits: int() reads 12)
        f"/api/leaderboards/qwixx?limit={q('+5')}",
        "/api/leaderboards/qwixx?limit=",
        "/api/players/PLAYER/games?limit=²",
        f"/api/players/PLAYER/games?before={TOO_BIG}:ROOM",
        f"/api/players/PLAYER/games?before={HUGE}:ROOM",
        "/api/players/PLAYER/games?before=²:ROOM",
        f"/api/players/PLAYER/games?before=1:{q(chr(0))}",
        "/api/games/ROOM/replay?step=²",
        f"/api/games/ROOM/replay?step={HUGE}",
        f"/api/games/ROOM/replay?step={TOO_BIG}",
        f"/api/players/{q(chr(0))}",
        f"/api/players/{q('x' * 65)}/games",
        f"/api/games/{q(chr(0))}",
        f"/api/games/{q('a:b')}/replay",
        f"/api/rooms?game={q(chr(0))}",
        "/api/rooms?game=chess",
        f"/api/rooms/{q(chr(0))}/record",
        f"/api/rooms/{q('x' * 65)}/record",
    ],
)
def test_a_parameter_an_endpoint_cannot_take_is_a_400(served: Served, path: str) -> None:
    path = path.replace("PLAYER", served.player).replace("ROOM", served.room)
    status, body = fetch(served.server, path)
    assert status == 400, (path, status, body[:300])
    assert isinstance(json.loads(body)["error"], str)


def test_the_bounds_themselves_are_taken(served: Served) -> None:
    player, room = served.player, served.room
    for path in (
        "/api/leaderboards/qwixx?offset=1000000000&limit=10000",
        f"/api/players/{player}/games?limit=1&before={2**63 - 1}:{room}",
        f"/api/games/{room}/replay?step=1000000000",
        "/api/rooms?game=qwixx",
    ):
        assert fetch(served.server, path)[0] == 200, path


NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.from_regex(r"[0-9]{1,30}", fullmatch=True),
    st.sampled_from(["²", "١٢", "٣", "", " 1", "1 ", "+1", "-0", "0x10", "1e3", "1_000"]),
    st.sampled_from([HUGE, TOO_BIG, str(2**63 - 1), "0" * 30 + "1"]),
    st.text(max_size=20),
)
IDS = st.one_of(
    st.text(min_size=1, max_size=80),
    st.from_regex(r"[A-Za-z0-9_:-]{1,70}", fullmatch=True),
    st.sampled_from(["PLAYER", "ROOM", "house:random", ".", "..", "%2F"]),
)
WORDS = st.one_of(st.text(max_size=20), st.sampled_from(["qwixx", "qwixx:official", "yamb"]))
CURSORS = st.one_of(
    st.tuples(NUMBERS, IDS).map(lambda t: f"{t[0]}:{t[1]}"),
    st.text(max_size=30),
)
ENDPOINTS: list[tuple[str, dict[str, st.SearchStrategy[str]]]] = [
    ("/healthz", {}),
    ("/readyz", {}),
    ("/metrics", {}),
    ("/api/games", {}),
    ("/api/rooms", {"game": WORDS}),
    ("/api/rooms/{room}/record", {}),
    ("/api/leaderboards", {}),
    ("/api/leaderboards/{ladder}", {"offset": NUMBERS, "limit": NUMBERS}),
    ("/api/players/{player}", {}),
    ("/api/players/{player}/games", {"limit": NUMBERS, "before": CURSORS}),
    ("/api/games/{game}", {}),
    ("/api/games/{game}/replay", {"step": NUMBERS}),
]


@st.composite
def requests(draw: st.DrawFn) -> str:
    """A request to one endpoint: its path parameters anything, each query parameter
    absent or anything."""
    template, query = draw(st.sampled_from(ENDPOINTS))
    path = template
    for name in ("room", "ladder", "player", "game"):
        if "{" + name + "}" in path:
            value = draw(WORDS if name == "ladder" else IDS)
            path = path.replace("{" + name + "}", q(value))
    asked = {name: draw(values) for name, values in query.items() if draw(st.booleans())}
    return path + ("?" + urllib.parse.urlencode(asked) if asked else "")


@settings(max_examples=400, deadline=None)
@given(path=requests())
def test_no_parameter_gets_a_500(served: Served, path: str) -> None:
    path = path.replace("PLAYER", served.player).replace("ROOM", served.room)
    status, body = fetch(served.server, path)
    assert status in (200, 400, 404), (path, status, body[:300])
    if status == 400:
        assert isinstance(json.loads(body)["error"], str)
