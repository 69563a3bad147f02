"""Fault injection toward a client (``--inject``): answers a well-behaved server never gives.

A whole class of client requirements shows only when the server refuses or misbehaves: what a
client does after a ``-32022``, after a ``404`` for its 2025 session, when an answer never comes,
when header names arrive in an unusual but legal case, when a stream is cut. Off by default; when
asked, the proxy (:mod:`.http`) and the stdio tap (:mod:`.stdio`) answer, delay or reshape a
bounded number of exchanges on the server's behalf.

Each fault is a :class:`~.fault.Fault`, declared once in its family's module under
:mod:`.families` with the :mod:`~.actions` action the transports apply and the checks that judge
the client's reaction (``docs/injection.md`` lists them with their requirements); :mod:`.registry`
reads them, :mod:`.plan` decides where they land, and :mod:`.table` writes that page.

Every such exchange carries a :class:`~mcp_assay.wire.model.Probe` with ``injected`` set (and its
:class:`~mcp_assay.wire.faults.FaultKind`), in the recording and in every report; the engine never judges
its answer as the server's, and the client's reaction is judged by the same rules as any
traffic. A request is never changed on its way to the server: it is answered in its place, or
passed on as sent.
"""

from __future__ import annotations

from mcp_assay.addon.inject.fault import Fault, FaultFamily, Reaction
from mcp_assay.addon.inject.plan import DEFAULT_HOLD_MS, Plan
from mcp_assay.addon.inject.points import RequestFacts
from mcp_assay.addon.inject.registry import (
    FAMILIES,
    FAULTS,
    MAX_HOLD_MS,
    STDIO_FAMILIES,
    build_plan,
    check_hold_ms,
    family_names,
    parse_families,
)

__all__ = [
    "FAULTS",
    "DEFAULT_HOLD_MS",
    "FAMILIES",
    "MAX_HOLD_MS",
    "STDIO_FAMILIES",
    "Fault",
    "FaultFamily",
    "Plan",
    "Reaction",
    "RequestFacts",
    "build_plan",
    "check_hold_ms",
    "family_names",
    "parse_families",
]
