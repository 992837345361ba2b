"""The screen and keyboard of `dicehall play`: room events print above the prompt.

The room goes on while the player thinks: other seats roll and move, windows close, people
chat. Those lines must reach the screen at once, without breaking the line being typed.
A terminal echoes and buffers what is typed by itself, out of the program's sight, so an
event printed there would land in the middle of it; so in a terminal the console takes the
keyboard in cbreak mode (no echo, no line buffer: keys arrive one by one), keeps the typed
line itself, and to print an event it erases the prompt line, prints the event, and draws
the prompt again with what was typed so far. The same redraw keeps the countdown in the
prompt true. Anywhere else (a pipe, a file) it reads whole lines and shows the prompt
again after an event.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

CLEAR_LINE = "\r\x1b[K"
"""Back to the start of the line and erase it (ANSI; every terminal emulator knows it)."""

LineHandler = Callable[[str | None], None]
"""Called with each line typed, and None at the end of the input."""


class Console:
    def __init__(self, out: TextIO, inp: TextIO | None = None) -> None:
        self.out = out
        self.inp = inp
        self.live = sys.platform != "win32" and inp is not None and inp.isatty() and out.isatty()
        """A terminal on both sides: the console edits the line and redraws the prompt."""
        self.typed = ""
        self._prompt: Callable[[], str] | None = None
        self._drawn = ""
        self._on_line: LineHandler | None = None
        self._saved: list[Any] | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._escape = ""

    # --- output ---------------------------------------------------------------------------

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def _input_line(self) -> str:
        self._drawn = self._prompt() if self._prompt is not None else ""
        return self._drawn + self.typed

    def say(self, text: str) -> None:
        """Print `text` above the prompt, then the prompt again as it was."""
        if self.live and (self._prompt is not None or self.typed):
            self._write(CLEAR_LINE + text + "\n" + self._input_line())
        elif self._prompt is not None:
            self._write("\n" + text + "\n" + self._input_line())
        else:
            self._write(text + "\n")

    def prompt(self, prompt: Callable[[], str]) -> None:
        """Show a prompt; `prompt()` gives its text, asked again at each redraw."""
        self._prompt = prompt
        self._write((CLEAR_LINE if self.live else "") + self._input_line())

    def tick(self) -> None:
        """Redraw the prompt when its text changed (the countdown), in a terminal."""
        if self.live and self._prompt is not None and self._prompt() != self._drawn:
            self._write(CLEAR_LINE + self._input_line())

    def drop_prompt(self) -> None:
        """The prompt is answered elsewhere (its window closed): erase it, forget the
        typed text (meant for that prompt)."""
        if self._prompt is None:
            return
        self._prompt = None
        self.typed = ""
        self._write(CLEAR_LINE if self.live else "\n")

    # --- input ----------------------------------------------------------------------------

    def start(self, on_line: LineHandler) -> None:
        """Read the keyboard from now on; each line typed goes to `on_line`."""
        self._on_line = on_line
        if self.inp is None:
            return
        if not self.live:
            threading.Thread(
                target=self._read_lines, args=(asyncio.get_running_loop(),), daemon=True
            ).start()
            return
        if sys.platform != "win32":  # (for the type checker: live is never true there)
            import termios
            import tty

            fd = self.inp.fileno()
            self._saved = termios.tcgetattr(fd)
            tty.setcbreak(fd)
            asyncio.get_running_loop().add_reader(fd, self._readable, fd)

    def stop(self) -> None:
        """Give the terminal back as it was; the prompt goes."""
        self.drop_prompt()
        if self._saved is not None and self.inp is not None and sys.platform != "win32":
            import termios

            fd = self.inp.fileno()
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(fd)
            termios.tcsetattr(fd, termios.TCSADRAIN, self._saved)
            self._saved = None
        self._on_line = None

    def _read_lines(self, loop: asyncio.AbstractEventLoop) -> None:
        """(A thread: a pipe or a file gives whole lines.)"""
        assert self.inp is not None
        while True:
            line = self.inp.readline()
            with contextlib.suppress(RuntimeError):  # the loop is closed: the game ended
                loop.call_soon_threadsafe(self._entered, line.rstrip("\n") if line else None)
            if not line:
                return

    def _readable(self, fd: int) -> None:
        try:
            data = os.read(fd, 4096)
        except OSError:
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(fd)
            self._line(None)
            return
        for key in self._decoder.decode(data):
            self.key(key)

    def _entered(self, line: str | None) -> None:
        """A line is in: it answered the prompt, which is history now."""
        self._prompt = None
        self._line(line)

    def _line(self, line: str | None) -> None:
        if self._on_line is not None:
            self._on_line(line)

    def key(self, key: str) -> None:
        """One key typed in a terminal: edit the line, echo it, hand it over on Enter."""
        if self._escape or key == "\x1b":  # arrows and such (ESC [ ... A, ESC O A): ignored
            self._escape += key
            n = len(self._escape)
            if (n == 2 and key not in "[O") or (n > 2 and (key.isalpha() or key == "~")):
                self._escape = ""
            return
        if key in "\r\n":
            line, self.typed = self.typed, ""
            self._write("\n")
            self._entered(line)
        elif key in "\x7f\b":
            if self.typed:
                self.typed = self.typed[:-1]
                self._write("\b \b")
        elif key in "\x15\x17":  # ctrl-U: the whole line; ctrl-W: the last word
            self.typed = "" if key == "\x15" else self.typed.rstrip().rpartition(" ")[0]
            self._write(CLEAR_LINE + self._input_line())
        elif key == "\x04" and not self.typed:  # ctrl-D on an empty line: the end
            self._line(None)
        elif key == "\x0c":  # ctrl-L: draw the line again
            self._write(CLEAR_LINE + self._input_line())
        elif key.isprintable():
            self.typed += key
            self._write(key)
