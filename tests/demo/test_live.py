"""Live findings in the demo: each check's first failure once, from the proxy's lines and the suite's traffic."""

from __future__ import annotations

import threading

from mcp_assay.demo.live import FirstFindings, SuiteJudge
from mcp_assay.spec import SpecSet
from tests.factories import http, modern_call, request_body


def collect() -> tuple[FirstFindings, list[tuple[str, str]]]:
    shown: list[tuple[str, str]] = []
    return FirstFindings(lambda origin, line: shown.append((origin, line))), shown


def test_only_the_proxys_finding_lines_are_relayed_each_once() -> None:
    """Tool-defined: exchange lines and notices stay out; a repeated finding of one check is shown once."""
    first, shown = collect()
    first.proxy_line("mcp-assay proxy listening on http://127.0.0.1:1/mcp → http://127.0.0.1:2/mcp\n")
    first.proxy_line("14:49:09.382 POST /mcp · request tools/list id=1 → 200 application/json (2026-07-28)\n")
    finding = "  ✗ TOOL-11 A result with structuredContent also carries it as text. [server · should] tool 'x'\n"
    first.proxy_line(finding)
    first.proxy_line(finding.replace("tool 'x'", "tool 'y'"))
    assert shown == [("proxy", finding.strip())]


def test_first_findings_is_safe_to_offer_from_several_threads() -> None:
    """Tool-defined: the proxy's reader thread and the judge's worker may offer the same key at once."""
    first, shown = collect()
    threads = [threading.Thread(target=first.offer, args=("same", "suite", f"line {n}")) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert len(shown) == 1


def test_the_suite_judge_shows_a_servers_message_level_failure_as_it_is_fed(spec: SpecSet) -> None:
    """Tool-defined: an answer that breaks JSON-RPC is a live finding as soon as its exchange is recorded."""
    first, shown = collect()
    judge = SuiteJudge(spec, first, ["a-secret-token-value"])
    judge.exchange(http(request_body("tools/list"), {"jsonrpc": "1.0", "id": 1, "result": {"tools": []}}))
    judge.close()
    assert shown, "no live finding for a response declaring jsonrpc 1.0"
    assert all(origin == "suite" and line[:2] in ("✗ ", "⚠ ", "ℹ ") for origin, line in shown)
    assert any(line.startswith("✗ RPC-01") for _, line in shown), shown


def test_the_suite_judge_shows_nothing_for_clean_traffic(spec: SpecSet) -> None:
    """Tool-defined: no finding is invented for an ordinary exchange."""
    first, shown = collect()
    judge = SuiteJudge(spec, first, [])
    judge.exchange(modern_call("tools/list", {}, {"tools": [], "ttlMs": 0, "cacheScope": "private"}))
    judge.close()
    assert shown == []
