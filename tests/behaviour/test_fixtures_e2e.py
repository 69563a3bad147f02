"""The behaviour cases against other real servers: the Python SDK fixture per server setting, and a
deliberately broken drafts server.

The SDK's cancellation depends on how the server is run (notes/RUNNABLE.md §6): in JSON-response
mode a 2026 disconnect does not reach the handler, and in stateless mode a 2025
``notifications/cancelled`` reaches a fresh instance that never saw the call. The race finds the
late write in exactly the era each setting loses, and not in the other.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.behaviour.servers import run_suite
from tests.peers.process import free_port, http_server, sdk_http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

HERE = Path(__file__).resolve().parent
IMPORTABLE = {"PYTHONPATH": str(HERE.parent.parent)}
"""The fixture scripts import shared pieces from ``tests.peers``."""
SLOW_WRITE = {
    "witnesses": {"writes": {"mcp": {"tool": "get_writes"}, "extract": "structuredContent.result|len"}},
    "write_tools": {
        "slow_write": {
            "arguments": {"tag": "mcp-assay"},
            "witness": "writes",
            "cancellation": {"delay_argument": {"delay_ms": 400}, "timeout_ms": 100, "settle_ms": 1200},
        }
    },
}
RACE_ONLY = "timed_out_calls_leave_no_late_write"


@pytest.mark.parametrize(
    ("flag", "late", "kept"),
    [("--json", "2026-07-28", "2025-11-25"), ("--stateless", "2025-11-25", "2026-07-28")],
)
def test_the_sdk_server_writes_late_in_the_era_its_setting_loses(
    spec_path: Path, tmp_path: Path, flag: str, late: str, kept: str
) -> None:
    """Spec-mandated (BEH-06): a late write per era and server setting, with the timing in the report."""
    with sdk_http_server(flag) as server:
        run = run_suite(spec_path, tmp_path, ["-u", server.url], SLOW_WRITE, {}, only=RACE_ONLY)
    result = run.result("BEH-06")
    assert result["outcome"] == "failed" and result["violations"] == 1
    (detail,) = run.details("BEH-06")
    assert detail.startswith(f"{late} over http, slow_write: sent +0 ms, gave up +")
    assert "the write landed after the caller gave up" in detail
    timelines = {note.split(" over ")[0].removeprefix("cancel race "): note for note in run.notes("cancel race")}
    before, after = re.search(r"(\d+) → (\d+)$", timelines[kept]).groups()  # type: ignore[union-attr]
    assert before == after, timelines[kept]


def test_a_polite_refusal_after_the_write_is_caught_by_storage(spec_path: Path, tmp_path: Path) -> None:
    """Spec-mandated (BEH-05): isError came back, the record landed anyway; an unstable witness decides
    nothing; a call too quick to race is not verified."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    config: dict[str, Any] = {
        "witnesses": {
            "count": {"http": {"url": f"{base}/_test/count"}, "extract": "count"},
            "noisy": {"http": {"url": f"{base}/_test/noisy"}, "extract": "count", "stability_ms": 50},
        },
        "write_tools": {
            "create_draft": {
                "arguments": {"title": "t"},
                "witness": "count",
                "settle_ms": 100,
                "refusals": {"extra_arguments": {"publish": True}},
                "cancellation": {"timeout_ms": 100, "settle_ms": 200},
            }
        },
        "read_tools": {"list_drafts": {"witness": "noisy", "settle_ms": 50}},
    }
    command = [sys.executable, str(HERE / "broken_drafts.py"), str(port)]
    with http_server(command, port, env=IMPORTABLE) as server:
        run = run_suite(spec_path, tmp_path, ["-u", server.url, "--spec-version", "2026-07-28"], config, {})
    assert run.outcome("BEH-05") == "failed"
    assert "a result with isError: true, yet witness count moved" in run.result("BEH-05")["reason"]
    assert run.outcome("BEH-03") == "passed"  # the answer's channel was right; only storage tells
    assert run.outcome("BEH-06") == "not_verified"
    assert "too little work to give up on" in run.result("BEH-06")["reason"]
    assert run.outcome("BEH-08") == "not_verified"
    assert "moved on its own" in run.result("BEH-08")["reason"]
    assert run.outcome("BEH-04") == "not_verified"  # no expected table configured


def test_a_write_ahead_of_dispatch_is_caught_by_the_unknown_name_and_header_refusals(
    spec_path: Path, tmp_path: Path
) -> None:
    """Spec-mandated (BEH-05, R5 and R6): a call naming an unknown tool, or carrying an Mcp-Name that
    names another tool, still wrote; with no credential in use R3 and R4 are not sent, and the run says so."""
    port = free_port()
    config: dict[str, Any] = {
        "witnesses": {"count": {"http": {"url": f"http://127.0.0.1:{port}/_test/count"}, "extract": "count"}},
        "write_tools": {"create_draft": {"arguments": {"title": "t"}, "witness": "count", "settle_ms": 100}},
    }
    command = [sys.executable, str(HERE / "broken_drafts.py"), str(port), "--eager"]
    with http_server(command, port, env=IMPORTABLE) as server:
        run = run_suite(spec_path, tmp_path, ["-u", server.url, "--spec-version", "2026-07-28"], config, {},
                        only="refused_calls_change_nothing")  # fmt: skip
    result = run.result("BEH-05")
    assert result["outcome"] == "failed" and result["violations"] == 2, result["reason"]
    details = " ".join(run.details("BEH-05"))
    assert "tools/call of the unknown tool create_draft_mcp_assay_unknown with create_draft's arguments was " in details
    assert "tools/call create_draft under an Mcp-Name header naming list_drafts was answered with HTTP 400" in details
    assert details.count("the call wrote although it must be refused") == 2
    assert run.notes("2026-07-28 over http: create_draft is called without a credential")
