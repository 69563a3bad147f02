"""Token validation against a real JWT-validating server, with the stub authorization server it trusts.

``tests/peers/jwt_server.py`` validates with PyJWT against the stub's key set; each ``--fault``
removes one check. Over the real CLI, ``mcp-assay run --config`` (a ``stub`` section, no ``-t``:
the run's own token is minted by the stub) passes AUTH-16..19 on the correct build, fails exactly
the requirement each fault breaks, and says why nothing could be established when the target does
not trust the stub. ``mcp-assay stub init`` and ``stub serve`` are exercised as a user runs them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.server import StubServer
from mcp_assay.suite.stub.tokens import control_token
from tests.peers.process import HERE, RunningServer, free_port, http_server, stop, wait_for_port

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

CLI = [sys.executable, "-m", "mcp_assay"]
ROOT = HERE.parent.parent
CHECKS = {
    "AUTH-16": "tokens_for_another_audience_are_refused",
    "AUTH-17": "tokens_from_a_foreign_issuer_are_refused",
    "AUTH-18": "tokens_with_an_untrusted_signature_are_refused",
    "AUTH-19": "tokens_outside_their_lifetime_are_refused",
}


@pytest.fixture(scope="module")
def stub_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """A key made by `mcp-assay stub init`, and a config whose stub listens on a free port."""
    folder = tmp_path_factory.mktemp("stub")
    key = folder / "stub-key.pem"
    made = subprocess.run([*CLI, "stub", "init", "--key-file", str(key)], capture_output=True, text=True, check=False)
    assert made.returncode == 0 and "signing key written to" in made.stdout, made.stderr
    again = subprocess.run([*CLI, "stub", "init", "--key-file", str(key)], capture_output=True, text=True, check=False)
    assert again.returncode == 2 and "pass --force to replace it" in again.stderr
    port = free_port()
    (folder / "mcp-assay.yaml").write_text(
        yaml.safe_dump({"stub": {"key_file": str(key), "listen": f"127.0.0.1:{port}"}}), encoding="utf-8"
    )
    return folder / "mcp-assay.yaml", port


@contextmanager
def jwt_server(issuer: str, fault: str | None = None, *scopes: str) -> Iterator[RunningServer]:
    port = free_port()
    command = [sys.executable, str(HERE / "jwt_server.py"), str(port), issuer, *scopes]
    command += ["--fault", fault] if fault else []
    with http_server(command, port, env={"PYTHONPATH": str(ROOT)}) as server:
        yield server


def run(spec_path: Path, tmp_path: Path, url: str, config: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    report = tmp_path / f"report-{time.monotonic_ns()}.json"
    done = subprocess.run(
        [*CLI, "run", "-u", url, "--config", str(config), "--spec-dir", str(spec_path), "--only", "tokens",
         "--report", f"json:{report}", "--report", "terminal", *extra],
        capture_output=True, text=True, timeout=90, check=False,
    )  # fmt: skip
    return done.returncode, json.loads(report.read_text(encoding="utf-8")), done.stdout


def outcomes(report: dict[str, Any]) -> dict[str, str]:
    by_check = {item["check"]: item["outcome"] for item in report["results"]}
    return {requirement: by_check[check] for requirement, check in CHECKS.items()}


def test_a_server_that_validates_every_property_passes(
    spec_path: Path, tmp_path: Path, stub_files: tuple[Path, int]
) -> None:
    """Spec-mandated (AUTH-16..19): every variant refused between served controls; the run's own token came
    from the stub."""
    config, port = stub_files
    with jwt_server(f"http://127.0.0.1:{port}") as server:
        code, report, text = run(spec_path, tmp_path, server.url, config)
    assert code == 0, text
    assert set(outcomes(report).values()) == {"passed"}, outcomes(report)
    assert any("the run's own token was minted by the stub" in note for note in report["notes"])
    tokens = [item for item in json.dumps(report).split('"') if item.startswith("eyJ")]
    assert not tokens, "a stub token reached the report"


@pytest.mark.parametrize(
    ("fault", "requirement", "detail"),
    [
        ("skip_aud", "AUTH-16", "(aud https://other-service.mcp-assay.invalid/api) was served"),
        ("skip_iss", "AUTH-17", "(iss https://evil-issuer.mcp-assay.invalid, signed by the trusted key) was served"),
        ("skip_exp", "AUTH-19", "(exp an hour in the past) was served"),
        ("exp_optional", "AUTH-19", "(no exp claim (a token that never expires)) was served"),
        ("iss_optional", "AUTH-17", "(no iss claim, signed by the trusted key) was served"),
        ("skip_signature", "AUTH-18", "(unsigned, alg none) was served"),
        ("trust_jku", "AUTH-18", "(signed by an untrusted key announced in a jku header) was served"),
    ],
)
def test_each_missing_check_fails_its_requirement_alone(
    spec_path: Path, tmp_path: Path, stub_files: tuple[Path, int], fault: str, requirement: str, detail: str
) -> None:
    """Spec-mandated (AUTH-16..19): one validation step removed, one requirement failed."""
    config, port = stub_files
    with jwt_server(f"http://127.0.0.1:{port}", fault) as server:
        code, report, text = run(spec_path, tmp_path, server.url, config)
    assert code == 1, text
    assert outcomes(report) == {key: "failed" if key == requirement else "passed" for key in CHECKS}
    failed = next(item for item in report["results"] if item["check"] == CHECKS[requirement])
    assert any(detail in (evidence.get("detail") or "") for evidence in failed["evidence"]), failed["evidence"]


def test_a_jku_fetch_is_caught_through_a_stub_kept_up_by_stub_serve(
    spec_path: Path, tmp_path: Path, stub_files: tuple[Path, int]
) -> None:
    """Spec-mandated (AUTH-18): the target fetched the key set the token named, which `stub serve` noted and the
    run read back (that stub's untrusted key is not the run's, so the token itself was still refused)."""
    config, port = stub_files
    command = [*CLI, "stub", "serve", "--config", str(config)]
    serving = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, serving)
        with jwt_server(f"http://127.0.0.1:{port}", "trust_jku") as server:
            code, report, text = run(spec_path, tmp_path, server.url, config)
    finally:
        stop(serving)
    assert code == 1, text
    failed = next(item for item in report["results"] if item["check"] == CHECKS["AUTH-18"])
    details = " ".join(evidence.get("detail") or "" for evidence in failed["evidence"])
    assert "the target fetched the untrusted key set a token's jku header named" in details


def test_a_target_that_does_not_trust_the_stub_leaves_them_not_verified(
    spec_path: Path, tmp_path: Path, stub_files: tuple[Path, int]
) -> None:
    """Tool-defined: the run's own token is accepted (another issuer), the stub's control is not: nothing is
    attributable, and the report says how to make the target trust the stub."""
    config, _ = stub_files
    other_port = free_port()
    other_issuer = f"http://127.0.0.1:{other_port}"
    other = SigningKey.generate()
    elsewhere = StubServer("127.0.0.1", other_port, other_issuer, other, SigningKey.generate())
    try:
        with jwt_server(other_issuer) as server:
            own = control_token(other, other_issuer, server.url, [])
            code, report, text = run(spec_path, tmp_path, server.url, config, "-t", own)
    finally:
        elsewhere.close()
    assert code == 0, text
    results = {item["check"]: item for item in report["results"]}
    for check in CHECKS.values():
        assert results[check]["outcome"] == "not_verified"
        assert "did not serve tools/list with the stub's control token" in results[check]["reason"]
        assert "make it trust issuer" in results[check]["reason"]


SCOPE_CHECKS = {
    "AUTH-22": "tokens_lacking_an_operations_scopes_do_not_perform_it",
    "AUTH-15": "tokens_lacking_several_scopes_get_one_challenge_naming_all",
    "AUTH-23": "tokens_with_a_broad_scope_get_what_it_implies",
    "AUTH-26": "tokens_lacking_a_scope_cannot_borrow_another_tools_name",
}


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (None, {"AUTH-22": "passed", "AUTH-15": "passed", "AUTH-23": "passed", "AUTH-26": "passed"}),
        # the SDK itself rejects Mcp-Name/body disagreement with -32020, so AUTH-26 holds without tool scopes too
        ("no_tool_scope", {"AUTH-22": "failed", "AUTH-15": "not_verified", "AUTH-23": "passed", "AUTH-26": "passed"}),
        ("no_hierarchy", {"AUTH-22": "passed", "AUTH-15": "passed", "AUTH-23": "failed", "AUTH-26": "passed"}),
        ("scope_incremental", {"AUTH-22": "passed", "AUTH-15": "failed", "AUTH-23": "passed", "AUTH-26": "passed"}),
    ],
)
def test_tool_scopes_are_enforced_named_and_implied(
    spec_path: Path, tmp_path: Path, stub_files: tuple[Path, int], fault: str | None, expected: dict[str, str]
) -> None:
    """Spec-mandated (AUTH-22, AUTH-15 SHOULD, AUTH-23, AUTH-26): `add` needs two scopes, `calc:admin` implies
    both, and naming another tool in Mcp-Name does not unlock it."""
    config, port = stub_files
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["stub"]["tool_scopes"] = {"add": ["calc:use", "calc:audit"]}
    data["stub"]["implies"] = {"calc:admin": ["calc:use", "calc:audit"]}
    data["tool-args"] = {"add": {"a": 1, "b": 2}}
    scoped = tmp_path / "scoped.yaml"
    scoped.write_text(yaml.safe_dump(data), encoding="utf-8")
    mapping = ["--tool-scope", "add=calc:use,calc:audit", "--implies", "calc:admin=calc:use,calc:audit"]
    with jwt_server(f"http://127.0.0.1:{port}", fault, *mapping) as server:
        code, report, text = run(spec_path, tmp_path, server.url, scoped)
    for revision in ("2026-07-28", "2025-11-25"):  # the scope cases run in each revision the server serves
        by_check = {item["check"]: item for item in report["results"] if item["revision"] == revision}
        found = {key: by_check[check]["outcome"] for key, check in SCOPE_CHECKS.items()}
        wanted = expected if revision == "2026-07-28" else {**expected, "AUTH-26": "not_applicable"}  # Mcp-Name
        assert found == wanted, (revision, text)
    # every check judges the probes --only tokens sends (issue 28): what else they show counts as in a full run
    must = {item["check"] for item in report["results"] if item["outcome"] == "failed" and item["severity"] == "must"}
    assert SCOPE_CHECKS["AUTH-15"] not in must  # a SHOULD: it never decides the exit code
    assert code == (1 if must else 0)


@pytest.mark.parametrize(
    ("fault", "upstream", "expected", "detail"),
    [
        (None, "sink", "passed", "carried no copy of the client's token"),
        ("passthrough", "sink", "failed", "carried the client's token in its headers"),
        (None, "elsewhere", "not_verified", "the stub's sink received no upstream request"),
    ],
)
def test_the_clients_token_is_not_passed_upstream(
    spec_path: Path, tmp_path: Path, stub_files: tuple[Path, int], fault: str | None, upstream: str, expected: str,
    detail: str,
) -> None:  # fmt: skip
    """Spec-mandated (AUTH-27, MUST NOT): fetch_upstream calls the upstream API the target is pointed at; the
    stub's sink stands in for it and says whether the call's token came along (never showing the token)."""
    config, port = stub_files
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["stub"]["passthrough_tool"] = "fetch_upstream"
    data["tool-args"] = {"fetch_upstream": {"item": "42"}}
    with_sink = tmp_path / "passthrough.yaml"
    with_sink.write_text(yaml.safe_dump(data), encoding="utf-8")
    url = f"http://127.0.0.1:{port}/sink/" if upstream == "sink" else f"http://127.0.0.1:{free_port()}/"
    with jwt_server(f"http://127.0.0.1:{port}", fault, "--upstream", url) as server:
        code, report, text = run(spec_path, tmp_path, server.url, with_sink)
    result = next(item for item in report["results"] if item["check"] == "tokens_are_not_passed_upstream")
    assert result["outcome"] == expected, text
    assert detail in result["reason"]
    assert "eyJ" not in json.dumps(report)
