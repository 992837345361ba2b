"""Shared fixtures: a real `dicehall serve` process per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.servers import ServerProcess, running_server


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with running_server() as s:
        yield s
