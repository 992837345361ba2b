"""A served process says through /metrics how many hot modules it runs compiled: all of
them under `make test-compiled`, none in the work tree (tests/server/test_compiled.py)."""

from __future__ import annotations

from dicehall.server.compiled import MODULES
from tests.server.test_compiled import EXPECT_COMPILED
from tests.support.servers import ServerProcess

from .helpers import metrics


def test_the_served_process_runs_the_build_under_test(server: ServerProcess) -> None:
    expected = len(MODULES) if EXPECT_COMPILED else 0
    assert metrics(server)["dicehall_compiled_modules"] == expected
