"""The official SDK's own client against real servers: independent evidence for the verdict (issue 13 §3).

The SDK fixture server passes in both eras; the broken-suite server under uvicorn, with one bug,
fails the case the SDK's own validation catches. ``tests/suite/test_interop.py`` covers a machine
without the SDK.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_suite_e2e import BROKEN_ARGS, SDK_ARGS, broken_http, run, sdk_http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def outcomes(report: dict[str, Any], version: str | None) -> dict[str, tuple[str, str]]:
    """The stock-client verdicts of one tested revision (the newest, 2026-07-28, when no version was named)."""
    revision = version or "2026-07-28"
    return {
        item["check"]: (item["outcome"], item["reason"])
        for item in report["results"]
        if "sdk" in item["check"] and item.get("revision") == revision
    }


@pytest.mark.parametrize(
    ("version", "connect"),
    [(None, "a_stock_sdk_client_discovers_the_server"), ("2025-11-25", "a_stock_sdk_client_completes_the_handshake")],
)
def test_the_sdk_client_gets_along_with_the_sdk_server_in_both_eras(
    spec_path: Path, tmp_path: Path, version: str | None, connect: str
) -> None:
    """Spec-mandated (VER-07 / HS-04, HS-05, TOOL-05) through the SDK's own validation; the unconfigured client's
    landing is noted."""
    extra = ["--spec-version", version] if version else []
    with sdk_http_server() as server:
        report = run(spec_path, tmp_path, "-u", server.url, *SDK_ARGS, "--only", "sdk", *extra)
    found = outcomes(report, version)
    assert found[connect][0] == "passed" and found["a_stock_sdk_client_lists_the_tools"][0] == "passed", found
    assert any("stock client: an unconfigured SDK client (mode auto, no headers) just works; it settled on "
               "2026-07-28, inside the window" in note for note in report["notes"])  # fmt: skip


@pytest.mark.parametrize(
    ("bug", "version", "check", "detail"),
    [
        ("tool-without-input-schema", None, "a_stock_sdk_client_lists_the_tools", "ListToolsResult"),
        ("initialize-without-server-info", "2025-11-25", "a_stock_sdk_client_completes_the_handshake",
         "InitializeResult serverInfo"),
    ],
)  # fmt: skip
def test_what_the_sdk_refuses_fails_the_case(
    spec_path: Path, tmp_path: Path, bug: str, version: str | None, check: str, detail: str
) -> None:
    """Spec-mandated (TOOL-05, HS-04): the SDK's validation error about an answer is a failure of the server."""
    extra = ["--spec-version", version] if version else []
    with broken_http(bug) as url:
        report = run(spec_path, tmp_path, "-u", url, *BROKEN_ARGS, "--only", "sdk", *extra)
    outcome, reason = outcomes(report, version)[check]
    assert outcome == "failed" and "the SDK's own validation refused the answer" in reason and detail in reason
