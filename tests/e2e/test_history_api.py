"""The history's HTTP API on a real `dicehall serve` (docs/history.md): every answer checked
against the published JSON Schema, paging, and the errors a client may meet."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from tests.e2e.helpers import games_against_a_house_bot, metrics
from tests.support.postgres import running_postgres
from tests.support.servers import ROOT, ServerProcess, running_server
from tests.support.wait import eventually

Played = tuple[ServerProcess, str, list[str]]
"""A server with stored games: it, the player, the rooms (oldest first)."""

SCHEMA_FILE = ROOT / "docs" / "history" / "api.schema.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_FILE.read_text())


def get(server: ServerProcess, path: str, kind: str | None = None) -> tuple[int, Any]:
    status, body = server.get(path)
    answer = json.loads(body)
    if kind is not None and status == 200:
        jsonschema.validate(answer, {**SCHEMA, "$ref": f"#/$defs/{kind}"})
    return status, answer


async def rated_games(server: ServerProcess, count: int) -> tuple[str, list[str]]:
    """`count` games of one player against a house bot, once they are stored."""
    player, rooms = await games_against_a_house_bot(server, count)
    saved = "dicehall_history_saved_total"
    await eventually(lambda: metrics(server)[saved] == count, "stored", timeout=30)
    return player, rooms


@pytest.fixture(scope="module")
def played(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Played]:
    data = tmp_path_factory.mktemp("data")
    with running_server(env={"XDG_DATA_HOME": str(data)}) as server:
        player, rooms = asyncio.run(rated_games(server, 3))
        yield server, player, rooms


def test_the_published_schema_is_the_codes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "server.history.api"], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == SCHEMA, "run: python -m server.history.api > " + str(
        SCHEMA_FILE.relative_to(ROOT)
    )


def test_ladders_list_every_game_and_preset(played: Played) -> None:
    server, _, _ = played
    status, answer = get(server, "/api/leaderboards", "Ladders")
    assert status == 200
    ladders = {entry["ladder"] for entry in answer["ladders"]}
    assert {"qwixx", "qwixx:official", "qwinto", "qwinto:official", "qwirkle", "yamb"} == ladders


def test_a_players_games_page_by_page(played: Played) -> None:
    server, player, rooms = played
    seen: list[str] = []
    path = f"/api/players/{player}/games?limit=2"
    while True:
        status, page = get(server, path, "PlayerGames")
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
    server, player, rooms = played
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
    server, _, rooms = played
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
