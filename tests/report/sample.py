"""A hand-built report with one result of every kind the writers must render.

A failed MUST with evidence and a reproduction, a failed SHOULD found by ``run --explore`` (its evidence
carrying the input first drawn and the shrink steps), an informational note, a
not-verified result blocked by another check, two passes in different areas (one tagged
``explain``, whose reason every human format shows), and a not-applicable result.
Server-provided text carries Markdown, HTML and control characters, so every writer's escaping
is exercised by the golden files.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from mcp_assay.report.about import Stats, Target
from mcp_assay.report.model import FailOn, Report
from mcp_assay.report.untried import Generated, Untried
from mcp_assay.vocabulary.verdicts import Evidence, ExploredInput, Level, Outcome, Severity, Side, Source, Verdict

GENERATED_AT = "2026-01-02T03:04:05+00:00"

CURL = (
    "curl -sS -X POST http://127.0.0.1:8000/mcp -H 'content-type: application/json' "
    "-H 'authorization: Bearer [REDACTED]' --data-binary "
    '\'{"jsonrpc":"2.0","id":7,"method":"no/such_method","params":{}}\''
)


def failed_must() -> Verdict:
    return Verdict(
        check="undefined_method_is_answered_with_method_not_found",
        title="Requests for undefined methods are answered with -32601",
        area="JSON-RPC",
        requirements=("RPC-15",),
        level=Level.MUST,
        severity=Severity.MUST,
        side=Side.SERVER,
        outcome=Outcome.FAILED,
        source=Source.ACTIVE,
        reason="answered no/such_method with code -32600 instead of -32601",
        evidence=(
            Evidence(
                summary="POST /mcp no/such_method id=7 -> 200 application/json",
                detail="error.code is -32600, expected -32601 (method not found)",
                exchange="a-12",
                message=1,
                excerpt='{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"bad *request* <b>x</b> | `y`"}}',
                reproduction=CURL,
                revision="2026-07-28",
            ),
            Evidence(
                summary="POST /mcp other/unknown id=8 -> 200 application/json",
                detail="error.code is -32600, expected -32601 (method not found)",
                exchange="a-13",
                message=1,
                revision="2026-07-28",
            ),
        ),
        revisions=("2026-07-28",),
        judged=3,
        violations=2,
    )


def failed_should() -> Verdict:
    return Verdict(
        check="error_message_is_a_short_sentence",
        title="Error messages are short single sentences",
        area="JSON-RPC",
        requirements=("RPC-08",),
        level=Level.SHOULD,
        severity=Severity.SHOULD,
        side=Side.SERVER,
        outcome=Outcome.FAILED,
        source=Source.EXPLORED,
        reason="error.message holds a stack trace: *see* _logs_ [here](javascript:alert(1)) | # not a heading",
        evidence=(
            Evidence(
                summary="POST /mcp tools/call id=4 -> 200 application/json",
                detail="412 characters, 6 lines",
                exchange="p-4",
                message=1,
                excerpt='{"error":{"code":-32603,"message":"\x1b[31mTraceback\x1b[0m (most recent call last)"}}',
                explored=ExploredInput(
                    tool="search",
                    seed=1234,
                    kind="inside",
                    origin="edge",
                    generated='{"limit": 20, "query": "Grüße <b>*x*</b> | `y`"}',
                    steps=("removed limit", "query: 'Grüße <b>*x*</b> | `y`' → 'ü'"),
                ),
            ),
        ),
        judged=2,
        violations=1,
    )


def info_note() -> Verdict:
    return Verdict(
        check="tool_names_use_the_recommended_characters",
        title="Tool names use the recommended characters",
        area="Tools",
        requirements=("TOOL-08",),
        level=Level.SHOULD,
        severity=Severity.INFO,
        side=Side.SERVER,
        outcome=Outcome.FAILED,
        source=Source.PASSIVE,
        reason="tool name 'get weather' contains a space",
        evidence=(Evidence(summary="POST /mcp tools/list id=2 -> 200 application/json", exchange="p-2", message=1),),
        judged=4,
        violations=1,
    )


def not_verified() -> Verdict:
    return Verdict(
        check="tools_list_is_answered",
        title="A server declaring tools answers tools/list",
        area="Tools",
        requirements=("TOOL-02",),
        level=Level.MUST,
        severity=Severity.MUST,
        side=Side.SERVER,
        outcome=Outcome.NOT_VERIFIED,
        source=Source.ACTIVE,
        reason="no tools/list answer was observed",
        blocked_by="undefined_method_is_answered_with_method_not_found",
    )


def passed() -> Verdict:
    return Verdict(
        check="message_declares_jsonrpc_2_0",
        title="Every message declares jsonrpc 2.0",
        area="JSON-RPC",
        requirements=("RPC-01",),
        level=Level.MUST,
        severity=Severity.MUST,
        side=Side.BOTH,
        outcome=Outcome.PASSED,
        source=Source.PASSIVE,
        judged=14,
    )


def passed_tools() -> Verdict:
    return Verdict(
        check="tools_list_result_matches_the_schema",
        title="tools/list results match the schema",
        area="Tools",
        requirements=("TOOL-05",),
        level=Level.MUST,
        severity=Severity.MUST,
        side=Side.SERVER,
        outcome=Outcome.PASSED,
        source=Source.PASSIVE,
        reason="tool 'get_<b>weather</b>': *3* properties, all typed",
        tags=("explain",),
        judged=1,
    )


def not_applicable() -> Verdict:
    return Verdict(
        check="discover_result_is_cacheable",
        title="server/discover results carry cache hints",
        area="Discovery",
        requirements=("RES-06",),
        level=Level.MUST,
        severity=Severity.MUST,
        side=Side.SERVER,
        outcome=Outcome.NOT_APPLICABLE,
        source=Source.PASSIVE,
        reason="2025-11-25 does not define server/discover",
    )


def all_results() -> list[Verdict]:
    # Deliberately not in rendering order: writers must sort.
    return [passed_tools(), not_applicable(), info_note(), failed_should(), passed(), not_verified(), failed_must()]


def sample_report(fail_on: FailOn = FailOn.MUST, results: list[Verdict] | None = None, **extra: Any) -> Report:
    fields: dict[str, Any] = {
        "target": Target(kind="suite", description="http://127.0.0.1:8000/mcp", transport="streamable-http"),
        "tested": ["2026-07-28"],
        "revision_note": "the newest supported revision the server offers, per server/discover",
        "window": ["2026-07-28", "2025-11-25"],
        "notes": ["an unpinned schema was used for 2026-07-28 (/tmp/spec/2026-07-28/schema.json)"],
        "stats": Stats(exchanges=9, messages=17, duration_ms=412),
        "generated_at": GENERATED_AT,
        "tool": "mcp-assay 0.0.0",
        "fail_on": fail_on,
    }
    fields.update(extra)
    return Report(results=all_results() if results is None else results, **fields)


def eras_report(**extra: Any) -> Report:
    """A suite run that tested both revisions: RPC-15 fails in 2026-07-28 and passes in 2025-11-25 (one
    requirement, shown once per revision), the SHOULD finding and the blocked case are 2025-11-25's."""
    modern, legacy = "2026-07-28", "2025-11-25"
    results = [
        replace(failed_must(), revision=modern),
        replace(failed_must(), outcome=Outcome.PASSED, reason="", evidence=(), violations=0, revision=legacy),
        replace(failed_should(), revision=legacy, revisions=(legacy,)),
        replace(passed(), source=Source.ACTIVE, revision=modern, revisions=(modern,)),
        replace(passed(), source=Source.ACTIVE, revision=legacy, revisions=(legacy,)),
        replace(not_verified(), revision=legacy),
        replace(not_applicable(), revision=legacy),
    ]
    fields: dict[str, Any] = {
        "tested": [modern, legacy],
        "revision_note": f"{modern} and {legacy}: every revision in the window this server serves",
        "notes": [],
        "untried": [
            Untried(
                kind="tools",
                names=("search",),
                why="needs arguments, not annotated readOnlyHint",
                step="--generate-args search (plain values from its inputSchema) or --tool-args '{\"search\": {…}}'",
                requirements=("TOOL-10", "TOOL-11"),
            ),
        ],
        "generated": [Generated(tool="lookup", arguments='{"id": "mcp-assay"}', because="readOnlyHint")],
        **extra,
    }
    return sample_report(results=fields.pop("results", results), **fields)


def with_reason(result: Verdict, reason: str) -> Verdict:
    return replace(result, reason=reason)


GOLDEN = Path(__file__).parent / "golden"


def assert_golden(name: str, text: str) -> None:
    """Compare ``text`` with ``golden/<name>``; ``UPDATE_GOLDEN=1`` rewrites the file instead."""
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8", newline="")
    assert path.is_file(), f"{path} is missing; run with UPDATE_GOLDEN=1 to create it"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from its golden file; if the change is intended, UPDATE_GOLDEN=1"
