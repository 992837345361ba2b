"""The history's HTTP API on a real `dicehall serve` (docs/history.md): every answer checked
against the published JSON Schema, paging, and the errors a client may meet."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import jsonschema
import pytest

from tests.e2e.helpers import games_against_a_house_bot, hello_player, metrics
from tests.support.postgres import running_postgres
from tests.support.servers import ROOT, ServerProcess, running_server
from tests.support.wait import eventually


class Played(NamedTuple):
    """A server with stored games, all of them in private rooms."""

    server: ServerProcess
    player: str
    key: str
    """The player's key: with it, the player's list has its private rooms' games."""
    rooms: list[str]
    """Oldest first."""
    data: Path
    """The server's XDG_DATA_HOME."""


SCHEMA_FILE = ROOT / "docs" / "history" / "api.schema.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_FILE.read_text())


def fetch(server: ServerProcess, path: str, key: str | None = None) -> tuple[int, str]:
    """GET `path`, with `Authorization: Bearer KEY` when given a key."""
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    request = urllib.request.Request(server.http + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def get(
    server: ServerProcess, path: str, kind: str | None = None, key: str | None = None
) -> tuple[int, Any]:
    status, body = fetch(server, path, key)
    answer = json.loads(body)
    if kind is not None and status == 200:
        jsonschema.validate(answer, {**SCHEMA, "$ref": f"#/$defs/{kind}"})
    return status, answer


async def rated_games(server: ServerProcess, count: int, key: str) -> list[str]:
    """`count` games of the player of `key` against a house bot, once they are stored."""
    saved = "dicehall_history_saved_total"
    before = metrics(server)[saved]
    _, rooms = await games_against_a_house_bot(server, count, key)
    await eventually(lambda: metrics(server)[saved] == before + count, "stored", timeout=30)
    return rooms


async def a_player(server: ServerProcess) -> tuple[str, str]:
    """A new player of the server: its id and key."""
    player = await hello_player(server)
    assert player is not None
    return player["id"], player["key"]


@pytest.fixture(scope="module")
def played(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Played]:
    data = tmp_path_factory.mktemp("data")
    with running_server(env={"XDG_DATA_HOME": str(data)}) as server:
        player, key = asyncio.run(a_player(server))
        rooms = asyncio.run(rated_games(server, 3, key))
        yield Played(server, player, key, rooms, data)


def test_the_published_schema_is_the_codes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dicehall.server.history.api"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == SCHEMA, "run: python -m dicehall.server.history.api > " + str(
        SCHEMA_FILE.relative_to(ROOT)
    )


def test_ladders_list_every_game_and_preset(played: Played) -> None:
    status, answer = get(played.server, "/api/leaderboards", "Ladders")
    assert status == 200
    ladders = {entry["ladder"] for entry in answer["ladders"]}
    assert {"qwixx", "qwixx:official", "qwinto", "qwinto:official", "qwirkle", "yamb"} == ladders


def test_a_players_games_page_by_page(played: Played) -> None:
    server, player, key, rooms, _ = played
    seen: list[str] = []
    path = f"/api/players/{player}/games?limit=2"
    while True:
        status, page = get(server, path, "PlayerGames", key=key)
        assert status == 200 and page["player"] == player
        seen += [g["game_id"] for g in page["games"]]
        if page["next"] is None:
            break
        path = f"/api/players/{player}/games?limit=2&before={page['next']}"
    assert seen == rooms[::-1]  # newest first
    status, info = get(server, f"/api/players/{player}", "PlayerInfo")
    assert status == 200 and info["name"] == "Ada"
    (rating,) = info["ratings"]
    assert rating["ladder"] == "qwixx" and rating["games"] == 3 and rating["rank"] in (1, 2)


def test_the_leaderboard_and_a_game_with_its_replay(
    played: Played,
) -> None:
    server, player, _, rooms, _ = played
    status, board = get(server, "/api/leaderboards/qwixx?limit=1", "Leaderboard")
    assert status == 200 and len(board["standings"]) == 1 and board["next_offset"] == 1
    status, rest = get(server, "/api/leaderboards/qwixx?offset=1", "Leaderboard")
    assert status == 200 and rest["next_offset"] is None
    everyone = board["standings"] + rest["standings"]
    assert {s["player"] for s in everyone} == {player, "house:random"}
    assert [s["rank"] for s in everyone] == [1, 2]

    status, game = get(server, f"/api/games/{rooms[0]}", "StoredGame")
    assert status == 200 and [s["seat"] for s in game["seats"]] == [0, 1]
    assert game["record"]["seed"] and game["seats"][0]["player"] == player
    steps = len(game["record"]["log"])
    status, start = get(server, f"/api/games/{rooms[0]}/replay?step=0", "ReplayStep")
    assert status == 200 and start["entry"] is None and start["scores"] == [0, 0]
    status, end = get(server, f"/api/games/{rooms[0]}/replay", "ReplayStep")
    assert status == 200 and end["step"] == end["steps"] == steps and end["over"] is True
    assert end["scores"] == [s["score"] for s in game["seats"]]
    status, middle = get(server, f"/api/games/{rooms[0]}/replay?step=5", "ReplayStep")
    assert middle["entry"]["index"] == 4 and len(middle["views"]) == len(middle["sheets"]) == 2


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/leaderboards/chess", 404),
        ("/api/leaderboards/qwixx?limit=0", 400),
        ("/api/leaderboards/qwixx?limit=abc", 400),
        ("/api/leaderboards/qwixx?offset=-1", 400),
        ("/api/players/nobody", 404),
        ("/api/players/nobody/games", 200),
        ("/api/players/x/games?before=yesterday", 400),
        ("/api/games/nothing", 404),
        ("/api/games/nothing/replay", 404),
    ],
)
def test_bad_requests_get_a_clear_error(played: Played, path: str, status: int) -> None:
    server, _, _, rooms, _ = played
    got, answer = get(server, path)
    assert got == status
    assert status == 200 or isinstance(answer["error"], str)
    assert get(server, f"/api/games/{rooms[0]}")[0] == 200  # (nothing changed)


def test_without_history_or_with_its_database_gone() -> None:
    with running_server("--db", "none") as server:
        assert get(server, "/api/leaderboards/qwixx")[0] == 404
    with running_postgres() as pg, running_server("--db", pg.fresh_database()) as server:
        assert get(server, "/api/leaderboards/qwixx")[0] == 200
        pg.stop()
        status, answer = get(server, "/api/leaderboards/qwixx")
        assert status == 503 and "out of reach" in answer["error"]


def test_the_history_files_are_their_owners_alone(played: Played) -> None:
    """The database holds the secret that signs player keys: a user of the machine who
    could read it could forge any player's key (issue 39). The server's umask is the
    usual 022, under which files are made readable by all unless asked otherwise."""
    home = played.data / "dicehall"
    modes = {str(p.relative_to(home)): p.stat().st_mode & 0o777 for p in home.rglob("*")}
    assert "history.db" in modes and "history.pending" in modes
    assert modes == {p: 0o700 if (home / p).is_dir() else 0o600 for p in modes}
    assert played.data.joinpath("dicehall").stat().st_mode & 0o777 == 0o700


def test_private_rooms_games_are_listed_to_their_player_alone() -> None:
    """A private room's game is on its player's list only when the player's key comes with
    the request; the game itself is anyone's who has its id (docs/history.md, "What is
    public")."""
    with running_server() as server:
        player, key = asyncio.run(a_player(server))
        _, other = asyncio.run(a_player(server))
        (private,) = asyncio.run(rated_games(server, 1, key))
        _, (public,) = asyncio.run(games_against_a_house_bot(server, 1, key, public=True))
        saved = "dicehall_history_saved_total"
        asyncio.run(eventually(lambda: metrics(server)[saved] == 2, "stored", timeout=30))

        def listed(key: str | None) -> list[str]:
            status, page = get(server, f"/api/players/{player}/games", "PlayerGames", key)
            assert status == 200, page
            return [g["game_id"] for g in page["games"]]

        assert listed(None) == [public]
        assert listed(other) == [public]  # (another player's key: theirs, not this one's)
        assert listed(key) == [public, private]  # newest first
        assert get(server, f"/api/games/{private}", "StoredGame")[0] == 200
        for wrong in (key[:-2] + "xx", "", "nonsense"):
            status, answer = get(server, f"/api/players/{player}/games", key=wrong)
            assert status == 401 and "Authorization" in answer["error"]


def test_replays_are_computed_away_from_the_loop_and_kept(played: Played) -> None:
    """A replay is CPU only (about 25 ms for a long game): the server's replay worker
    process computes it, and keeps it. Stopped (SIGSTOP) while a replay waits for it, the
    server goes on answering everything else."""
    server, _, _, rooms, _ = played
    replays = 'dicehall_history_replays_total{answer="%s"}'
    before = metrics(server)
    assert get(server, f"/api/games/{rooms[1]}/replay?step=3", "ReplayStep")[0] == 200
    assert get(server, f"/api/games/{rooms[1]}/replay?step=3", "ReplayStep")[0] == 200
    after = metrics(server)
    assert after[replays % "computed"] - before.get(replays % "computed", 0) == 1
    assert after[replays % "kept"] - before.get(replays % "kept", 0) == 1

    (worker,) = [pid for pid in children(server.proc.pid) if "spawn_main" in cmdline(pid)]
    os.kill(worker, signal.SIGSTOP)
    try:
        with ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(get, server, f"/api/games/{rooms[1]}/replay?step=4")
            running = "dicehall_history_replays_running"
            asyncio.run(eventually(lambda: metrics(server)[running] == 1, "the replay asked"))
            assert get(server, "/api/leaderboards/qwixx")[0] == 200
            assert asyncio.run(a_player(server))  # (a WebSocket's hello, answered)
            assert not waiting.done()
            os.kill(worker, signal.SIGCONT)
            status, step = waiting.result(timeout=30)
    finally:
        os.kill(worker, signal.SIGCONT)
    assert status == 200 and step["step"] == 4


def children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


def cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
