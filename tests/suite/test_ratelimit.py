"""Rate limits are waited out within a budget; pacing spaces requests out."""

from __future__ import annotations

import asyncio

import pytest

from mcp_assay.suite.ratelimit import RateLimiter, parse_retry_after
from mcp_assay.vocabulary.errors import RateLimited


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_retry_after_is_read_as_seconds_or_an_http_date() -> None:
    """Tool-defined: Retry-After is delta-seconds or an HTTP date (RFC 9110); anything else is ignored."""
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 0 ") == 0.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412480.0 - 10) == pytest.approx(10.0)
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_a_429_opens_the_breaker_for_the_time_retry_after_names() -> None:
    """Tool-defined: the next request waits exactly what the target asked for."""
    clock = FakeClock()
    limiter = RateLimiter(retry_budget_ms=10_000, clock=clock, sleep=clock.sleep)
    assert limiter.on_rate_limited("2") == 2.0
    asyncio.run(limiter.before_request())
    assert clock.slept == [2.0]
    assert limiter.waited == 2.0


def test_without_retry_after_the_back_off_starts_at_one_second_and_doubles() -> None:
    """Tool-defined: 1 s, 2 s, 4 s … until a request goes through."""
    clock = FakeClock()
    limiter = RateLimiter(retry_budget_ms=60_000, clock=clock, sleep=clock.sleep)
    assert [limiter.on_rate_limited(None) for _ in range(3)] == [1.0, 2.0, 4.0]
    limiter.on_success()
    assert limiter.on_rate_limited(None) == 1.0


def test_a_limit_that_outlasts_the_budget_is_reported_as_rate_limited() -> None:
    """Tool-defined: past --retry-budget-ms the case is not verified, naming the rate limit."""
    clock = FakeClock()
    limiter = RateLimiter(retry_budget_ms=1_500, clock=clock, sleep=clock.sleep)
    with pytest.raises(RateLimited, match="retry budget of 1500 ms"):
        limiter.on_rate_limited("5")


def test_pacing_spaces_requests_to_the_rate_per_minute() -> None:
    """Tool-defined: --rate-limit 120 means one request every half second."""
    clock = FakeClock()
    limiter = RateLimiter(per_minute=120, clock=clock, sleep=clock.sleep)

    async def three() -> None:
        for _ in range(3):
            await limiter.before_request()

    asyncio.run(three())
    assert clock.slept == [0.5, 0.5]
