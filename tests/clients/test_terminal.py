"""`dicehall play` driven through a pseudo-terminal, as a person would, for a whole game."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support.proxy import faulty_proxy
from tests.support.servers import ROOT, ServerProcess


class Terminal:
    """A child process on a pty: read what it shows, type into it."""

    def __init__(self, *args: str, state: Path | None = None) -> None:
        """`state`: the user's state directory (seat tokens); a fresh one if not given."""
        self.master, slave = pty.openpty()
        self.state = state or Path(tempfile.mkdtemp(prefix="dicehall-state-"))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "clients.cli", *args],
            cwd=ROOT,
            env={**os.environ, "XDG_STATE_HOME": str(self.state)},
            stdin=slave,
            stdout=slave,
            stderr=slave,
            close_fds=True,
        )
        os.close(slave)
        self.screen = ""
        self.transcript = ""

    def read_until(self, pattern: str, timeout: float) -> str:
        """Everything up to and including the first match of `pattern` not yet consumed."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            match = regex.search(self.screen)
            if match:
                seen, self.screen = self.screen[: match.end()], self.screen[match.end() :]
                self.transcript += seen
                return seen
            left = deadline - time.monotonic()
            assert left > 0, (
                f"no {pattern!r} within {timeout}s; screen ends:\n{self.screen[-2000:]}"
            )
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(self.master, 65536).decode(errors="replace")
                except OSError:
                    chunk = ""
                assert chunk or self.proc.poll() is None, f"exited; screen:\n{self.screen[-2000:]}"
                self.screen += chunk.replace("\r\n", "\n")

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        os.close(self.master)


def test_a_whole_qwinto_game_at_the_terminal(server: ServerProcess) -> None:
    term = Terminal("play", "--url", server.ws, "--game", "qwinto", "--name", "Ann")
    try:
        first = term.read_until(r"your move \(help for help\): ", 30)
        assert "Player name: Ann" in first and "Red          |" in first
        assert re.search(r"\[\d+s\] your move", first), "the countdown is shown"
        term.type("help")
        assert "Type the number of an action" in term.read_until(r"your move", 10)
        term.type("enter purple 99")
        assert "not an action here" in term.read_until(r"your move", 10)
        term.type("1")
        moves = 1
        while True:
            seen = term.read_until(r"your move \(help for help\): |Game record: .*\n", 60)
            if "Game record:" in seen:
                break
            term.type("1")
            moves += 1
            assert moves < 500
        assert "* game over:" in seen
        assert "the dice check out" in seen
        assert re.search(r"Player name: Ann +Points: -?\d+", seen)
        assert term.proc.wait(15) == 0
    finally:
        term.close()


def test_the_game_goes_on_after_the_network_drops(server: ServerProcess) -> None:
    with faulty_proxy(server.port) as proxy:
        term = Terminal("play", "--url", proxy.url, "--game", "qwixx", "--name", "Cy")
        try:
            term.read_until(r"your move \(help for help\): ", 30)
            term.type("1")
            moves, cut = 1, False
            while True:
                seen = term.read_until(r"your move \(help for help\): |Game record: .*\n", 60)
                if "Game record:" in seen:
                    break
                if moves == 3 and not cut:
                    proxy.cut()  # the player is mid-game, prompt on screen, when the line drops
                    cut = True
                term.type("1")
                moves += 1
                assert moves < 500
            assert proxy.cuts == 1
            assert "reconnected to" in term.transcript
            assert "* game over:" in seen and "the dice check out" in seen
            assert term.proc.wait(15) == 0
        finally:
            term.close()


def test_quit_leaves_cleanly_and_keeps_the_seat(server: ServerProcess) -> None:
    """The seat token is saved in the user's state directory: the same command with --room
    takes the seat back in the started game and plays on."""
    host = Terminal("play", "--url", server.ws, "--game", "yamb", "--seats", "1", "--name", "Bo")
    try:
        shared = host.read_until(r"your move", 30)
        room = re.search(r"\* room (\S+): share it", shared)
        assert room is not None
        host.type("quit")
        host.read_until(r"bye: your seat stays yours", 10)
        assert host.proc.wait(10) == 0
    finally:
        host.close()
    saved = (host.state / "dicehall" / "seats.json").stat()
    assert saved.st_mode & 0o077 == 0, "only the user may read seat tokens"
    back = Terminal("play", "--url", server.ws, "--room", room[1], "--name", "Bo", state=host.state)
    try:
        again = back.read_until(r"your move", 30)
        assert f"took your seat back in room {room[1]}" in again
        back.type("quit")
        back.read_until(r"bye: your seat stays yours", 10)
        assert back.proc.wait(10) == 0
    finally:
        back.close()
