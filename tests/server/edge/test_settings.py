"""server/edge/settings.py: one table behind the flags, the environment and the runbook."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

from dicehall.server.edge.settings import Config, SettingError, add_arguments, markdown_table
from tests.support.cli import dicehall

ROOT = Path(__file__).resolve().parents[3]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    add_arguments(p)
    return p


def test_the_runbook_table_is_the_settings_table() -> None:
    runbook = (ROOT / "docs" / "operations.md").read_text()
    start = runbook.index("<!-- settings table: python -m dicehall.server.edge.settings -->\n")
    end = runbook.index("<!-- end of settings table -->")
    documented = runbook[start:end].split("\n", 1)[1].strip()
    assert documented == markdown_table(), (
        "run `python -m dicehall.server.edge.settings` into the runbook"
    )


def test_every_setting_has_help_and_every_flag_a_variable_but_the_secret_none() -> None:
    for f in dataclasses.fields(Config):
        assert f.metadata["help"].strip(), f.name
        if f.metadata["flag"]:
            assert f.metadata["env"] == "DICEHALL_" + f.name.upper(), f.name
    secret = next(f for f in dataclasses.fields(Config) if f.name == "secret")
    assert secret.metadata["flag"] is None, "a secret on the command line shows in `ps`"


def test_help_names_each_flags_variable_and_default() -> None:
    text = " ".join(parser().format_help().split())
    assert "--lease-ms LEASE_MS Room ownership lease" in text
    assert "[env DICEHALL_LEASE_MS; default 2000]" in text
    assert "[env DICEHALL_REDIS; default unset]" in text


def test_defaults_then_the_environment_then_the_flags() -> None:
    assert Config.load(environ={}) == Config()
    env = {"DICEHALL_PORT": "9000", "DICEHALL_REDIS_CLUSTER": "yes", "DICEHALL_SECRET": "k"}
    config = Config.load(environ=env)
    assert (config.port, config.redis_cluster, config.secret) == (9000, True, b"k")
    args = parser().parse_args(["--port", "9100", "--deflate"])
    config = Config.load(environ=env, args=args)
    assert (config.port, config.deflate, config.redis_cluster) == (9100, True, True)
    assert Config.load(environ={"DICEHALL_REDIS": ""}).redis is None, "empty is unset"


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("DICEHALL_PORT", "eighty", "expected int"),
        ("DICEHALL_DEFLATE", "maybe", "expected 1/true/yes/on or 0/false/no/off"),
    ],
)
def test_a_variable_its_setting_cannot_take_is_named_in_the_error(
    name: str, value: str, expected: str
) -> None:
    with pytest.raises(SettingError, match=f"{name}='{value}': {expected}"):
        Config.load(environ={name: value})


def test_a_variable_whose_flag_is_given_is_not_read() -> None:
    """Kubernetes gives every pod `DICEHALL_PORT=tcp://IP:80` for a Service `dicehall`."""
    env = {"DICEHALL_PORT": "tcp://10.96.0.5:80"}
    with pytest.raises(SettingError):
        Config.load(environ=env)
    assert Config.load(environ=env, args=parser().parse_args(["--port", "8000"])).port == 8000


def test_limits_carry_the_time_outs() -> None:
    limits = Config(hello_timeout_ms=1234, idle_timeout_ms=5678).limits
    assert (limits.hello_timeout_ms, limits.idle_timeout_ms) == (1234, 5678)


REDIS = "redis://127.0.0.1:6379/0"


def test_workers_need_redis_and_ports_of_their_own() -> None:
    assert Config().problem() is None
    assert Config(workers=2, redis=REDIS).problem() is None
    assert Config(workers=2, redis=REDIS, port=0).problem() is None  # (any free ports)
    assert Config(workers=0).problem() == "--workers: expected at least 1, got 0"
    needs = Config(workers=2).problem()
    assert needs is not None and needs.startswith("--workers 2 needs --redis: ")
    one = Config(workers=2, redis=REDIS, public_url="wss://play.example.org/ws").problem()
    assert one == (
        "--public-url: with --workers 2 it must hold {port} or {worker}, so that each worker"
        " advertises an address of its own"
    )
    template = "wss://play.example.org/p/a-{worker}/ws"
    assert Config(workers=2, redis=REDIS, public_url=template).problem() is None
    overlap = Config(workers=3, redis=REDIS, port=8000, worker_ports=7999).problem()
    assert overlap == "--worker-ports: the workers' own ports 7999-8001 include --port 8000"
    beyond = Config(workers=2, redis=REDIS, port=65535).problem()
    assert beyond == "--worker-ports: workers 1-2 would listen on 65536-65537, not 1-65535"


def test_each_worker_listens_on_its_own_port_and_advertises_it() -> None:
    config = Config(workers=3, redis=REDIS, port=8000)
    assert [config.worker_port(i) for i in (1, 2, 3)] == [8001, 8002, 8003]
    assert Config(port=8000, worker_ports=9000).worker_port(2) == 9001
    assert Config(port=0).worker_port(2) == Config(worker_ports=0).worker_port(2) == 0
    assert config.worker_url(2, 8002) == "ws://127.0.0.1:8002/ws"
    assert Config(host="::1").worker_url(1, 8001) == "ws://[::1]:8001/ws"
    assert Config(host="0.0.0.0").worker_url(1, 8001) is None, "no address to advertise"
    by_name = Config(host="0.0.0.0", public_url="wss://play.example.org/p/a-{worker}/ws")
    assert by_name.worker_url(2, 8002) == "wss://play.example.org/p/a-2/ws"
    by_port = Config(public_url="ws://10.0.0.5:{port}/ws")
    assert by_port.worker_url(2, 8002) == "ws://10.0.0.5:8002/ws"
    env = {"DICEHALL_WORKERS": "4", "DICEHALL_WORKER_PORTS": "9100"}
    assert (Config.load(environ=env).workers, Config.load(environ=env).worker_ports) == (4, 9100)


def test_dicehall_serve_refuses_workers_without_redis_in_one_line() -> None:
    done = dicehall("serve", "--port", "1", "--workers", "2")
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("dicehall serve: --workers 2 needs --redis: "), line
