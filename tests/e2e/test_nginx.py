"""deploy/: nginx in front of real processes, and what the manifests promise.

A real nginx (Debian's package, `make nginx`) runs deploy/nginx.conf itself, rendered only
for loopback: its upstream's servers become two `dicehall serve --redis` processes sharing
one real redis-server, its `listen` a free port. Games are played through it by
`dicehall bot` and by the client library, and one process is drained mid-game.

The Dockerfile, compose file and Kubernetes manifests cannot run here (no container
engine), so they are checked for what can go wrong without one: they parse, every path
they copy or mount exists, and they agree with each other and with the code (ports, probe
paths, service names, environment variables). docs/operations.md must name every
environment variable the server reads and every metric it serves.
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

import pytest
import yaml

from clients.botrunner import SeatBot
from clients.client import Client, RoomLost
from protocol import errors as E
from protocol.messages.server import GameOver
from rules.bots import get_bot
from rules.records import replay
from tests.support.redis import running_redis
from tests.support.servers import ROOT, Listener, ServerProcess, free_port, running_server

from .helpers import metrics

DEPLOY = ROOT / "deploy"
NGINX_CONF = DEPLOY / "nginx.conf"
SECRET = secrets.token_hex(32)
"""Every process of a deployment shares it (compose and k8s set DICEHALL_SECRET)."""


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


def upstream_block(conf: str) -> tuple[int, int]:
    """Line span [start, end) of the body of `upstream dicehall { ... }`."""
    lines = conf.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "upstream dicehall {")
    end = next(i for i in range(start, len(lines)) if lines[i].strip() == "}")
    return start + 1, end


SERVER_LINE = re.compile(r"^\s*server\s+([\w.-]+):(\d+)\b[^;]*;\s*$")


def upstream_servers(conf: str) -> list[tuple[str, int]]:
    start, end = upstream_block(conf)
    lines = conf.splitlines()[start:end]
    return [(m[1], int(m[2])) for line in lines if (m := SERVER_LINE.match(line))]


def render_nginx_conf(conf: str, upstreams: list[int], listen: int) -> str:
    """deploy/nginx.conf for loopback: the upstream's servers and the listen port, only."""
    lines = conf.splitlines()
    start, end = upstream_block(conf)
    body = lines[start:end]
    first = next(i for i, line in enumerate(body) if SERVER_LINE.match(line))
    kept = [line for line in body if not SERVER_LINE.match(line)]
    ours = [f"        server 127.0.0.1:{port} max_fails=1 fail_timeout=5s;" for port in upstreams]
    lines[start:end] = kept[:first] + ours + kept[first:]
    text, n = re.subn(
        r"^(\s*)listen 8080;$",
        rf"\1listen 127.0.0.1:{listen};",
        "\n".join(lines) + "\n",
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


@contextlib.contextmanager
def running_nginx(workdir: Path, upstreams: list[int]) -> Iterator[Nginx]:
    """nginx with the rendered deploy/nginx.conf, in the foreground, pid and logs in `workdir`."""
    exe = nginx_binary()
    port = free_port()
    conf = workdir / "nginx.conf"
    conf.write_text(render_nginx_conf(NGINX_CONF.read_text(), upstreams, port))
    base = [exe, "-c", str(conf), "-p", str(workdir)]
    globals_ = f"pid {workdir / 'nginx.pid'};"
    check = subprocess.run(
        [*base, "-t", "-g", globals_], capture_output=True, text=True, timeout=30
    )
    assert check.returncode == 0, f"nginx -t refused deploy/nginx.conf:\n{check.stderr}"
    with (workdir / "stdout.log").open("wb") as out, (workdir / "stderr.log").open("wb") as err:
        proc = subprocess.Popen([*base, "-g", f"daemon off; {globals_}"], stdout=out, stderr=err)
    server = Nginx(port, proc, workdir)

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


@dataclass
class Deployment:
    nginx: Nginx
    servers: list[ServerProcess]
    redis: str


@contextlib.contextmanager
def deployment(workdir: Path, redis_url: str) -> Iterator[Deployment]:
    """Two `dicehall serve --redis` processes behind nginx, as compose runs three."""
    env = {"DICEHALL_SECRET": SECRET}
    with (
        running_server("--redis", redis_url, env=env) as one,
        running_server("--redis", redis_url, env=env) as two,
        running_nginx(workdir, [one.port, two.port]) as nginx,
    ):
        yield Deployment(nginx, [one, two], redis_url)


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with running_redis() as server:
        yield server.url


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Deployment]:
    with deployment(tmp_path_factory.mktemp("nginx"), redis_url) as d:
        yield d


def ws_upstreams(nginx: Nginx) -> list[int]:
    """The upstream port of every WebSocket nginx upgraded (101), from its access log."""
    ports = []
    for line in nginx.access_log():
        if '"GET /ws HTTP/1.1" 101 ' in line:
            found = re.search(r"upstream=127\.0\.0\.1:(\d+)", line)
            assert found, f"access log line without its upstream: {line}"
            ports.append(int(found[1]))
    return ports


def sent(server: ServerProcess) -> float:
    return metrics(server)["dicehall_room_messages_sent_total"]


# --- through nginx ---------------------------------------------------------------------------


def test_a_bot_game_through_nginx_spreads_its_seats_over_both_processes(
    stack: Deployment,
) -> None:
    before_ws = len(ws_upstreams(stack.nginx))
    before = [sent(s) for s in stack.servers]
    bot = ["bot", "--url", stack.nginx.ws, "--game", "qwixx", "--seats", "4"]
    done = subprocess.run(
        [sys.executable, "-m", "clients.cli", *bot],
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
            except E.GameOverError:  # replies may overtake room messages: game_over follows
                break
            if legal.window != turn.window or not legal.actions:
                break
            await client.act(room, policy.decide(legal.view, legal.actions), legal.window)
            answered += 1
    raise AssertionError(f"the stream of seat {seat} ended before game_over")


async def test_a_process_drained_mid_game_hands_its_room_over_behind_nginx(
    tmp_path: Path,
) -> None:
    """SIGTERM on the room's owner: its players are told to go (1001), come back through
    nginx to the other process, which takes the room over; the game ends verified.

    A Redis of its own: any process on the same Redis could take the room over."""
    with running_redis() as own, deployment(tmp_path, own.url) as d:
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

        # Ada created the room, so she sat on its owner: told to go, she came back through
        # nginx to the survivor. Bob sat on the survivor all along (round-robin).
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
    """Every DICEHALL_* variable `dicehall serve` reads (server/settings.py)."""
    return set(re.findall(r"\bDICEHALL_[A-Z_]+\b", (ROOT / "server" / "settings.py").read_text()))


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) of deploy/Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_the_dockerfile_copies_what_exists_and_runs_as_a_drainable_non_root_server() -> None:
    steps = dockerfile()
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


def test_compose_puts_nginx_in_front_of_three_servers_sharing_redis_and_a_secret() -> None:
    (compose,) = load_yaml(DEPLOY / "compose.yaml")
    services = compose["services"]
    assert services["redis"]["image"].startswith("redis:7")
    servers = sorted(name for name in services if name.startswith("dicehall-"))
    assert len(servers) == 3
    # nginx's upstream is exactly these services, on the port the image serves.
    assert sorted(upstream_servers(NGINX_CONF.read_text())) == [(s, 8000) for s in servers]
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
    assert len(secrets_seen) == 1 and "DICEHALL_SECRET" in secrets_seen.pop()

    nginx = services["nginx"]
    mount = next(v for v in nginx["volumes"] if v.endswith(":/etc/nginx/nginx.conf:ro"))
    assert (DEPLOY / mount.split(":")[0]).resolve() == NGINX_CONF
    assert nginx["ports"] == ["8080:8080"]  # deploy/nginx.conf listens on 8080
    assert set(nginx["depends_on"]) == set(servers)


def test_kubernetes_manifests_agree_with_each_other_and_the_image() -> None:
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

    deploy = objects[("Deployment", "dicehall")]
    pods = deploy["spec"]["template"]
    assert deploy["spec"]["selector"]["matchLabels"].items() <= pods["metadata"]["labels"].items()
    (container,) = pods["spec"]["containers"]
    assert container["command"][:2] == ["dicehall", "serve"]
    assert pods["spec"]["securityContext"]["runAsNonRoot"] is True
    (port,) = container["ports"]
    assert port["containerPort"] == 8000

    env = {e["name"]: e for e in container["env"]}
    assert set(env) <= app_env_vars(), "the Deployment sets a variable the server never reads"
    ref = env["DICEHALL_SECRET"]["valueFrom"]["secretKeyRef"]
    assert ref["name"] == "dicehall" and ref["key"] in secret["stringData"]
    redis_port = redis_svc["spec"]["ports"][0]["port"]
    assert env["DICEHALL_REDIS"]["value"] == f"redis://dicehall-redis:{redis_port}/0"

    ready, alive = container["readinessProbe"]["httpGet"], container["livenessProbe"]["httpGet"]
    assert (ready["path"], ready["port"]) == ("/readyz", port["name"])
    assert (alive["path"], alive["port"]) == ("/healthz", port["name"])
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    drain = 5  # server.app.Config.drain_seconds
    grace = pods["spec"]["terminationGracePeriodSeconds"]
    assert grace >= int(pre_stop[1]) + drain + 10, "SIGKILL could cut the drain short"

    service = objects[("Service", "dicehall")]
    assert service["spec"]["selector"].items() <= pods["metadata"]["labels"].items()
    assert service["spec"]["ports"][0]["targetPort"] == port["name"]
    assert service["spec"].get("sessionAffinity", "None") == "None"  # any pod serves any room


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
