"""What the browser tests of the web client share: Debian's Chromium driven by Playwright,
and a `Player`, one browser tab (its own storage) that drives the page like a person."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.servers import ROOT, ServerProcess

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = ROOT / "docs" / "screenshots"
"""Written only when DICEHALL_SCREENSHOTS=1 (`make screenshots`): tests leave the tree clean."""
DESKTOP: ViewportSize = {"width": 1280, "height": 900}
LAPTOP: ViewportSize = {"width": 1280, "height": 720}
PHONE: ViewportSize = {"width": 390, "height": 844}
TIMEOUT_MS = 15_000
WIRE_WORDS = re.compile(r"\bmessage \d|\bseq\b|snapshot|white[12]\b|\bfree[12]\b|\{|\}")
"""What a log line must not say: the protocol's words (a player reads the log)."""

try:
    from playwright.sync_api import Browser, Page, sync_playwright
except ImportError:  # reported by `launch` as a failure, never a skip
    sync_playwright = None
    Browser = Page = Any  # type: ignore[misc,assignment]

__all__ = ["Browser", "Page", "Player", "launch", "save_shot"]


def launch() -> Iterator[Browser]:
    """One headless Chromium for a test module (a fixture's body)."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browsers` (installs Debian's chromium)")
    if sync_playwright is None:
        pytest.fail("the playwright package is missing: pip install -e '.[dev]'")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield chromium
        chromium.close()


def save_shot(image: bytes, name: str) -> None:
    assert image.startswith(b"\x89PNG")
    if os.environ.get("DICEHALL_SCREENSHOTS") == "1":
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / name).write_bytes(image)


class Player:
    """One browser tab (its own storage) driving the web client like a person."""

    def __init__(
        self,
        browser: Browser,
        server: ServerProcess,
        name: str,
        viewport: ViewportSize | None = None,
    ) -> None:
        self.context = browser.new_context(viewport=viewport or DESKTOP)
        self.page: Page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.server = server
        self.problems: list[str] = []
        self.page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        self.page.on(
            "console",
            lambda m: self.problems.append(f"console: {m.text}") if m.type == "error" else None,
        )
        self.page.goto(server.http + "/")
        self.page.fill("#player-name", name)
        self.page.press("#player-name", "Tab")
        self.page.wait_for_selector("#create-room")

    def close(self) -> None:
        assert self.problems == [], self.problems
        jargon = [line for line in self.log() if WIRE_WORDS.search(line)]
        assert jargon == [], f"the log speaks the protocol: {jargon}"
        self.context.close()

    def room(self, key: str) -> str:
        value: str = self.page.get_attribute("#room", f"data-{key}") or ""
        return value

    def create(self, game: str, seats: int = 2, bots: int = 1, turn_window: int = 120) -> str:
        """Fill the lobby's form and create a room (autostart: it starts when seats are full)."""
        page = self.page
        page.select_option("#f-game", game)
        page.fill("#f-seats", str(seats))
        page.dispatch_event("#f-seats", "change")
        page.fill("#f-bots", str(bots))
        page.dispatch_event("#f-bots", "change")
        page.fill("#f-window", str(turn_window))
        page.dispatch_event("#f-window", "change")
        page.click("#create-room")
        page.wait_for_selector("#room[data-seat='0']")
        return self.room("room")

    def request(self, kind: str, fields: dict[str, Any]) -> Any:
        """A request on the page's own connection (what the page does, done by hand)."""
        return self.page.evaluate("([t, f]) => window.dicehall.conn.request(t, f)", [kind, fields])

    def go(self, room: str) -> None:
        """Open a room's link in this tab."""
        self.page.evaluate("(r) => { location.hash = '#/room/' + r; }", room)

    def wait_move(self, seen: int) -> bool:
        """Wait until it is this seat's move with a legal list newer than `seen`; False: over."""
        self.page.wait_for_function(
            """(seen) => {
                const r = document.querySelector('#room');
                return r && (r.dataset.over === '1'
                    || (r.dataset.mine === '1' && Number(r.dataset.legal) > seen));
            }""",
            arg=seen,
        )
        return self.room("over") != "1"

    def wait_legal(self, seen: int) -> None:
        """Wait for a legal list newer than `seen` (the answer to what was just clicked)."""
        self.page.wait_for_function(
            "(n) => Number(document.querySelector('#room').dataset.legal) > n", arg=seen
        )

    def wait_log(self, prefix: str) -> None:
        self.page.wait_for_function(
            """(p) => [...document.querySelectorAll('.log-list li')]
                .some((li) => li.textContent.startsWith(p))""",
            arg=prefix,
        )

    def legal_count(self) -> int:
        return int(self.room("legal") or 0)

    def log(self) -> list[str]:
        texts: list[str] = self.page.locator(".log-list li").all_inner_texts()
        return texts

    def shot(self, name: str, full_page: bool = True) -> None:
        save_shot(self.page.screenshot(full_page=full_page), name)


def new_player(
    players: list[Player],
    browser: Browser,
    server: ServerProcess,
    name: str,
    viewport: ViewportSize | None = None,
) -> Player:
    """A new tab as `name`, closed after the test with the `players` fixture's others."""
    player = Player(browser, server, name, viewport=viewport)
    players.append(player)
    return player
