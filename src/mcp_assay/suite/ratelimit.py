"""Pacing the run and waiting out rate limits, so a 429 never reads as a conformance finding.

A ``429 Too Many Requests`` says nothing about conformance. The suite neither fails the case nor
hammers the target: the first 429 opens a breaker that holds every request back for the interval
the target asked for in ``Retry-After`` (or a back-off that starts at one second and doubles),
and the run carries on when it clears. The total time spent waiting is bounded by the retry
budget; a limit that outlasts it raises :class:`RateLimited`, which makes the affected cases
*not verified*, naming the rate limit.

``--rate-limit N`` paces the run to at most N requests per minute, for targets whose limit a
full run would exceed anyway.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import email.utils
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mcp_assay.vocabulary.errors import RateLimited

__all__ = ["RateLimiter", "parse_retry_after"]

FIRST_BACKOFF = 1.0
MAX_BACKOFF = 30.0


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delta-seconds or an HTTP date); ``None`` if unusable."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if text.isdigit():
        return float(int(text))
    try:
        seconds = float(text)
    except ValueError:
        seconds = None
    if seconds is not None:
        return max(0.0, seconds)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    current = now if now is not None else time.time()
    return max(0.0, when.timestamp() - current)


@dataclass
class _Breaker:
    open_until: float = 0.0
    backoff: float = FIRST_BACKOFF


class RateLimiter:
    """Paces requests and holds them back while a 429 breaker is open, within a total wait budget."""

    def __init__(
        self,
        *,
        per_minute: float | None = None,
        retry_budget_ms: int = 60_000,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if per_minute is not None and per_minute <= 0:
            raise ValueError("the request rate must be positive")
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self.budget = max(0, retry_budget_ms) / 1000
        self._clock = clock
        self._sleep = sleep
        self._next_slot = 0.0
        self._breaker = _Breaker()
        self.waited = 0.0
        """Seconds spent waiting out rate limits so far (pacing not included)."""
        self.limited = 0
        """How many 429 answers the run has met."""
        self._lock = asyncio.Lock()

    async def before_request(self) -> None:
        """Wait for the next pacing slot and for an open breaker to close."""
        async with self._lock:
            now = self._clock()
            if self._breaker.open_until > now:
                await self._wait(self._breaker.open_until - now, "a rate limit is in force")
                now = self._clock()
            if self.interval:
                if self._next_slot > now:
                    await self._sleep(self._next_slot - now)
                    now = self._clock()
                self._next_slot = max(now, self._next_slot) + self.interval

    async def _wait(self, seconds: float, why: str) -> None:
        if self.waited + seconds > self.budget:
            raise RateLimited(
                f"{why}; waiting another {seconds:.1f} s would exceed the retry budget of "
                f"{self.budget * 1000:.0f} ms (already waited {self.waited:.1f} s)",
                self.waited,
            )
        self.waited += seconds
        await self._sleep(seconds)

    def on_rate_limited(self, retry_after: str | None) -> float:
        """Record a 429: open the breaker for Retry-After, or for the next back-off step. Returns the delay."""
        self.limited += 1
        delay = parse_retry_after(retry_after)
        if delay is None:
            delay = self._breaker.backoff
            self._breaker.backoff = min(MAX_BACKOFF, self._breaker.backoff * 2)
        if self.waited + delay > self.budget:
            raise RateLimited(
                f"the target answered 429 Too Many Requests and asked to wait {delay:.1f} s, more than the "
                f"retry budget of {self.budget * 1000:.0f} ms allows (already waited {self.waited:.1f} s)",
                self.waited,
            )
        self._breaker.open_until = max(self._breaker.open_until, self._clock() + delay)
        return delay

    def on_success(self) -> None:
        """A request went through: the next 429 starts the back-off from one second again."""
        self._breaker.backoff = FIRST_BACKOFF
