"""The token bucket on its own, on an injected clock: no sleeping."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dicehall.protocol.server_connection import Admission, TokenBucket


def test_a_burst_is_allowed_then_refused_then_closed() -> None:
    bucket = TokenBucket(rate=10, burst=3, now=0.0)
    assert [bucket.take(0.0) for _ in range(3)] == [Admission.ALLOW] * 3
    assert [bucket.take(0.0) for _ in range(3)] == [Admission.LIMIT] * 3  # in debt
    assert bucket.take(0.0) is Admission.CLOSE  # past -burst: a flood


def test_it_refills_at_rate_up_to_burst() -> None:
    bucket = TokenBucket(rate=10, burst=3, now=0.0)
    for _ in range(3):
        bucket.take(0.0)
    assert bucket.take(0.05) is Admission.LIMIT  # half a token back, and one taken
    assert bucket.take(0.25) is Admission.ALLOW  # two more back
    assert bucket.take(100.0) is Admission.ALLOW
    assert bucket.tokens == 2.0  # full at 3, one taken: never above burst


def test_a_client_that_backs_off_recovers_from_debt() -> None:
    bucket = TokenBucket(rate=20, burst=4, now=0.0)
    while bucket.take(0.0) is not Admission.LIMIT:
        pass
    assert bucket.take(0.0) is Admission.LIMIT
    # the debt is paid back at `rate`: after (debt + 1) / rate seconds one frame goes
    debt = -bucket.tokens
    assert bucket.take((debt + 1) / 20 + 1e-9) is Admission.ALLOW


def test_a_clock_that_goes_back_adds_nothing() -> None:
    bucket = TokenBucket(rate=10, burst=2, now=5.0)
    bucket.take(5.0)
    bucket.take(5.0)
    assert bucket.take(4.0) is Admission.LIMIT  # no tokens for time running backwards
    assert bucket.take(5.05) is Admission.LIMIT  # nor for time before the latest seen


@pytest.mark.parametrize(("rate", "burst"), [(0, 5), (-1, 5), (1, 0)])
def test_nonsense_settings_are_refused(rate: float, burst: int) -> None:
    with pytest.raises(ValueError):
        TokenBucket(rate=rate, burst=burst, now=0.0)


RATES = st.floats(0.1, 1000)
BURSTS = st.integers(1, 100)


@given(rate=RATES, burst=BURSTS, gaps=st.lists(st.floats(0, 10), max_size=200))
def test_tokens_stay_within_minus_burst_minus_one_and_burst(
    rate: float, burst: int, gaps: list[float]
) -> None:
    bucket = TokenBucket(rate=rate, burst=burst, now=0.0)
    now = 0.0
    for gap in gaps:
        now += gap
        verdict = bucket.take(now)
        assert -burst - 1 <= bucket.tokens <= burst - 1
        assert (verdict is Admission.ALLOW) == (bucket.tokens >= 0)


def _model(tokens: float, last: float, now: float, rate: float, burst: int) -> tuple[float, float]:
    """The bucket as first written (min and max), which `take`'s comparisons must match:
    refill for the time that passed (none when the clock went back), cap at `burst`, take
    one, floor at `-burst - 1`."""
    elapsed = max(0.0, now - last)
    tokens = min(float(burst), tokens + elapsed * rate) - 1.0
    return max(tokens, -burst - 1.0), max(now, last)


@given(rate=RATES, burst=BURSTS, times=st.lists(st.floats(0, 100), max_size=200))
def test_take_is_the_capped_refill_minus_one_floored(
    rate: float, burst: int, times: list[float]
) -> None:
    bucket = TokenBucket(rate=rate, burst=burst, now=0.0)
    tokens, last = float(burst), 0.0
    for now in times:  # (unsorted: the clock may go back)
        verdict = bucket.take(now)
        tokens, last = _model(tokens, last, now, rate, burst)
        assert bucket.tokens == tokens
        want = (
            Admission.ALLOW
            if tokens >= 0
            else Admission.LIMIT
            if tokens >= -burst
            else Admission.CLOSE
        )
        assert verdict is want
