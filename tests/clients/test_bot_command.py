"""`dicehall bot` as a user runs it: a real process against a real server process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from typing import Any

from dicehall.clients.client import Client
from dicehall.rules.records import replay
from tests.support.servers import ServerProcess, free_port, run_async
from tests.support.servers import dicehall_bot as bot

KEYS = {"room", "game", "scores", "winners", "seed_verified", "seconds", "players"}


def finish(proc: subprocess.Popen[str], timeout: float = 150) -> tuple[int, str, str]:
    """Its exit status and output (`bot()` kills it if the deadline passes)."""
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def run_bot(*args: str, timeout: float = 150) -> tuple[int, str, str]:
    with bot(*args) as proc:
        return finish(proc, timeout)


def check_line(server: ServerProcess, line: dict[str, Any], game: str, seats: int) -> None:
    """A well-formed report whose scores an independent replay of the record confirms."""
    assert set(line) == KEYS
    assert line["game"] == game and line["seed_verified"] is True
    assert len(line["scores"]) == seats
    assert all(isinstance(v, int) for v in line["scores"].values())
    assert line["winners"] and set(line["winners"]) <= set(line["scores"])
    best = max(line["scores"].values())
    assert all(line["scores"][w] == best for w in line["winners"])
    assert line["seconds"] > 0
    assert set(line["players"]) <= set(line["scores"])
    status, body = server.get(f"/api/rooms/{line['room']}/record")
    assert status == 200
    result = replay(json.loads(body)).to_json()
    assert result["over"] and result["seed_verified"] is True
    assert result["scores"] == line["scores"]


def test_bots_play_every_game_to_the_end(server: ServerProcess) -> None:
    """All four games at once (one process each); Qwixx plays two games, Qwinto on JSON."""
    extra = {"qwinto": ["--encoding", "json"], "qwixx": ["--games", "2"]}
    with contextlib.ExitStack() as stack:
        procs = {
            game: stack.enter_context(
                bot(
                    *("--url", server.ws, "--game", game, "--seats", "2", "--turn-window", "5"),
                    *extra.get(game, []),
                )
            )
            for game in ("qwinto", "qwixx", "qwirkle", "yamb")
        }
        for game, proc in procs.items():
            code, out, err = finish(proc)
            assert code == 0, f"{game}: {err}"
            lines = [json.loads(text) for text in out.splitlines()]
            assert len(lines) == (2 if game == "qwixx" else 1), out
            assert len({line["room"] for line in lines}) == len(lines)
            for line in lines:
                check_line(server, line, game, 2)


async def test_bot_takes_the_open_seats_of_an_existing_room(server: ServerProcess) -> None:
    """A room with a house bot in seat 0: `--room` seats one network bot in seat 1; the
    room starts by itself (only its host, the creator, could start it otherwise) and the
    bot plays it out against the house bot."""
    async with Client(server.ws, name="host") as host:
        info = await host.create("qwinto", 2, turn_window=5, public=False, autostart=True)
        assert await host.add_bots(info.room, count=1) == [0]
        command = [sys.executable, "-m", "dicehall.clients.cli", "bot", "--url", server.ws]
        command += ["--game", "qwinto", "--room", info.room]
        code, out, err = await run_async(command, timeout=120)
    assert code == 0, err.decode()
    [line] = [json.loads(text) for text in out.decode().splitlines()]
    assert line["room"] == info.room
    check_line(server, line, "qwinto", 2)
    assert "random-bot-0" in line["scores"]
    assert len(line["players"]) == 1 and "random-bot-0" not in line["players"]


async def test_with_a_key_every_seat_plays_as_that_player(server: ServerProcess) -> None:
    """`--key`: the player an earlier `hello` was given; without it each seat is a new
    player. The JSON line names the players."""
    async with Client(server.ws, name="owner") as owner:
        player = owner.player
    assert player is not None
    command = [
        sys.executable,
        "-m",
        "dicehall.clients.cli",
        "bot",
        "--url",
        server.ws,
        "--game",
        "qwixx",
    ]
    (code, out, err), (plain_code, plain, _) = await asyncio.gather(
        run_async([*command, "--key", player.key], timeout=120), run_async(command, timeout=120)
    )
    assert code == plain_code == 0, err.decode()
    [line] = [json.loads(text) for text in out.decode().splitlines()]
    check_line(server, line, "qwixx", 2)
    assert list(line["players"].values()) == [player.id, player.id]
    assert set(line["players"]) == set(line["scores"])
    [other] = [json.loads(text) for text in plain.decode().splitlines()]
    assert len(set(other["players"].values()) | {player.id}) == 3, "a new player per seat"


def test_a_key_the_server_did_not_sign_exits_nonzero(server: ServerProcess) -> None:
    code, out, err = run_bot(
        *("--url", server.ws, "--game", "qwixx", "--key", "pk1.Zq4mR8tWc2Lx0bNs.forged"),
        timeout=60,
    )
    assert code == 1 and out == ""
    assert "bad-key (2012)" in err and "without a key" in err


def test_unreachable_server_exits_nonzero() -> None:
    url = f"ws://127.0.0.1:{free_port()}/ws"
    code, out, err = run_bot("--url", url, "--game", "qwixx", timeout=60)
    assert code == 1 and out == ""
    assert "could not connect" in err and url in err


def test_protocol_error_exits_nonzero(server: ServerProcess) -> None:
    code, out, err = run_bot("--url", server.ws, "--game", "qwixx", "--room", "nope", timeout=60)
    assert code == 1 and out == ""
    assert "no-such-room (2003)" in err
    code, out, err = run_bot("--url", server.ws, "--game", "chess", timeout=60)
    assert code == 1 and "no-such-game (2001)" in err
