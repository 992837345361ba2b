"""The `dicehall` command: one entry point, one subcommand per job.

The CLI is a client of everything, so it lives in clients/; subcommands import what they
need lazily to keep `dicehall --help` fast.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from random import Random
from typing import Any


def _load_json(path: str) -> Any:
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    return json.loads(text)


def _record_in(document: Any) -> Any:
    """The game record in a file `dicehall replay` is given: the record itself, or the
    stored game `GET /api/games/{id}` answers (what the replay page downloads), whose
    `seats` are results and whose record is under `record` (docs/history.md)."""
    if (
        isinstance(document, dict)
        and "format" not in document
        and isinstance(document.get("record"), dict)
    ):
        return document["record"]
    return document


def cmd_games(args: argparse.Namespace) -> int:
    from dicehall.rules import all_games

    if args.json:
        print(json.dumps([g.describe() for g in all_games()], indent=2))
        return 0
    for g in all_games():
        print(f"{g.name:8} {g.title} ({g.min_seats}-{g.max_seats} seats)")
        for o in g.options:
            print(f"    {o.name} = {json.dumps(o.default)}: {o.description}")
        for p, values in g.presets.items():
            print(f"    preset {p}: {json.dumps(dict(values))}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from dicehall.rules import game_names, get_game
    from dicehall.rules.fair import new_seed
    from dicehall.rules.play import play_out, random_chooser
    from dicehall.rules.records import new_record

    names = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay"]
    for name in [args.game] if args.game else game_names():
        game = get_game(name)
        seats = max(game.min_seats, min(args.seats, game.max_seats))
        seed = bytes.fromhex(args.seed) if args.seed else new_seed()
        state = game.new_state(seats, seed=seed, preset=args.preset)
        record = new_record(name, state.options, names[:seats], state)
        play_out(state, random_chooser(Random(seed)), record["log"])
        record["seed"] = seed.hex()
        print(f"== {game.title}: {seats} random seats, {len(record['log'])} log entries")
        for i in range(seats):
            print(state.render(i, names[i]))
            print()
        print("scores:", dict(zip(names, state.scores(), strict=False)))
        if args.record:
            path = Path(args.record.replace("{game}", name))
            path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
            print(f"record written to {path}; check it with: dicehall replay {path}")
        print()
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    """Exit 0 when the record replays, 1 when it does not, 2 when it cannot be read.

    `--json` prints `Replay.to_json()` unchanged, so the shape documented in docs/records.md
    (the points of every log entry included) is the library's and scripts get the same.
    """
    from dicehall.rules import RecordError
    from dicehall.rules.records import replay

    try:
        result = replay(_record_in(_load_json(args.file)))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"dicehall replay: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    except RecordError as exc:
        print(f"dicehall replay: {args.file}: {exc}", file=sys.stderr)
        return 1
    out = result.to_json()
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for text in out["sheets"].values():
        print(text)
        print()
    state = "over" if out["over"] else "not over"
    print(f"{out['game']}: {state}; scores: {json.dumps(out['scores'])}")
    if out["winners"]:
        print("winner(s):", ", ".join(out["winners"]))
    if result.verified:
        print("dice verified: the seed matches the commitment and gives every roll")
    else:
        print("dice not verified: the record carries no seed")
    return 0


def cmd_sheet(args: argparse.Namespace) -> int:
    from dicehall.rules import RulesError, get_game

    try:
        game = get_game(args.game)
        if game.score_sheet is None:
            raise RulesError(f"{game.name} has no paper sheet to score", "no-sheet")
        score, text = game.score_sheet(_load_json(args.file))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"dicehall sheet: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    except RulesError as exc:
        print(f"dicehall sheet: {exc} [{exc.rule}]", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"score": score, "text": text}))
    else:
        print(text)
    return 0


def cmd_bot(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from dicehall.clients.botrunner import BotConfig, run_bots
    from dicehall.protocol.subprotocols import Encoding
    from dicehall.rules import RulesError
    from dicehall.rules.bots import get_bot

    parser: argparse.ArgumentParser = args.parser
    if args.games < 1:
        parser.error("--games must be at least 1")
    if args.seats is not None and not 1 <= args.seats <= 6:
        parser.error("--seats must be 1..6")
    if args.room is not None and args.games != 1:
        parser.error("--room plays that room's one game; leave out --games")
    try:
        get_bot(args.bot, args.game)
    except RulesError as exc:
        parser.error(str(exc))
    logging.basicConfig(level=logging.WARNING, format="dicehall bot: %(message)s")
    cfg = BotConfig(
        urls=args.url,
        game=args.game,
        seats=args.seats,
        room=args.room,
        bot=args.bot,
        games=args.games,
        turn_window=args.turn_window,
        encoding=Encoding(args.encoding),
        key=args.key,
    )

    def emit(line: dict[str, Any]) -> None:
        print(json.dumps(line), flush=True)

    def warn(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    return asyncio.run(run_bots(cfg, emit, warn))


def cmd_arena(args: argparse.Namespace) -> int:
    from dicehall.rules import RulesError, get_game

    from .arena import ArenaConfig, ArenaError, GameResult, default_procs, format_table, run_arena

    parser: argparse.ArgumentParser = args.parser
    names = tuple(n.strip() for n in args.bots.split(",") if n.strip())
    if not names:
        parser.error("--bots needs at least one bot kind")
    if args.games < 1:
        parser.error("--games must be at least 1")
    if args.procs is not None and args.procs < 1:
        parser.error("--procs must be at least 1")
    try:
        game = get_game(args.game)
        seats = args.seats
        if seats is None:
            seats = max(game.min_seats, min(len(names), game.max_seats))
        if args.rated and seats < 2:
            parser.error("--rated: a game of one seat gives no rating")
        cfg = ArenaConfig(
            game=game.name,
            bots=names,
            seats=seats,
            games=args.games,
            seed=args.seed,
            preset=args.preset,
            procs=args.procs or default_procs(),
            records=args.rated,
        )
        played: list[GameResult] = []
        report = run_arena(cfg, keep=played.append if args.rated else None)
    except RulesError as exc:
        parser.error(str(exc))
    except ArenaError as exc:
        print(f"dicehall arena: {exc}", file=sys.stderr)
        return 1
    if args.rated:
        try:
            from dicehall.server.history.arena import rate_offline
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] not in SERVER_MODULES:
                raise  # not a missing extra: a bug
            return missing_extra("dicehall arena --rated", "server", str(exc.name))
        games = [(r.lineup, r.scores, r.record or {}) for r in played]
        try:
            report["ladder"] = asyncio.run(rate_offline(args.db, cfg.game, cfg.preset, games))
        except Exception as exc:  # (the database: its message says what is wrong)
            print(f"dicehall arena: --rated: {exc}", file=sys.stderr)
            return 1
    print(json.dumps(report, indent=2) if args.json else format_table(report))
    return 0


def cmd_loadtest(args: argparse.Namespace) -> int:
    import importlib.util

    from .loadtest import (
        LoadConfig,
        LoadTestError,
        format_table,
        progress_printer,
        run_loadtest,
        write_outputs,
    )

    plot = None if args.no_plot else (args.plot or str(Path(args.out).with_suffix(".png")))
    for module in ["uvloop", "matplotlib"] if plot else ["uvloop"]:
        if importlib.util.find_spec(module) is None:
            hint = "" if module == "uvloop" else " (or pass --no-plot)"
            return missing_extra("dicehall loadtest", "loadtest", module, hint)
    parser: argparse.ArgumentParser = args.parser
    if args.rooms < 1 or args.seats < 1 or args.procs < 1:
        parser.error("--rooms, --seats and --procs must be at least 1")
    if args.duration <= 0 or args.warmup < 0 or args.think < 0:
        parser.error("--duration must be positive; --warmup and --think not negative")
    cfg = LoadConfig(
        urls=args.url,
        rooms=args.rooms,
        seats=args.seats,
        game=args.game,
        duration=args.duration,
        turn_window=args.turn_window,
        procs=args.procs,
        think=args.think,
        policy=args.policy,
        encoding=args.encoding,
        warmup=args.warmup,
        server_pids=args.server_pid or [],
        clock_offset_ms=args.clock_offset_ms,
        follow=not args.no_follow,
    )
    try:
        report = run_loadtest(cfg, progress_printer())
    except LoadTestError as exc:
        print(f"dicehall loadtest: {exc}", file=sys.stderr)
        return 1
    print(format_table(report))
    for path in write_outputs(report, args.out, plot):
        print(f"wrote {path}")
    return 1 if report["error_count"] else 0


def cmd_serve(args: argparse.Namespace) -> int:
    from dicehall.server.edge.settings import Config, SettingError

    try:
        config = Config.load(args=args)
    except SettingError as exc:
        args.parser.error(str(exc))
    try:
        from dicehall.server.edge.main import serve
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in SERVER_MODULES:
            raise  # not a missing extra: a bug
        return missing_extra("dicehall serve", "server", str(exc.name))
    return serve(config)


SERVER_MODULES = frozenset(
    {"starlette", "uvicorn", "uvloop", "httptools", "redis", "hiredis", "prometheus_client"}
    | {"sqlalchemy", "aiosqlite", "asyncpg", "alembic", "openskill"}
)
"""The top-level modules the `server` extra of pyproject.toml brings."""


def missing_extra(command: str, extra: str, module: str, hint: str = "") -> int:
    """One line naming the extra to install, instead of a traceback (exit status 2)."""
    print(
        f"{command} needs the '{extra}' extra (no module named {module!r}):"
        f" pip install 'dicehall[{extra}]'{hint}",
        file=sys.stderr,
    )
    return 2


def cmd_play(args: argparse.Namespace) -> int:
    import asyncio

    from dicehall.protocol.errors import BadKeyError

    from .terminal import play

    try:
        return asyncio.run(
            play(
                args.url or ["ws://127.0.0.1:8000/ws"],
                args.game,
                args.room,
                args.name,
                args.seats,
                args.turn_window,
                args.bots,
                args.key,
            )
        )
    except BadKeyError as exc:
        print(f"dicehall play: --key: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nbye: your seat stays yours; come back with the same command and --room")
        return 0


def display_name(text: str) -> str:
    """`--name`: refused here when the server would refuse it (protocol/names.py)."""
    from dicehall.protocol import names

    problem = names.display_name_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dicehall", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("play", help="play from the terminal against people or house bots")
    s.add_argument("--url", action="append", help="ws://host:port/ws (repeatable)")
    s.add_argument("--game", help="create a room of this game (other seats: house bots)")
    s.add_argument("--room", help="join this room instead")
    s.add_argument("--name", default="player", type=display_name)
    s.add_argument("--seats", type=int, default=2, help="seats of a created room")
    s.add_argument("--turn-window", type=int, help="seconds per turn window (created room)")
    s.add_argument(
        "--bots",
        "--bot",
        dest="bots",
        metavar="KIND",
        help="house bot kind for the other seats (default: strong, the web page's opponent)",
    )
    s.add_argument(
        "--key",
        help="play as the player this key names (default: the one kept for the server in "
        "$XDG_STATE_HOME/dicehall/player-keys.json, a new one the first time)",
    )
    s.set_defaults(func=cmd_play)

    s = sub.add_parser(
        "serve",
        help="run the game server (embedded, no Redis needed)",
        description="Run the game server. Every flag has a DICEHALL_* environment variable"
        " (a flag wins); docs/operations.md has the same table.",
    )
    from dicehall.server.edge.settings import add_arguments

    add_arguments(s)
    s.set_defaults(func=cmd_serve, parser=s)

    s = sub.add_parser(
        "bot",
        help="play games with bots over the network, one connection per seat",
        description="Without --room: create a room, fill its seats with bots (connections "
        "spread round-robin over the URLs), play K games to the end and print one JSON line "
        "per game. Exit status 1 on any protocol error or unverified dice.",
    )
    s.add_argument("--url", action="append", required=True, help="ws://host:port/ws; repeatable")
    s.add_argument("--game", required=True)
    s.add_argument(
        "--seats", type=int, help="bots to seat (default: 2, or every open seat of --room)"
    )
    s.add_argument("--room", help="join this room's open seats instead of creating a room")
    s.add_argument("--bot", default="random", help="bot kind (default: random)")
    s.add_argument("--games", type=int, default=1, help="games to play, one after the other")
    s.add_argument("--turn-window", type=int, help="seconds per turn window of created rooms")
    s.add_argument("--encoding", choices=["msgpack", "json"], default="msgpack")
    s.add_argument(
        "--key",
        help="a player key: every seat plays as that player (default: each seat a new "
        "player; the JSON line names them)",
    )
    s.set_defaults(func=cmd_bot, parser=s)

    s = sub.add_parser(
        "arena",
        help="bots play many games offline and are measured (score, wins, decision time)",
        description="Plays K games through the rules engine in several processes (no "
        "network) and prints per bot: games, mean score with its standard error, win rate "
        "(ties split; none in solitaire) and decision time p50/p99. Seats rotate between "
        "games and every rotation of one round replays the same dice. Deterministic for a "
        "given seed whatever the process count (decision times aside).",
    )
    s.add_argument("--game", required=True)
    s.add_argument("--bots", required=True, help="bot kinds, comma-separated: strong,greedy")
    s.add_argument("--seats", type=int, help="seats per game (default: one per bot)")
    s.add_argument("--games", type=int, default=100, help="games to play (default: 100)")
    s.add_argument("--seed", default="0", help="any string; same seed, same games")
    s.add_argument("--preset", help="a preset of the game's options, e.g. official")
    s.add_argument("--procs", type=int, help="worker processes (default: one per core)")
    s.add_argument("--json", action="store_true")
    s.add_argument(
        "--rated",
        action="store_true",
        help="store the games in the history database and rate the bots on the game's "
        "ladder, as the house bots of the same kinds (house:KIND) are rated on a server",
    )
    s.add_argument(
        "--db",
        metavar="URL",
        help="with --rated: the history database (default: the one `dicehall serve` keeps "
        "by default, sqlite:///$XDG_DATA_HOME/dicehall/history.db)",
    )
    s.set_defaults(func=cmd_arena, parser=s)

    s = sub.add_parser(
        "loadtest",
        help="N rooms x M bot seats over real WebSockets: latency, throughput, server CPU/RSS",
        description="Creates N rooms of M bot seats from P processes, keeps them playing for "
        "S seconds (a new room when a game ends) and reports fan-out latency (server send "
        "to client receipt), turn-window and request latencies, deliveries per second, "
        "errors and disconnects, and the server's CPU and RSS (from /proc for a local "
        "server, else its /metrics). Prints a progress line per second, then a table; "
        "writes a JSON report and a plot. Exit status 1 when any error was seen.",
    )
    s.add_argument(
        "--url",
        action="append",
        required=True,
        help="ws://host:port/ws; repeatable: seat i of room n connects to URL n + i (mod count)",
    )
    s.add_argument("--rooms", type=int, required=True)
    s.add_argument("--seats", type=int, default=4, help="bot seats per room (default: 4)")
    s.add_argument("--game", default="qwixx", help="game of the rooms (default: qwixx)")
    s.add_argument("--duration", type=float, required=True, help="measured seconds")
    s.add_argument("--warmup", type=float, default=3.0, help="unmeasured seconds first (3)")
    s.add_argument(
        "--turn-window", type=int, default=10, help="seconds per turn window of the rooms (10)"
    )
    s.add_argument("--procs", type=int, default=1, help="load-generating processes (1)")
    s.add_argument(
        "--think",
        type=float,
        default=0.75,
        help="each answer waits uniform [0, THINK] s after its window opens (0.75: about "
        "one Qwixx roll per second per room)",
    )
    s.add_argument(
        "--policy",
        choices=["window", "legal", "legal-view", "pass"],  # (loadtest.config.POLICIES)
        default="window",
        help="window: pick at random among the legal actions each window brings (feature "
        "legal_in_window); legal: ask `legal` for the actions alone and pick one at random; "
        "legal-view: the same with the seat's view in each reply; pass: answer pass when "
        "allowed",
    )
    s.add_argument("--encoding", choices=["msgpack", "json"], default="msgpack")
    s.add_argument(
        "--no-follow",
        action="store_true",
        help="keep each seat on its --url even when the room is run by another process "
        "(measures forwarding over Redis; default: seats move to the room's process)",
    )
    s.add_argument("--server-pid", type=int, action="append", help="sample this server process")
    s.add_argument(
        "--clock-offset-ms",
        type=float,
        help="server clock minus ours (default: measured with ping, 0 when within its error)",
    )
    s.add_argument("--out", default="loadtest.json", help="JSON report (loadtest.json)")
    s.add_argument("--plot", help="PNG plot (default: the JSON path with .png)")
    s.add_argument("--no-plot", action="store_true")
    s.set_defaults(func=cmd_loadtest, parser=s)

    s = sub.add_parser("games", help="list the games with their options and presets")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_games)

    s = sub.add_parser("demo", help="play random games offline and print the sheets")
    s.add_argument("game", nargs="?", help="one game (default: all)")
    s.add_argument("--seats", type=int, default=2)
    s.add_argument("--preset")
    s.add_argument("--seed", help="hex seed for a reproducible game")
    s.add_argument("--record", help="write the game record here ({game} is replaced)")
    s.set_defaults(func=cmd_demo)

    s = sub.add_parser("replay", help="replay a game record, verify its dice, print sheets")
    s.add_argument(
        "file", help="record JSON file (or a stored game from /api/games/ID), or - for stdin"
    )
    s.add_argument(
        "--json",
        action="store_true",
        help="print JSON: the scores and sheets, and the points of every log entry "
        "(its shape: docs/records.md)",
    )
    s.set_defaults(func=cmd_replay)

    s = sub.add_parser("sheet", help="score and draw a hand-filled sheet given as JSON")
    s.add_argument("game")
    s.add_argument("file", help="sheet JSON file, or - for stdin")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_sheet)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
