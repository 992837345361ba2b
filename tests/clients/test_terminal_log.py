"""The log lines of `dicehall play` (issue 33), through a pseudo-terminal against a real
server: a time-out is one line, and a rejoin replays each past line once, as it read then
(the scores of its time, not today's)."""

from __future__ import annotations

import re

from tests.support.servers import ServerProcess

from .test_terminal import Terminal, first_move

LINE = re.compile(r"\* [^\n\r\x1b]*")
"""A line of the log (the console clears the prompt's line before it and redraws after)."""


def said(screen: str) -> list[str]:
    return LINE.findall(screen)


def windows(lines: list[str]) -> list[list[str]]:
    """The log cut at each turn window's status line (the first part: before any)."""
    parts: list[list[str]] = [[]]
    for line in lines:
        if line.startswith("* turn window "):
            parts.append([])
        parts[-1].append(line)
    return parts


def test_a_time_out_prints_one_line(server: ServerProcess) -> None:
    """Ann types nothing: the rules roll for her, then answer for her (a pass), each said
    once: no `answered`, no move of hers, no "closed before you answered" besides."""
    term = Terminal(
        "play", "--url", server.ws, "--game", "qwinto", "--name", "Ann", "--turn-window", "2"
    )
    try:
        seen = term.read_until(r"\* turn window 2: [^\n]*\n", 30)
    finally:
        term.close()
    assert "closed before you answered" not in seen
    choose, answer = windows(said(seen))[1:3]
    assert choose[0].startswith("* turn window 0: your turn; to act: Ann (you) · ")
    assert answer[0].startswith("* turn window 1: your turn; to act: Ann (you), strong-bot-1 · ")
    played = "* Ann ran out of time: the rules played"
    assert [line for line in choose[1:] if "Ann" in line] == [f"{played} roll red yellow blue"]
    assert [line for line in answer[1:] if "Ann" in line] == [
        f"{played} pass",
        "* Ann records a failed throw",  # (the active seat wrote nothing: the rules' penalty)
    ]


def test_a_rejoin_replays_each_past_line_once_as_it_read(server: ServerProcess) -> None:
    first = Terminal(
        "play", "--url", server.ws, "--game", "qwinto", "--name", "Ann", "--turn-window", "120"
    )
    try:
        seen = first.prompt()
        room = re.search(r"\* room (\S+): share it", seen)
        assert room is not None
        for _ in range(6):
            first.type(first_move(seen))
            seen = first.prompt()
        first.type("quit")
        first.read_until(r"bye: your seat stays yours", 10)
        assert first.proc.wait(10) == 0
    finally:
        first.close()
    live = said(first.transcript)
    scores = re.findall(r"scores: Ann (-?\d+) · strong-bot-1 (-?\d+)", "\n".join(live))
    assert len(set(scores)) > 2, "the scores moved while Ann played"

    back = Terminal(
        "play", "--url", server.ws, "--room", room[1], "--name", "Ann", state=first.state
    )
    try:
        again = said(back.prompt())
        back.type("quit")
        back.read_until(r"bye: your seat stays yours", 10)
    finally:
        back.close()
    assert again[0] == f"* took your seat back in room {room[1]}"
    assert again[1 : len(live)] == live[1:]  # (then what happened after Ann left)
    assert sum("dice commitment" in line for line in again) == 1
