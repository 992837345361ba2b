"""deploy/: nginx in front of real processes, and what the manifests promise.

A real nginx (Debian's package, `make nginx`) runs deploy/nginx.conf itself, rendered only
for loopback: the servers of its upstreams become two `dicehall serve --redis` processes
named as compose names them (dicehall-1, dicehall-2; dicehall-3 runs nowhere) sharing one
real redis-server, its `listen` a free port. Games are played through it by `dicehall bot`
and by the client library, each process's own path (/p/NAME/ws) reaches that process
alone, players whose processes advertise those paths (`--public-url`) follow their room to
its owner so that nothing but the owner's commits crosses Redis, and one process is drained
mid-game.

The Dockerfile, compose file and Kubernetes manifests cannot run here (no container
engine), so they are checked for what can go wrong without one: they parse, every path
they copy or mount exists, and they agree with each other and with the code (ports, probe
paths, service names, environment variables, each process's public path and nginx's route
for it); nginx accepts the Kubernetes nginx configuration (`nginx -t`). docs/operations.md
must name every environment variable the server reads and every metric it serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Subprotocol

from dicehall.clients.botrunner import SeatBot
from dicehall.clients.client import Client, RoomLost
from dicehall.protocol import errors
from dicehall.protocol.messages.server import GameOver
from dicehall.rules.bots import get_bot
from dicehall.rules.records import replay
from tests.support.dockerfile import dockerfile_steps
from tests.support.redis import (
    Player,
    RedisServer,
    check_stream,
    committed_log,
    running_redis,
    seat_players,
)
from tests.support.servers import ROOT, Listener, ServerProcess, free_port, running_server
from tests.support.wait import eventually

from .helpers import metrics

DEPLOY = ROOT / "deploy"
NGINX_CONF = DEPLOY / "nginx.conf"
SECRET = secrets.token_hex(32)
"""Every process of a deployment shares it (compose and k8s set DICEHALL_SECRET)."""
JSON = Subprotocol("dicehall.v1.json")


# --- real processes ---------------------------------------------------------------------------


def nginx_binary() -> str:
    """Debian's nginx; missing is a failure (CI included), never a skip."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        pytest.fail("nginx is missing: run `make nginx` (installs Debian's nginx package)")
    return found


def wait_until(ready: Any, what: str, timeout: float = 20.0) -> None:
    """Poll `ready()` until it is true: a process coming up gives no event to await."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not come up within {timeout:.0f} s")
        time.sleep(0.05)


UPSTREAM = re.compile(r"^\s*upstream\s+([\w.-]+)\s*\{\s*$")
SERVER_LINE = re.compile(r"^(\s*server\s+)([\w.-]+):(\d+)\b([^;]*;\s*)$")


def upstream_blocks(conf: str) -> dict[str, tuple[int, int]]:
    """Line span [start, end) of the body of each `upstream NAME { ... }`, by NAME."""
    lines = conf.splitlines()
    blocks = {}
    for i, line in enumerate(lines):
        if found := UPSTREAM.match(line):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "}")
            blocks[found[1]] = (i + 1, end)
    return blocks


def upstreams(conf: str) -> dict[str, list[tuple[str, int]]]:
    """The servers (host, port) of each upstream group, by the group's name."""
    lines = conf.splitlines()
    return {
        name: [(m[2], int(m[3])) for line in lines[start:end] if (m := SERVER_LINE.match(line))]
        for name, (start, end) in upstream_blocks(conf).items()
    }


def nginx_map(conf: str, source: str, target: str) -> dict[str, str]:
    """The entries of `map $source $target { ... }` (its `default` left out)."""
    lines = conf.splitlines()
    head = f"map ${source} ${target} {{"
    start = next(i for i, line in enumerate(lines) if line.strip() == head)
    entries: dict[str, str] = {}
    for line in lines[start + 1 :]:
        if line.strip() == "}":
            return entries
        key, value = line.strip().removesuffix(";").split()
        if key != "default":
            entries[key] = value
    raise AssertionError(f"`{head}` is not closed")


def process_groups(conf: str) -> dict[str, str]:
    """deploy/nginx.conf's map from the NAME in /p/NAME/... to that process's group."""
    return nginx_map(conf, "dicehall_process", "dicehall_process_group")


def locations(conf: str) -> list[tuple[str, str, list[str]]]:
    """Each `location [MODIFIER] TARGET { ... }` in order: its modifier (`=`, `~` or ``),
    its target, and the directives of its body, nested blocks included."""
    lines = [line.strip() for line in conf.splitlines()]
    found = []
    for i, line in enumerate(lines):
        head = re.fullmatch(r"location (?:(=|~) )?(\S+) \{", line)
        if head is None:
            continue
        depth, body = 1, []
        for inner in lines[i + 1 :]:
            depth += inner.count("{") - inner.count("}")
            if depth == 0:
                break
            body.append(inner)
        found.append((head[1] or "", head[2], body))
    return found


def regex_locations(conf: str) -> list[tuple[re.Pattern[str], list[str]]]:
    """Each `location ~ REGEX { ... }` in order: its pattern (as Python reads it) and its
    body."""
    return [
        (re.compile(target.replace("(?<", "(?P<")), body)
        for modifier, target, body in locations(conf)
        if modifier == "~"
    ]


def websocket_settings(conf: str, path: str) -> list[str]:
    """The proxy settings (but `proxy_pass` and rewrites) of the location that takes the
    WebSocket `path`: the exact location if there is one, else the first regex one."""
    exact = [
        body for modifier, target, body in locations(conf) if (modifier, target) == ("=", path)
    ]
    body = exact[0] if exact else next(b for p, b in regex_locations(conf) if p.match(path))
    return sorted(line for line in body if re.match(r"proxy_(?!pass )", line))


def proxied_to(conf: str, path: str) -> str | None:
    """Where the first regex location matching `path` proxies it (`proxy_pass`, its
    variables filled from the location's captures and the map of deploy/nginx.conf);
    None if no regex location matches, or the one that does answers by itself."""
    found = next(
        ((m, body) for pattern, body in regex_locations(conf) if (m := pattern.match(path))),
        None,
    )
    if found is None:
        return None
    match, body = found
    values: dict[str, str] = dict(match.groupdict())
    if "dicehall_process" in values:
        groups = process_groups(conf)
        values["dicehall_process_group"] = groups.get(values["dicehall_process"], "")
    for line in body:
        empty = re.fullmatch(r'if \(\$(\w+) = ""\) \{', line)
        if empty and not values[empty[1]]:
            return None  # `if ($group = "") { return 404; }`
    target = next((line for line in body if line.startswith("proxy_pass ")), None)
    if target is None:
        return None
    url = target.removeprefix("proxy_pass ").removesuffix(";")
    return re.sub(r"\$(\w+)", lambda var: values[var[1]], url).removeprefix("http://")


def render_nginx_conf(conf: str, processes: dict[str, int], listen: int, closed: int) -> str:
    """deploy/nginx.conf for loopback: in every upstream, the server HOST becomes the port
    of process HOST (`processes`); a HOST that runs nowhere is dropped, or where it is a
    group's only server, becomes the `closed` port; and the listen port. Nothing else."""
    lines = conf.splitlines()
    hosts = {host for servers in upstreams(conf).values() for host, _ in servers}
    assert set(processes) <= hosts, f"deploy/nginx.conf names no {set(processes) - hosts}"
    dropped = set()
    for name, (start, end) in upstream_blocks(conf).items():
        servers = {i: m for i in range(start, end) if (m := SERVER_LINE.match(lines[i]))}
        assert servers, f"upstream {name} has no `server HOST:PORT` line"
        running = any(m[2] in processes for m in servers.values())
        for i, m in servers.items():
            port = processes.get(m[2])
            if port is None and running:
                dropped.add(i)
            else:
                lines[i] = f"{m[1]}127.0.0.1:{closed if port is None else port}{m[4]}"
    text, n = re.subn(
        r"^(\s*)listen 8080;$",
        rf"\1listen 127.0.0.1:{listen};",
        "\n".join(line for i, line in enumerate(lines) if i not in dropped) + "\n",
        flags=re.M,
    )
    assert n == 1, "deploy/nginx.conf must have one `listen 8080;` line"
    return text


@dataclass
class Nginx(Listener):
    proc: subprocess.Popen[bytes]
    workdir: Path

    def access_log(self) -> list[str]:
        return (self.workdir / "stdout.log").read_text().splitlines()

    def process_ws(self, name: str) -> str:
        """The WebSocket URL of process `name` alone, its `--public-url`."""
        return f"ws://127.0.0.1:{self.port}/p/{name}/ws"


def nginx_test(exe: str, conf: Path, workdir: Path, pid: bool = True) -> None:
    """`nginx -t`: nginx itself accepts the configuration (`pid`: its pid file goes in
    `workdir`, for a configuration that does not say where)."""
    globals_ = ["-g", f"pid {workdir / 'nginx.pid'};"] if pid else []
    check = subprocess.run(
        [exe, "-c", str(conf), "-p", str(workdir), "-t", *globals_],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert check.returncode == 0, f"nginx -t refused {conf.name}:\n{check.stderr}"


@contextlib.contextmanager
def running_nginx(workdir: Path, processes: dict[str, int], listen: int) -> Iterator[Nginx]:
    """nginx with deploy/nginx.conf rendered for `processes` (name -> port) and `listen`,
    in the foreground, pid and logs in `workdir`."""
    exe = nginx_binary()
    conf = workdir / "nginx.conf"
    conf.write_text(render_nginx_conf(NGINX_CONF.read_text(), processes, listen, free_port()))
    nginx_test(exe, conf, workdir)
    base = [exe, "-c", str(conf), "-p", str(workdir)]
    globals_ = f"pid {workdir / 'nginx.pid'};"
    with (workdir / "stdout.log").open("wb") as out, (workdir / "stderr.log").open("wb") as err:
        proc = subprocess.Popen([*base, "-g", f"daemon off; {globals_}"], stdout=out, stderr=err)
    server = Nginx(listen, proc, workdir)

    def answers() -> bool:
        assert proc.poll() is None, (workdir / "stderr.log").read_text()
        with contextlib.suppress(OSError):
            return server.get("/healthz")[0] == 200
        return False

    try:
        wait_until(answers, "nginx")
        yield server
    finally:
        proc.send_signal(signal.SIGQUIT)  # graceful: workers finish their requests
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


PROCESSES = ("dicehall-1", "dicehall-2")
"""The processes of the test deployment, named as compose's services (its third,
dicehall-3, is in deploy/nginx.conf but runs nowhere here)."""


@dataclass
class Deployment:
    nginx: Nginx
    servers: list[ServerProcess]
    redis: str

    def name(self, server: ServerProcess) -> str:
        return PROCESSES[self.servers.index(server)]


@contextlib.contextmanager
def deployment(workdir: Path, redis_url: str, advertise: bool = False) -> Iterator[Deployment]:
    """Two `dicehall serve --redis` processes behind nginx, as compose runs three;
    `advertise`: each with `--public-url` its own path on nginx, as compose sets
    DICEHALL_PUBLIC_URL (nginx's port is chosen first: the processes advertise it)."""
    env = {"DICEHALL_SECRET": SECRET}
    listen = free_port()
    with contextlib.ExitStack() as stack:
        servers = []
        for name in PROCESSES:
            public = ("--public-url", f"ws://127.0.0.1:{listen}/p/{name}/ws") if advertise else ()
            servers.append(
                stack.enter_context(running_server("--redis", redis_url, *public, env=env))
            )
        ports = {name: s.port for name, s in zip(PROCESSES, servers, strict=True)}
        nginx = stack.enter_context(running_nginx(workdir, ports, listen))
        yield Deployment(nginx, servers, redis_url)


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with running_redis() as server:
        yield server.url


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Deployment]:
    """Processes that do not advertise their paths: players stay where /ws put them."""
    with deployment(tmp_path_factory.mktemp("nginx"), redis_url) as d:
        yield d


def ws_upstreams(nginx: Nginx, path: str = "/ws") -> list[int]:
    """The upstream port of every WebSocket nginx upgraded (101) at `path`, from its
    access log (a line is written when its connection closes)."""
    ports = []
    for line in nginx.access_log():
        if f'"GET {path} HTTP/1.1" 101 ' in line:
            found = re.search(r"upstream=127\.0\.0\.1:(\d+)", line)
            assert found, f"access log line without its upstream: {line}"
            ports.append(int(found[1]))
    return ports


LOGGED = re.compile(r'"GET (\S+) HTTP/1\.1" (\d{3}) \d+ upstream=(\S+) ')


def logged(nginx: Nginx) -> list[tuple[str, int, str]]:
    """(path, status, upstream) of every GET in nginx's access log; upstream is `-` for a
    request nginx answered itself."""
    out = []
    for line in nginx.access_log():
        if found := LOGGED.search(line):
            out.append((found[1], int(found[2]), found[3]))
    return out


def sent(server: ServerProcess) -> float:
    return metrics(server)["dicehall_room_messages_sent_total"]


def forwarded(server: ServerProcess) -> float:
    return metrics(server)["dicehall_commands_forwarded_total"]


# --- through nginx ---------------------------------------------------------------------------


def test_a_bot_game_through_nginx_spreads_its_seats_over_both_processes(
    stack: Deployment,
) -> None:
    before_ws = len(ws_upstreams(stack.nginx))
    before = [sent(s) for s in stack.servers]
    bot = ["bot", "--url", stack.nginx.ws, "--game", "qwixx", "--seats", "4"]
    done = subprocess.run(
        [sys.executable, "-m", "dicehall.clients.cli", *bot],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["seed_verified"] is True
    assert len(report["scores"]) == 4

    # nginx upgraded one WebSocket per seat, round-robin over both processes (it logs each
    # one when it closes, just after the bot exits)...
    wait_until(lambda: len(ws_upstreams(stack.nginx)) >= before_ws + 4, "the access log", 10)
    upstreams = ws_upstreams(stack.nginx)[before_ws:]
    assert len(upstreams) == 4
    assert sorted(set(upstreams)) == sorted(s.port for s in stack.servers)
    assert upstreams.count(stack.servers[0].port) == 2  # the zone shares the rotation
    # ...and each process wrote room messages to its seats (one of them over Redis).
    after = [sent(s) for s in stack.servers]
    assert all(a > b for a, b in zip(after, before, strict=True)), (before, after)
    # The bot fetched the game record through nginx too.
    assert any(
        f'/api/rooms/{report["room"]}/record HTTP/1.1" 200' in line
        for line in stack.nginx.access_log()
    )


def test_http_passes_through_but_metrics_stay_per_process(stack: Deployment) -> None:
    assert stack.nginx.get("/healthz") == (200, "ok\n")
    status, games = stack.nginx.get("/api/games")
    assert status == 200 and {g["name"] for g in json.loads(games)} >= {"qwixx", "yamb"}
    status, page = stack.nginx.get("/")
    assert status == 200 and "<html" in page.lower()
    assert stack.nginx.get("/metrics")[0] == 404
    assert all(s.get("/metrics")[0] == 200 for s in stack.servers)


async def test_each_process_has_a_path_of_its_own_and_other_names_get_404(
    stack: Deployment,
) -> None:
    nginx = stack.nginx
    since = len(logged(nginx))
    for _ in range(2):  # twice over: a process's path never rotates to another process
        for name in PROCESSES:
            client = await Client(nginx.process_ws(name), name="probe", reconnect=False).connect()
            assert client.welcome is not None  # a dicehall server answered the upgrade
            await client.close()
            status, games = nginx.get(f"/p/{name}/api/games")
            assert status == 200 and "qwixx" in {g["name"] for g in json.loads(games)}

    def all_logged() -> bool:  # (an upgrade is logged at its close; each line on its own)
        lines = logged(nginx)[since:]
        upgrades = sum(1 for r in lines if r[1] == 101)
        return upgrades >= 4 and sum(1 for r in lines if r[0].endswith("/api/games")) >= 4

    wait_until(all_logged, "the access log", 10)
    seen = logged(nginx)[since:]
    for name, server in zip(PROCESSES, stack.servers, strict=True):
        upstream = f"127.0.0.1:{server.port}"
        assert [r for r in seen if r[0] == f"/p/{name}/ws"] == [
            (f"/p/{name}/ws", 101, upstream)
        ] * 2
        api = f"/p/{name}/api/games"
        assert [r for r in seen if r[0] == api] == [(api, 200, upstream)] * 2

    # A name deploy/nginx.conf does not list, and anything under /p/ that is no route:
    # nginx answers 404 itself, no process sees the request.
    since = len(logged(nginx))
    for path in ("/p/nobody/api/games", "/p/dicehall-1/metrics", "/p/dicehall-1/ws/more"):
        assert nginx.get(path)[0] == 404, path
    with pytest.raises(InvalidStatus) as refused:
        async with ws_connect(nginx.process_ws("nobody"), subprotocols=[JSON], open_timeout=10):
            pass
    assert refused.value.response.status_code == 404
    # dicehall-3 is in deploy/nginx.conf, but no process runs it here: its path fails
    # (502) and does not fall back to another process.
    with pytest.raises(InvalidStatus) as refused:
        async with ws_connect(nginx.process_ws("dicehall-3"), subprotocols=[JSON]):
            pass
    assert refused.value.response.status_code == 502
    wait_until(lambda: len(logged(nginx)) >= since + 5, "the access log", 10)
    answered = {path: (status, upstream) for path, status, upstream in logged(nginx)[since:]}
    assert answered["/p/nobody/ws"] == (404, "-")
    assert all(upstream == "-" for status, upstream in answered.values() if status == 404)
    assert answered["/p/dicehall-3/ws"][0] == 502
    assert answered["/p/dicehall-3/ws"][1] not in {f"127.0.0.1:{s.port}" for s in stack.servers}


async def test_players_follow_their_room_through_nginx_to_the_process_that_runs_it(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """Processes that advertise their own paths on nginx (`--public-url`, as compose sets
    DICEHALL_PUBLIC_URL): every seat and watcher comes in through the round-robin /ws, is
    told where the room is run, and moves to /p/OWNER/ws; nginx takes each of them to the
    owner, after which nothing of the game crosses Redis but the owner's commits."""
    db = redis_server.fresh_db()
    with deployment(tmp_path, redis_server.url_db(db), advertise=True) as d:
        room, players = await seat_players(lambda i: [d.nginx.ws], "qwixx", 3)
        watcher = Player([d.nginx.ws], "watcher", "qwixx")
        everyone = [*players, watcher]
        try:
            await watcher.connect()
            await watcher.join(room)
            owner = next(s for s in d.servers if metrics(s)["dicehall_rooms"] == 1)
            other = next(s for s in d.servers if s is not owner)
            home = d.nginx.process_ws(d.name(owner))
            await eventually(
                lambda: all(p.client.url == home and p.client.connected for p in everyone),
                f"every seat and the watcher on {home}",
            )
            # (the creator moved on `create`, the others on joining or watching)
            assert [p.client.moves for p in everyone] == [1] * len(everyone)
            await eventually(
                lambda: (
                    metrics(other)["dicehall_connections"] == 0
                    and metrics(owner)["dicehall_connections"] == len(everyone)
                ),
                "every connection on the owner",
            )

            before = [forwarded(s) for s in d.servers]
            await players[0].client.start(room)
            overs = await asyncio.gather(*(p.finish() for p in everyone))
            assert len({(o.seed, str(o.scores)) for o in overs}) == 1
            assert [forwarded(s) for s in d.servers] == before, "a request crossed Redis"
            # Nothing lost or repeated across the moves: each stream is the committed log.
            log = committed_log(redis_server.client(db), room)
            ends = {check_stream(p, log) for p in players}
            ends.add(check_stream(watcher, log, spectator=True))
            assert len(ends) == 1
            assert all(p.client.reconnects == 0 for p in everyone)  # a move is no reconnect
        finally:
            await asyncio.gather(*(p.close() for p in everyone), return_exceptions=True)

        # nginx's log: the four came in round-robin over both processes (so some began on
        # the process that does not run the room), then each upgraded /p/OWNER/ws, which
        # nginx took to the owner every time; no other process's path was asked for.
        wait_until(lambda: len([r for r in logged(d.nginx) if r[1] == 101]) >= 8, "the log", 10)
        upgrades = [(path, up) for path, status, up in logged(d.nginx) if status == 101]
        entered = [up for path, up in upgrades if path == "/ws"]
        assert len(entered) == len(everyone)
        assert set(entered) == {f"127.0.0.1:{s.port}" for s in d.servers}
        moved = [(path, up) for path, up in upgrades if path != "/ws"]
        assert moved == [(urlsplit(home).path, f"127.0.0.1:{owner.port}")] * len(everyone)


async def play_seat(
    client: Client,
    room: str,
    seat: int,
    pause_after: int | None = None,
    paused: asyncio.Event | None = None,
    go_on: asyncio.Event | None = None,
) -> GameOver:
    """A random bot for `seat`; after `pause_after` answers it sets `paused` and keeps the
    next window it is named in waiting for its answer until `go_on` is set."""
    policy = get_bot("random", "qwixx")
    answered = 0
    async for message in client.messages():
        if isinstance(message, RoomLost):
            raise AssertionError(f"seat {seat} lost room {room}: {message.reason}")
        if message.room != room:
            continue
        if isinstance(message, GameOver):
            return message
        while (turn := client.turn(room)) is not None and any(a.seat == seat for a in turn.actors):
            if answered == pause_after and paused is not None and go_on is not None:
                paused.set()
                await go_on.wait()
                pause_after = None
            try:
                legal = await client.legal(room)
            except errors.GameOverError:  # replies may overtake room messages: game_over follows
                break
            if legal.window != turn.window or not legal.actions:
                break
            await client.act(room, policy.decide(legal.view, legal.actions), legal.window)
            answered += 1
    raise AssertionError(f"the stream of seat {seat} ended before game_over")


@pytest.mark.parametrize("advertise", [False, True], ids=["forwarding", "following"])
async def test_a_process_drained_mid_game_hands_its_room_over_behind_nginx(
    tmp_path: Path, advertise: bool
) -> None:
    """SIGTERM on the room's owner: its players are told to go (1001), come back through
    nginx to the other process, which takes the room over; the game ends verified.
    `following`: the processes advertise their paths, so both players sat on the owner
    through /p/OWNER/ws; that path fails once its process is gone, and they come back
    through /ws.

    A Redis of its own: any process on the same Redis could take the room over."""
    with running_redis() as own, deployment(tmp_path, own.url, advertise) as d:
        ada = await Client(d.nginx.ws, name="Ada").connect()
        bob = await Client(d.nginx.ws, name="Bob").connect()
        try:
            info = await ada.create("qwixx", 2, public=False, turn_window=30)
            room = info.room
            await ada.join(room, 0)
            seat_bot = SeatBot(bob, "random", "qwixx")
            await seat_bot.join(room, 1)
            owner = next(s for s in d.servers if metrics(s)["dicehall_rooms"] == 1)
            other = next(s for s in d.servers if s is not owner)
            assert metrics(other)["dicehall_rooms"] == 0
            if advertise:  # both followed the room to its owner's own path
                home = d.nginx.process_ws(d.name(owner))
                await eventually(
                    lambda: ada.url == bob.url == home and ada.connected and bob.connected,
                    "both players on the owner's path",
                )

            paused, go_on = asyncio.Event(), asyncio.Event()
            ada_plays = asyncio.create_task(play_seat(ada, room, 0, 6, paused, go_on))
            bob_plays = asyncio.create_task(seat_bot.run())
            await ada.start(room)
            await asyncio.wait_for(paused.wait(), 30)

            assert await asyncio.to_thread(owner.terminate) == 0  # drained cleanly
            go_on.set()
            overs = await asyncio.wait_for(asyncio.gather(ada_plays, bob_plays), 90)
        finally:
            await asyncio.gather(ada.close(), bob.close())

        if advertise:
            # Both had moved to the owner's own path; told to go, each tried it again
            # first (nginx: 502, its process is gone), then came back through /ws.
            assert (ada.reconnects, bob.reconnects) == (1, 1)
            gone = f"/p/{d.name(owner)}/ws"
            assert (gone, 502, f"127.0.0.1:{owner.port}") in logged(d.nginx)
        else:
            # Ada created the room, so she sat on its owner: told to go, she came back
            # through nginx to the survivor. Bob sat on the survivor all along (round-robin).
            assert (ada.reconnects, bob.reconnects) == (1, 0)
        assert metrics(other)["dicehall_rooms"] == 1  # the survivor holds the room now
        over = overs[0]
        assert overs[1].seed == over.seed and overs[1].scores == over.scores
        status, body = d.nginx.get(f"/api/rooms/{room}/record")
        assert status == 200
        result = replay(json.loads(body))
        assert result.verified is True
        assert result.state.scores() == over.scores


# --- what cannot run here: it must at least hold together -------------------------------------


def load_yaml(path: Path) -> list[dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    assert docs, f"{path} is empty"
    return docs


def app_env_vars() -> set[str]:
    """Every DICEHALL_* variable `dicehall serve` reads (server/edge/settings.py)."""
    return set(
        re.findall(r"\bDICEHALL_[A-Z_]+\b", (ROOT / "server" / "edge" / "settings.py").read_text())
    )


def test_the_dockerfile_copies_what_exists_and_runs_as_a_drainable_non_root_server() -> None:
    steps = dockerfile_steps()
    copied: set[str] = set()
    for word, args in steps:
        if word == "COPY" and not args.startswith("--from"):
            *sources, _dest = args.split()
            for source in sources:
                assert (ROOT / source).exists(), f"COPY {source}: no such path in the repo"
                copied.add(source)
    # Every package pyproject installs, and what `pip install` needs, is in the image.
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "bench"}
    assert packages | {"pyproject.toml", "README.md"} <= copied
    ignored = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    assert not copied & set(ignored), "the dockerignore drops a path the image copies"

    final = steps[max(i for i, (w, _) in enumerate(steps) if w == "FROM") :]
    instr = {w: a for w, a in final}
    assert steps[0] == ("FROM", "python:3.11-slim AS build")
    assert instr["USER"].split(":")[0] not in ("", "0", "root")
    assert instr["STOPSIGNAL"] == "SIGTERM"
    assert "/healthz" in instr["HEALTHCHECK"] and ":8000/" in instr["HEALTHCHECK"]
    assert instr["EXPOSE"] == "8000"
    assert json.loads(instr["CMD"]) == ["dicehall", "serve", "--host", "0.0.0.0", "--port", "8000"]


def test_compose_puts_nginx_in_front_of_three_servers_each_with_a_path_of_its_own() -> None:
    text = (DEPLOY / "compose.yaml").read_text()
    (compose,) = load_yaml(DEPLOY / "compose.yaml")
    services = compose["services"]
    assert services["redis"]["image"].startswith("redis:7")
    servers = sorted(name for name in services if name.startswith("dicehall-"))
    assert len(servers) == 3
    conf = NGINX_CONF.read_text()
    groups = upstreams(conf)
    # nginx's round-robin is exactly these services, on the port the image serves...
    assert sorted(groups["dicehall"]) == [(s, 8000) for s in servers]
    # ...and each has a group of its own, named by the map, and no group is left over.
    routes = process_groups(conf)
    assert sorted(routes) == servers
    assert set(groups) == {"dicehall", *routes.values()}
    nginx = services["nginx"]
    assert nginx["ports"] == ["8080:8080"]  # deploy/nginx.conf listens on 8080
    secrets_seen = set()
    for name in servers:
        svc = services[name]
        build = svc["build"]
        assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == (
            DEPLOY / "Dockerfile"
        )
        env = svc["environment"]
        assert set(env) <= app_env_vars(), f"{name} sets a variable the server never reads"
        assert env["DICEHALL_REDIS"] == "redis://redis:6379/0"
        secrets_seen.add(env["DICEHALL_SECRET"])
        assert svc["depends_on"]["redis"]["condition"] == "service_healthy"
        # Its public URL is nginx's published port and a path nginx sends to it alone.
        public = urlsplit(env["DICEHALL_PUBLIC_URL"])
        assert (public.scheme, public.netloc) == ("ws", "localhost:8080")
        assert public.path == f"/p/{name}/ws"
        group = proxied_to(conf, public.path)
        assert group is not None and groups[group] == [(name, 8000)], (name, group)
    assert len(secrets_seen) == 1 and "DICEHALL_SECRET" in secrets_seen.pop()
    assert proxied_to(conf, "/p/redis/ws") is None  # no other service has a path
    # A process's own path is a WebSocket like /ws: no buffering, hour-long timeouts.
    assert "proxy_read_timeout 1h;" in websocket_settings(conf, "/ws")
    for name in servers:
        assert websocket_settings(conf, f"/p/{name}/ws") == websocket_settings(conf, "/ws")
    # The shared settings are written once (an anchor), not once per server.
    for shared in ("DICEHALL_REDIS", "DICEHALL_SECRET", "build", "stop_grace_period"):
        assert len(re.findall(rf"^\s*{shared}:", text, re.M)) == 1, shared

    mount = next(v for v in nginx["volumes"] if v.endswith(":/etc/nginx/nginx.conf:ro"))
    assert (DEPLOY / mount.split(":")[0]).resolve() == NGINX_CONF
    assert set(nginx["depends_on"]) == set(servers)


def render_k8s_nginx_conf(conf: str, workdir: Path) -> str:
    """The Kubernetes nginx configuration, made checkable here: the cluster's names (its
    DNS server, the Service) become loopback addresses and /tmp the work directory."""
    text = render_nginx_conf(conf, {"dicehall": free_port()}, free_port(), free_port())
    text, n = re.subn(r"^(\s*resolver )\S+", r"\g<1>127.0.0.1", text, flags=re.M)
    assert n == 1
    return text.replace(" /tmp/", f" {workdir}/")


def test_kubernetes_manifests_agree_with_each_other_and_the_image(tmp_path: Path) -> None:
    k8s = DEPLOY / "k8s"
    (kustomization,) = load_yaml(k8s / "kustomization.yaml")
    files = sorted(p.name for p in k8s.glob("*.yaml") if p.name != "kustomization.yaml")
    assert sorted(kustomization["resources"]) == files
    objects = {(d["kind"], d["metadata"]["name"]): d for f in files for d in load_yaml(k8s / f)}

    secret = objects[("Secret", "dicehall")]
    redis_svc = objects[("Service", "dicehall-redis")]
    redis_pods = objects[("Deployment", "dicehall-redis")]["spec"]["template"]
    assert redis_svc["spec"]["selector"].items() <= redis_pods["metadata"]["labels"].items()
    (redis_container,) = redis_pods["spec"]["containers"]
    assert redis_container["image"].startswith("redis:7")

    # The game servers: a StatefulSet (a stable name per pod), no Deployment.
    assert ("Deployment", "dicehall") not in objects
    sts = objects[("StatefulSet", "dicehall")]
    pods = sts["spec"]["template"]
    labels = pods["metadata"]["labels"]
    assert sts["spec"]["selector"]["matchLabels"].items() <= labels.items()
    (container,) = pods["spec"]["containers"]
    assert container["command"][:2] == ["dicehall", "serve"]
    assert pods["spec"]["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    (port,) = container["ports"]
    assert port["containerPort"] == 8000
    # Without this, the Service `dicehall` puts DICEHALL_PORT=tcp://IP:80 in every pod's
    # environment, which `dicehall serve` refuses (DICEHALL_PORT is its port).
    assert pods["spec"]["enableServiceLinks"] is False

    env_list = container["env"]
    env = {e["name"]: e for e in env_list}
    ours = {name for name in env if name.startswith("DICEHALL_")}
    assert ours <= app_env_vars(), "the StatefulSet sets a variable the server never reads"
    # Any other variable only feeds $(NAME) into a later DICEHALL_* value.
    order = [e["name"] for e in env_list]
    for helper in set(env) - ours:
        users = [e["name"] for e in env_list if f"$({helper})" in e.get("value", "")]
        assert users and all(order.index(u) > order.index(helper) for u in users), helper
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    public = env["DICEHALL_PUBLIC_URL"]["value"]
    ref = env["DICEHALL_SECRET"]["valueFrom"]["secretKeyRef"]
    assert ref["name"] == "dicehall" and ref["key"] in secret["stringData"]
    redis_port = redis_svc["spec"]["ports"][0]["port"]
    assert env["DICEHALL_REDIS"]["value"] == f"redis://dicehall-redis:{redis_port}/0"

    ready, alive = container["readinessProbe"]["httpGet"], container["livenessProbe"]["httpGet"]
    assert (ready["path"], ready["port"]) == ("/readyz", port["name"])
    assert (alive["path"], alive["port"]) == ("/healthz", port["name"])
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    drain = 5  # server.settings.Config.drain_seconds
    grace = pods["spec"]["terminationGracePeriodSeconds"]
    assert grace >= int(pre_stop[1]) + drain + 10, "SIGKILL could cut the drain short"

    service = objects[("Service", "dicehall")]
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == port["name"]
    assert service["spec"].get("clusterIP") != "None"  # it balances
    assert service["spec"].get("sessionAffinity", "None") == "None"  # any pod serves any room
    headless = objects[("Service", sts["spec"]["serviceName"])]
    assert headless["spec"]["clusterIP"] == "None"  # a DNS name per pod, no balancing
    assert headless["spec"]["selector"].items() <= labels.items()
    (pod_port,) = headless["spec"]["ports"]
    assert (pod_port["port"], pod_port["targetPort"]) == (port["containerPort"], port["name"])
    budget = objects[("PodDisruptionBudget", "dicehall")]
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert budget["spec"]["minAvailable"] < sts["spec"]["replicas"]

    # nginx: its configuration is a template the image renders into the namespace.
    front = objects[("Deployment", "dicehall-nginx")]
    front_pods = front["spec"]["template"]
    assert (
        front["spec"]["selector"]["matchLabels"].items() <= front_pods["metadata"]["labels"].items()
    )
    (nginx,) = front_pods["spec"]["containers"]
    assert nginx["image"].startswith("nginx:")
    assert front_pods["spec"]["securityContext"]["runAsNonRoot"] is True
    assert nginx["securityContext"]["readOnlyRootFilesystem"] is True
    nginx_env = {e["name"]: e for e in nginx["env"]}
    assert nginx_env["POD_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == (
        "metadata.namespace"
    )
    assert nginx_env["NGINX_ENVSUBST_FILTER"]["value"] == "POD_NAMESPACE"
    rendered = nginx_env["NGINX_ENVSUBST_OUTPUT_DIR"]["value"]
    mounts = {m["mountPath"]: m["name"] for m in nginx["volumeMounts"]}
    volumes = {v["name"]: v for v in front_pods["spec"]["volumes"]}
    config_map = objects[
        ("ConfigMap", volumes[mounts["/etc/nginx/templates"]]["configMap"]["name"])
    ]
    (key,) = config_map["data"]
    assert key.endswith(".template")
    assert nginx["args"][:3] == ["nginx", "-c", f"{rendered}/{key.removesuffix('.template')}"]
    for writable in (rendered, "/tmp"):  # everything nginx writes, on a read-only root
        assert "emptyDir" in volumes[mounts[writable]], writable
    template = config_map["data"][key]
    assert set(re.findall(r"\$\{(\w+)\}", template)) == {"POD_NAMESPACE"}
    conf = template.replace("${POD_NAMESPACE}", "games")
    for written in re.findall(r"^\s*(?:pid|\w+_temp_path) (\S+);", conf, re.M):
        assert written.startswith("/tmp/"), written
    assert re.search(r"^\s*resolver kube-dns\.kube-system\.svc\.cluster\.local\b", conf, re.M)

    # /ws and the rest: the balanced Service. /p/POD/...: pod POD alone, by its DNS name
    # under the headless Service; the path of every pod's public URL is such a route.
    assert upstreams(conf)["dicehall"] == [("dicehall", service["spec"]["ports"][0]["port"])]
    for i in range(sts["spec"]["replicas"]):
        pod = f"dicehall-{i}"
        url = urlsplit(public.replace("$(POD_NAME)", pod))
        assert url.scheme in ("ws", "wss") and url.path == f"/p/{pod}/ws"
        dns = f"{pod}.{headless['metadata']['name']}.games.svc.cluster.local"
        assert proxied_to(conf, url.path) == f"{dns}:{port['containerPort']}"
        assert proxied_to(conf, f"/p/{pod}/api/rooms") == f"{dns}:{port['containerPort']}"
        assert websocket_settings(conf, url.path) == websocket_settings(conf, "/ws")
    for elsewhere in ("/p/dicehall-redis/ws", "/p/kubernetes.default/ws", "/p/dicehall-0x/ws"):
        assert proxied_to(conf, elsewhere) is None, elsewhere
    (nginx_port,) = nginx["ports"]
    assert re.search(rf"^\s*listen {nginx_port['containerPort']};$", conf, re.M)
    front_svc = objects[("Service", "dicehall-nginx")]
    assert front_svc["spec"]["selector"].items() <= front_pods["metadata"]["labels"].items()
    assert front_svc["spec"]["ports"][0]["targetPort"] == nginx_port["name"]

    # And nginx itself accepts it (its cluster names made loopback addresses).
    checked = tmp_path / "k8s-nginx.conf"
    checked.write_text(render_k8s_nginx_conf(conf, tmp_path))
    nginx_test(nginx_binary(), checked, tmp_path, pid=False)


def test_the_runbook_names_every_variable_and_metric(stack: Deployment) -> None:
    runbook = (ROOT / "docs" / "operations.md").read_text()
    missing_vars = sorted(v for v in app_env_vars() if f"`{v}`" not in runbook)
    assert not missing_vars, f"docs/operations.md does not document {missing_vars}"
    status, text = stack.servers[0].get("/metrics")
    assert status == 200
    served = re.findall(r"^# HELP (\S+) ", text, re.M)
    assert len(served) >= 10
    missing = sorted(m for m in served if f"`{m}`" not in runbook)
    assert not missing, f"docs/operations.md does not document {missing}"
