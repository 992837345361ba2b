"""`dicehall play` driven through a pseudo-terminal, as a person would, against a real server.

Every wait is for something on the screen, with a deadline; nothing here sleeps or times
the program.
"""

from __future__ import annotations

import asyncio
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dicehall.clients.client import Client
from tests.support.proxy import faulty_proxy
from tests.support.servers import ROOT, ServerProcess

PROMPT = r"\[(\d+)s\] your move \(help for help\): "
FRESH = r"\n +\d+\. [^\n]*\n(?:[^\n]*\n)*?[^\n]*" + PROMPT
"""A new prompt: the moves listed, then the prompt (a redraw lists nothing)."""
MOVE = re.compile(r"^ +(\d+)\. (.+?)(?: +\([^()\n]*\))?$", re.MULTILINE)
END = r"Game record: .*\n"


class Terminal:
    """A child process on a pty: read what it shows, type into it."""

    def __init__(self, *args: str, state: Path | None = None) -> None:
        """`state`: the user's state directory (seat tokens); a fresh one if not given."""
        self.master, slave = pty.openpty()
        self.state = state or Path(tempfile.mkdtemp(prefix="dicehall-state-"))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dicehall.clients.cli", *args],
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

    def prompt(self, timeout: float = 30) -> str:
        """Up to the next new prompt (its moves listed)."""
        return self.read_until(FRESH, timeout)

    def moves(self, timeout: float = 30) -> tuple[str, dict[str, int]]:
        """The next new prompt and every move it offers (all pages) by text -> number."""
        seen = page = self.prompt(timeout)
        while re.search(r"more: type `more`\n[^\n]*" + PROMPT + "$", page):
            self.type("more")
            page = self.prompt(10)
            seen += page
        return seen, {text: int(n) for n, text in MOVE.findall(seen)}

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def keys(self, text: str) -> None:
        """Typed without Enter."""
        os.write(self.master, text.encode())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        os.close(self.master)


def first_move(seen: str) -> str:
    """The number of the first move listed in `seen`."""
    match = MOVE.search(seen)
    assert match is not None, seen[-2000:]
    return match[1]


def play_to_the_end(term: Terminal, seen: str, timeout: float = 60) -> str:
    """Type the first move listed at every prompt until the game record shows."""
    for _ in range(500):
        term.type(first_move(seen))
        seen = term.read_until(f"{FRESH}|{END}", timeout)
        if re.search(END, seen):
            return seen
    raise AssertionError("the game did not end within 500 moves")


def test_a_whole_qwinto_game_at_the_terminal(server: ServerProcess) -> None:
    term = Terminal("play", "--url", server.ws, "--game", "qwinto", "--name", "Ann")
    try:
        first = term.prompt()
        assert "Player name: Ann" in first and "Red          |" in first
        assert re.search(PROMPT, first), "the countdown is shown"
        term.type("help")
        assert "Type the number of a move" in term.read_until(
            r"(?s)Type the number.*?" + PROMPT, 10
        )
        term.type("enter purple 99")
        assert "not a move here" in term.read_until(r"not a move here.*\n", 10)
        seen = play_to_the_end(term, first)
        assert "* game over:" in seen
        assert "the dice check out" in seen
        assert re.search(r"Player name: Ann +Points: -?\d+", seen)
        assert "Legend: % edges a bonus box" in seen.split("* game over:")[1]
        assert term.proc.wait(15) == 0
    finally:
        term.close()


def test_the_game_goes_on_after_the_network_drops(server: ServerProcess) -> None:
    with faulty_proxy(server.port) as proxy:
        term = Terminal("play", "--url", proxy.url, "--game", "qwixx", "--name", "Cy")
        try:
            seen = term.prompt()
            for moves in range(500):
                if moves == 3:
                    proxy.cut()  # the player is mid-game, prompt on screen, when the line drops
                term.type(first_move(seen))
                seen = term.read_until(f"{FRESH}|{END}", 60)
                if re.search(END, seen):
                    break
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
        shared = host.prompt()
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
        again = back.prompt()
        assert f"took your seat back in room {room[1]}" in again
        back.type("quit")
        back.read_until(r"bye: your seat stays yours", 10)
        assert back.proc.wait(10) == 0
    finally:
        back.close()


def test_room_events_print_above_the_waiting_prompt(server: ServerProcess) -> None:
    """The player types nothing but two letters: the windows close by their deadlines, the
    rules play for the player, the house bot moves; all of it prints while the prompt
    waits, each time followed by the prompt again with what was typed so far."""
    term = Terminal(
        "play", "--url", server.ws, "--game", "qwinto", "--name", "Ann", "--turn-window", "3"
    )
    try:
        term.prompt()
        term.keys("he")
        term.read_until(r"\x1b\[K\* [^\n]+\n" + PROMPT + "he", 30)
        term.read_until(r"\* Ann ran out of time: the rules played roll red yellow blue", 30)
        term.read_until(r"\* strong-bot-\d+: (enter \w+ \d|pass)", 30)  # its answer
        term.read_until(r"\* strong-bot-\d+: roll [a-z ]+\n", 60)  # its own turn
    finally:
        term.close()


async def spectator_says(url: str, room: str, text: str) -> None:
    async with Client(url, name="Tess") as tess:
        await tess.spectate(room)
        await tess.chat(room, text)


def test_chat_prints_while_the_prompt_waits_and_the_player_can_chat(
    server: ServerProcess,
) -> None:
    term = Terminal("play", "--url", server.ws, "--game", "yamb", "--seats", "1", "--name", "Ann")
    try:
        first = term.prompt()
        room = re.search(r"\* room (\S+): share it", first)
        assert room is not None
        term.keys("ro")
        asyncio.run(spectator_says(server.ws, room[1], "good luck"))
        term.read_until(r"<Tess> good luck\n" + PROMPT + "ro", 10)
        term.keys("\x15")  # ctrl-U: the typed line goes
        term.type("say thanks")
        term.read_until(r"<Ann> thanks\n" + PROMPT, 10)  # and the prompt is back
        term.type("roll")
        assert "Dice (roll 1 of 3)" in term.prompt()
    finally:
        term.close()


def test_the_countdown_counts_down_while_the_prompt_waits(server: ServerProcess) -> None:
    term = Terminal(
        "play", "--url", server.ws, "--game", "qwinto", "--seats", "1", "--name", "Ann",
        "--turn-window", "60",
    )  # fmt: skip
    try:
        shown = int(re.findall(PROMPT, term.prompt())[-1])
        assert 0 < shown <= 61  # (the clock offset measured with ping is good to a round trip)
        later = shown
        while later >= shown:
            later = int(re.findall(PROMPT, term.read_until(PROMPT, 10))[-1])
        assert later < shown
    finally:
        term.close()


def test_the_dice_show_as_one_line_with_their_sum(server: ServerProcess) -> None:
    qwinto = Terminal("play", "--url", server.ws, "--game", "qwinto", "--seats", "1")
    try:
        _, moves = qwinto.moves()
        qwinto.type(str(moves["roll red yellow blue"]))
        dice = re.search(
            r"Dice: red (\d) · yellow (\d) · blue (\d)  \(sum (\d+)\)", qwinto.prompt()
        )
        assert dice is not None and int(dice[1]) + int(dice[2]) + int(dice[3]) == int(dice[4])
    finally:
        qwinto.close()
    qwixx = Terminal("play", "--url", server.ws, "--game", "qwixx", "--seats", "1")
    try:
        white = r"Dice: white (\d) · white (\d) \(white sum (\d+)\) · red \d · yellow \d · green \d"
        dice = re.search(white + r" · blue \d\n", qwixx.prompt())
        assert dice is not None and int(dice[1]) + int(dice[2]) == int(dice[3])
    finally:
        qwixx.close()
    yamb = Terminal("play", "--url", server.ws, "--game", "yamb", "--seats", "1")
    try:
        yamb.prompt()
        yamb.type("roll")
        six = r"0:(\d) · 1:(\d) · 2:(\d) · 3:(\d) · 4:(\d) · 5:(\d)  \(sum (\d+)\)"
        dice = re.search(r"Dice \(roll 1 of 3\): " + six, yamb.prompt())
        assert dice is not None and sum(int(d) for d in dice.groups()[:6]) == int(dice[7])
        yamb.type("roll hold 0 2")
        held = r"0:\d held · 1:\d · 2:\d held · 3:\d · 4:\d · 5:\d  \(sum \d+\)"
        assert re.search(r"Dice \(roll 2 of 3\): " + held, yamb.prompt())
    finally:
        yamb.close()


def own_sheet(seen: str) -> list[str]:
    """The lines of the last sheet of the player named Ann in `seen`."""
    return seen.rsplit("Player name: Ann", 1)[1].split("\n\n", 1)[0].split("\n")


def test_qwinto_boxes_are_numbered_as_typed(server: ServerProcess) -> None:
    """`enter ROW BOX` writes the dice's sum in the box drawn above the number BOX."""
    term = Terminal("play", "--url", server.ws, "--game", "qwinto", "--seats", "1", "--name", "Ann")
    try:
        first, moves = term.moves()
        assert "Legend: % edges a bonus box" in first
        term.type(str(moves["roll red yellow blue"]))
        seen, moves = term.moves()
        total = re.search(r"\(sum (\d+)\)", seen)
        assert total is not None
        row, box = next(m.split()[1:] for m in moves if m.startswith("enter"))
        assert moves[f"enter {row} {box}"] == 10 * (1 + ["red", "yellow", "blue"].index(row)) + int(
            box
        ), "the last digit of a box's number is the box"
        term.type(f"{moves[f'enter {row} {box}']}")
        sheet = own_sheet(term.prompt())
        line = next(i for i, text in enumerate(sheet) if text.lower().startswith(row))
        ruler = sheet[line + 1]
        assert ruler.lstrip().startswith("box")
        column = {m[0]: m.end() - 2 for m in re.finditer(r"\d+", ruler)}[box]
        assert sheet[line][column : column + 2] == f"{int(total[1]):2d}", (sheet[line], ruler)
    finally:
        term.close()


def test_qwixx_numbers_are_typed_as_printed_with_a_lock_legend(server: ServerProcess) -> None:
    term = Terminal("play", "--url", server.ws, "--game", "qwixx", "--seats", "1", "--name", "Ann")
    try:
        seen, moves = term.moves()
        assert "The last column is the lock: U open, L locked" in seen
        row, number = next(m.split()[1:] for m in moves if m.startswith("mark"))
        before = next(text for text in own_sheet(seen) if text.strip().lower().startswith(row))
        column = before.index(f"{int(number):2d}|", before.index("|"))
        term.type(f"{row} {number}")  # (the move without its first word)
        after = next(
            text for text in own_sheet(term.prompt()) if text.strip().lower().startswith(row)
        )
        assert after[column : column + 2] == "XX"
    finally:
        term.close()


def test_scores_and_whose_turn_show_with_each_window(server: ServerProcess) -> None:
    # the default opponent is the strong house bot, as on the web page (issue 33)
    term = Terminal("play", "--url", server.ws, "--game", "qwixx", "--name", "Ann")
    try:
        seen = term.prompt()
        status = r"\* turn window \d+: your turn; to act: Ann \(you\), strong-bot-1 · "
        assert re.search(status + r"scores: Ann 0 · strong-bot-1 0\n", seen), seen
        theirs = r"\* turn window \d+: strong-bot-1's turn; to act: [^\n]+ · "
        for _ in range(10):
            if re.search(theirs + r"scores: Ann -?\d+ · strong-bot-1 -?\d+\n", seen):
                break
            term.type("pass")
            seen = term.prompt()
        else:
            raise AssertionError("the bot's turn was never shown")
    finally:
        term.close()


def test_bots_chooses_the_house_bot(server: ServerProcess) -> None:
    term = Terminal("play", "--url", server.ws, "--game", "qwixx", "--bots", "greedy")
    try:
        assert re.search(r"to act: [^\n]*greedy-bot-1", term.prompt())
    finally:
        term.close()


def test_a_move_keeps_its_number_within_the_window(server: ServerProcess) -> None:
    """A Yamb turn is one window of several prompts: after a roll the calls go and the
    holds change their dice, yet every move offered again has the number it had."""
    term = Terminal(
        "play", "--url", server.ws, "--game", "yamb", "--seats", "1", "--turn-window", "300"
    )
    try:
        _, first = term.moves()
        term.type(str(first["roll"]))
        _, second = term.moves()
        term.type(str(second["roll hold 0"]))
        _, third = term.moves()
        assert "call full" in second and "call full" not in third
        again = set(second) & set(third)
        assert {"write free1 min", "write down 1", "roll hold 0 1"} <= again
        assert {m: second[m] for m in again} == {m: third[m] for m in again}
        assert first["roll"] == second["roll"] == third["roll"]
        assert len(set(third.values())) == len(third), "one number, one move"
    finally:
        term.close()
