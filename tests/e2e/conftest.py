"""Fixtures of the browser tests (test_web*.py): one headless Chromium per module, and the
pages a test opens, closed (and checked for page errors) after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.servers import ServerProcess

from .webpage import Browser, Player, launch


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from launch()


@pytest.fixture
def players(browser: Browser, server: ServerProcess) -> Iterator[list[Player]]:
    """A factory's list: every Player made in a test is closed (and checked) after it."""
    made: list[Player] = []
    yield made
    for player in made:
        player.close()
