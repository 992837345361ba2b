"""bench/profile_load.py's summary of py-spy's collapsed stacks (the sampling itself runs
against a loaded server: a benchmark, not a test)."""

from __future__ import annotations

from bench.profile_load import frame_name, summarize

LOOP = "main (clients/cli.py:505);run (uvloop/loop.c:10)"
STACKS = f"""\
{LOOP};epoll_pwait (libc.so.6) 50
{LOOP};Peer.room (server/connections/peer.py:97);Outgoing.frame (server/rooms/outgoing.py:80) 30
{LOOP};Peer.room (server/connections/peer.py:98) 20
"""


def test_frames_of_one_function_add_up_whatever_the_line() -> None:
    assert frame_name("Peer.room (server/connections/peer.py:97)") == "Peer.room (peer.py)"
    assert frame_name("epoll_pwait (libc.so.6)") == "epoll_pwait (libc.so.6)"


def test_self_and_inclusive_shares_and_the_idle_wait() -> None:
    summary = summarize(STACKS)
    assert summary["samples"] == 100 and summary["idle_percent"] == 50.0
    own = dict(summary["self"])
    assert own == {"Outgoing.frame (outgoing.py)": 60.0, "Peer.room (peer.py)": 40.0}, "busy"
    inclusive = dict(summary["inclusive"])
    assert inclusive["Peer.room (peer.py)"] == 100.0 and inclusive["main (cli.py)"] == 100.0
