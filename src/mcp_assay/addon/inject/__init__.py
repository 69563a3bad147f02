"""Fault injection toward a client (``--inject``): answers a well-behaved server never gives.

A whole class of client requirements shows only when the server refuses or misbehaves: what a
client does after a ``-32022`` (VER-05, VER-13, VER-12), after a ``404`` for its 2025 session
(HS-22), after a ``-32020`` about ``Mcp-Param-*`` (HTTP-22), when an answer never comes (CAN-13,
and CAN-10 for ``initialize``), when header names arrive in an unusual but legal case (HTTP-14,
then HS-19 and HS-11), when a stream is cut (HTTP-43, HTTP-36). Off by default; when asked, the
proxy (:mod:`.http`) and the stdio tap (:mod:`.stdio`) answer, delay or reshape a bounded number
of exchanges on the server's behalf, one family per module (:mod:`.version`, :mod:`.session`,
:mod:`.hold`, :mod:`.headers`, :mod:`.cut`), at the points :mod:`.plan` describes.

Every such exchange carries a :class:`~mcp_assay.wire.Probe` with ``injected`` set, in the
recording and in every report; the engine never judges its answer as the server's, and the
client's reaction is judged by the same rules as any traffic. A request is never changed on its
way to the server: it is answered in its place, or passed on as sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mcp_assay.addon.inject import cut, headers, hold, session, version
from mcp_assay.addon.inject.plan import (
    DEFAULT_HOLD_MS,
    Case,
    InjectFamily,
    Plan,
    RequestFacts,
    parse_families,
)
from mcp_assay.errors import ConfigError

__all__ = [
    "ALL_CASES",
    "DEFAULT_HOLD_MS",
    "MAX_HOLD_MS",
    "Case",
    "InjectFamily",
    "Plan",
    "RequestFacts",
    "STDIO_FAMILIES",
    "build_plan",
    "check_hold_ms",
    "parse_families",
]

ALL_CASES: tuple[Case, ...] = (
    version.REFUSAL,
    session.EXPIRY,
    headers.REFUSAL,
    *hold.CASES,
    cut.CUT_MODERN,
    cut.CUT_LEGACY,
    headers.CASE_LEGACY,
    headers.CASE_MODERN,
)
"""Every case, in the order a request is offered to them (the first whose point it meets takes it)."""

MAX_HOLD_MS = 600_000
STDIO_FAMILIES = frozenset({InjectFamily.VERSION, InjectFamily.HOLD})
"""The families that have a case on stdio (the rest are HTTP's: sessions, headers and streams)."""


def check_hold_ms(value: int) -> int:
    """``--inject-hold-ms``: positive, and at most ten minutes."""
    if not 0 < value <= MAX_HOLD_MS:
        raise ConfigError(f"--inject-hold-ms must be between 1 and {MAX_HOLD_MS} (got {value})")
    return value


def build_plan(
    families: Iterable[InjectFamily], *, transport: str, hold_ms: int = DEFAULT_HOLD_MS, window: Sequence[str] = ()
) -> Plan | None:
    """The plan of one proxy or tap session over ``transport``; ``None`` when no family is asked for."""
    chosen = frozenset(families)
    if not chosen:
        return None
    cases = tuple(case for case in ALL_CASES if transport in case.transports and case.family in chosen)
    return Plan(families=chosen, cases=cases, hold_ms=check_hold_ms(hold_ms), window=tuple(window))
