"""A number longer than Python converts never makes a message vanish (issue 28, "False verdicts").

Python refuses to turn an integer's text of more than 4,300 digits into an ``int``; mcp-assay's reader
used to stop there, so a server answering with a 4,301-digit id was "conformant in part" where the
same server with 4,300 digits failed RPC-05, and the same number inside ``tools[0]._meta`` hid the
server's broken ``tools/call`` results (RES-04, TOOL-09). A real server on a loopback socket
(:mod:`tests.peers.sdk_hostile_server`) answers with such numbers; ``mcp-assay run`` (recording) and
``mcp-assay validate`` of that recording, both in subprocesses, must give the same failures at 4,300
and 4,301 digits. What mcp-assay still cannot read (nesting past the parser's depth) is said: RPC-05 is
*not verified* with the reason, never passed.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.peers.assay import ROOT
from tests.peers.process import PYTHON, free_port, http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

BOTH = ("2026-07-28", "2025-11-25")


@contextmanager
def hostile(mode: str, size: int) -> Iterator[str]:
    port = free_port()
    command = [PYTHON, "-m", "tests.peers.sdk_hostile_server", str(port), mode, str(size)]
    with http_server(command, port, env={"PYTHONPATH": str(ROOT)}) as server:
        yield server.url


def mcp_assay(spec_path: Path, report: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    command = [PYTHON, "-m", "mcp_assay", *args, "--spec-dir", str(spec_path), "--report", f"json:{report}"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=150, check=False)
    return done.returncode, json.loads(report.read_text(encoding="utf-8")), done.stdout + done.stderr


def failed(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (requirement, item["revision"])
        for item in report["results"]
        if item["outcome"] == "failed"
        for requirement in item["requirements"]
    }


def run_and_validate(spec_path: Path, tmp_path: Path, mode: str, digits: int, *extra: str) -> set[tuple[str, str]]:
    """The failures of ``run`` against the server, checked to be the failures ``validate`` finds in its recording."""
    recording = tmp_path / f"{mode}-{digits}.jsonl"
    with hostile(mode, digits) as url:
        code, report, output = mcp_assay(spec_path, tmp_path / "run.json", "run", "-u", url, "--timeout", "5",
                                         "--record", str(recording), *extra)  # fmt: skip
    assert "Traceback" not in output and "internal error" not in output, output
    assert code == report["verdict"]["exit_code"] == 1, output
    found = failed(report)
    code, again, output = mcp_assay(spec_path, tmp_path / "validate.json", "validate", str(recording))
    assert code == 1 and "Traceback" not in output, output
    assert {requirement for requirement, _ in failed(again)} == {requirement for requirement, _ in found}
    return found


@pytest.mark.parametrize("digits", [4300, 4301])
def test_an_answer_whose_id_has_more_digits_than_python_converts_still_fails_rpc_05(
    spec_path: Path, tmp_path: Path, digits: int
) -> None:
    """Spec-mandated (RPC-05): a response's id is the request's; 4,301 digits judge as 4,300 do."""
    found = run_and_validate(spec_path, tmp_path, "digits", digits)
    assert {("RPC-05", revision) for revision in BOTH} <= found, found


@pytest.mark.parametrize("digits", [4300, 4301])
def test_a_long_number_in_a_tools_meta_hides_no_failure_of_its_calls(
    spec_path: Path, tmp_path: Path, digits: int
) -> None:
    """Spec-mandated (TOOL-09, RES-04): the listing is read whatever its numbers, so the broken results of the
    calls it leads to fail."""
    found = run_and_validate(spec_path, tmp_path, "meta-digits", digits, "--tool-args", '{"echo": {"message": "hi"}}')
    assert {(requirement, revision) for requirement in ("RES-04", "TOOL-09") for revision in BOTH} <= found, found


def test_an_answer_mcp_assay_cannot_read_leaves_rpc_05_not_verified_with_the_reason(
    spec_path: Path, tmp_path: Path
) -> None:
    """Tool-defined: nesting past the parser's depth is a limit of mcp-assay; what rests on it is said, not passed."""
    with hostile("deep", 5000) as url:
        code, report, output = mcp_assay(spec_path, tmp_path / "run.json", "run", "-u", url, "--timeout", "5")
    rpc05 = [item for item in report["results"] if item["check"] == "each_request_gets_exactly_one_response"]
    assert {item["revision"] for item in rpc05} == set(BOTH), rpc05
    for item in rpc05:
        assert item["outcome"] == "not_verified", item
        assert "could not read a message there" in item["reason"] and "nests deeper" in item["reason"], item
    assert code == report["verdict"]["exit_code"] == 0, output
