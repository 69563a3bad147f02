"""Counting the work each check does on logs of growing size (lines executed, not seconds).

Wall time on a shared machine says little; the number of Python lines a check executes is the
same on every run. :func:`work_per_check` judges a log once with every check, attributing each
executed line to the check running at the time (``ctx.check``), and :func:`traffic` builds logs of
any size from the project's recorded sessions (2026 and 2025 over HTTP, a broken server) and a
stdio conversation, each copy with fresh request ids in the same sessions, so listings, sessions
and streams grow the way a long session makes them grow.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mcp_assay
from mcp_assay.recording.records import Assembler, iter_records
from mcp_assay.spec.checks import Check
from mcp_assay.spec.engine import Judge
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.model import Exchange, StdioLine

RECORDINGS = Path(__file__).resolve().parents[1] / "data" / "recordings"
SAMPLES = (
    "python-sdk-2026-07-28.jsonl",
    "python-sdk-2025-11-25.jsonl",
    "broken-2026-07-28.jsonl",
    "suite-sdk-2026-07-28-http.jsonl",
    "suite-sdk-2025-11-25-http.jsonl",
    "suite-sdk-2026-07-28-stdio.jsonl",
)
TIME_STEP = 10.0
PACKAGE = str(Path(mcp_assay.__file__).parent)
RULES = str(Path(PACKAGE) / "spec" / "rules")


ID_MEMBERS = ("id", "requestId", "io.modelcontextprotocol/subscriptionId")
"""Members naming a request id: shifted together, so a copy's notifications name the copy's requests."""


def _shifted(value: Any, offset: int) -> Any:
    if isinstance(value, dict):
        return {
            key: _shifted_id(item, offset) if key in ID_MEMBERS else _shifted(item, offset)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_shifted(item, offset) for item in value]
    return value


def _shifted_id(ident: Any, offset: int) -> Any:
    if isinstance(ident, int) and not isinstance(ident, bool):
        return ident + offset
    return f"{ident}-{offset}" if isinstance(ident, str) and offset else ident


def _shift_id(text: str, offset: int) -> str:
    try:
        payload = json.loads(text)
    except ValueError:
        return text
    return json.dumps(_shifted(payload, offset)) if isinstance(payload, dict | list) else text


def _copy(record: dict[str, Any], copy: int, prefix: str) -> dict[str, Any]:
    out = dict(record)
    if "x" in out:
        out["x"] = f"{prefix}{copy}-{out['x']}"
    if isinstance(out.get("t"), int | float):
        out["t"] = float(out["t"]) + copy * TIME_STEP
    for key in ("body", "data", "text"):
        if isinstance(out.get(key), str):
            out[key] = _shift_id(out[key], copy * 1000)
    if isinstance(out.get("headers"), list):  # a server issues a fresh session id to every initialize
        out["headers"] = [[name, _session(name, value, copy)] for name, value in out["headers"]]
    if out.get("type") in ("line", "exit") and isinstance(out.get("conn"), str):
        out["conn"] = f"{out['conn']}-{copy}"  # every copy of a stdio run is a server process of its own
    return out


def _session(name: Any, value: Any, copy: int) -> Any:
    return f"{value}-{copy}" if str(name).lower() == "mcp-session-id" else value


def _stdio(copy: int) -> Iterator[Exchange]:
    base = 1_000_000.0 + copy * TIME_STEP
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    lines = [
        (Side.CLIENT, {"jsonrpc": "2.0", "id": copy * 10 + 1, "method": "tools/list", "params": {"_meta": meta}}),
        (Side.SERVER, {"jsonrpc": "2.0", "id": copy * 10 + 1, "result": {"tools": [], "resultType": "complete"}}),
        (Side.CLIENT, {"jsonrpc": "2.0", "id": copy * 10 + 2, "method": "ping", "params": {"_meta": meta}}),
        (Side.SERVER, {"jsonrpc": "2.0", "id": copy * 10 + 2, "error": {"code": -32601, "message": "no"}}),
    ]
    for number, (sender, body) in enumerate(lines):
        raw = json.dumps(body).encode() + b"\n"
        yield StdioLine.build(id=f"s{copy}-{number}", connection="stdio-1", sender=sender, time=base + number, raw=raw)


def traffic(copies: int) -> list[Exchange]:
    """``copies`` copies of every sample session, interleaved copy by copy."""
    samples = []
    for name in SAMPLES:
        with (RECORDINGS / name).open(encoding="utf-8") as handle:
            records = (record for _, record in iter_records(handle, lambda problem: None))
            samples.append([record for record in records if record.get("type") != "recording"])
    exchanges: list[Exchange] = []
    for copy in range(copies):
        for number, records in enumerate(samples):
            assembler = Assembler()
            for record in records:
                exchanges.extend(assembler.feed(_copy(record, copy, f"r{number}-")))
            exchanges.extend(assembler.close())
        exchanges.extend(_stdio(copy))
    return exchanges


def work_per_check(
    spec: SpecSet, exchanges: list[Exchange], *, checks: list[Check] | None = None, root: str = RULES
) -> Counter[str]:
    """Lines of rule code (under ``root``, ``spec/rules/`` by default) executed while judging ``exchanges``,
    per check running at the time; the engine's own work is measured apart, by :func:`engine_work`."""
    judge = Judge(spec, checks=checks)
    counts: Counter[str] = Counter()
    monitoring = sys.monitoring
    tool = monitoring.PROFILER_ID

    def on_line(code: Any, line: int) -> Any:
        if root not in code.co_filename:
            return monitoring.DISABLE  # the engine and libraries are measured as a whole, not per line
        check = judge.ctx.check
        counts[check.name if check is not None else "engine"] += 1
        return None

    _monitored(tool, monitoring.events.LINE, on_line, lambda: _judge_all(judge, exchanges))
    return counts


def engine_work(spec: SpecSet, exchanges: list[Exchange]) -> int:
    """Python functions of mcp-assay outside the rules entered while judging ``exchanges`` (the log, the
    engine, evidence), with no check registered, so only the machinery is measured."""
    judge = Judge(spec, checks=[])
    calls = 0

    def on_start(code: Any, offset: int) -> Any:
        nonlocal calls
        if PACKAGE not in code.co_filename or RULES in code.co_filename:
            return sys.monitoring.DISABLE
        calls += 1
        return None

    _monitored(
        sys.monitoring.PROFILER_ID, sys.monitoring.events.PY_START, on_start, lambda: _judge_all(judge, exchanges)
    )
    return calls


def _judge_all(judge: Judge, exchanges: list[Exchange]) -> None:
    for exchange in exchanges:
        judge.add(exchange)
    judge.verdicts()


def _monitored(tool: int, event: int, callback: Any, work: Any) -> None:
    monitoring = sys.monitoring
    monitoring.use_tool_id(tool, "mcp-assay-growth")
    try:
        monitoring.register_callback(tool, event, callback)
        monitoring.set_events(tool, event)
        work()
    finally:
        monitoring.set_events(tool, 0)
        monitoring.register_callback(tool, event, None)
        monitoring.free_tool_id(tool)


def package_lines(work: Callable[[], object]) -> int:
    """Lines of mcp-assay (any module) executed while ``work`` runs: loops count, not only calls."""
    lines = 0

    def on_line(code: Any, line: int) -> Any:
        nonlocal lines
        if PACKAGE not in code.co_filename:
            return sys.monitoring.DISABLE
        lines += 1
        return None

    _monitored(sys.monitoring.PROFILER_ID, sys.monitoring.events.LINE, on_line, work)
    return lines
