"""`mcp-assay run` against published third-party servers, as their users would run them: the official time and
git servers (PyPI, Python SDK, stdio), the filesystem and memory servers (npm, TypeScript SDK, stdio) and
server-everything (npm, Streamable HTTP). ``tests/peers/setup.sh`` installs them (the PyPI ones in a venv of
their own under ``tests/peers/corpus/``).

Every MUST-level failure is pinned in ``corpus_expected.yaml`` with a one-line justification from the spec
text: a failure not pinned there fails the test, and so does a pinned one that no longer occurs, so the file
stays true. The runs use ``--timeout 3 --stream-budget-ms 800`` (the servers answer in milliseconds; what a
stdio server leaves unanswered would otherwise be waited for 10 s a probe) to keep the corpus near a minute.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from mcp_assay.cli import cli
from tests.peers.process import HERE, free_port, http_server

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(180)]

CORPUS = HERE / "corpus"
VENV_BIN = CORPUS / "venv" / "bin"
NPM = CORPUS / "node" / "node_modules" / "@modelcontextprotocol"
EVERYTHING = HERE / "node" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
EXPECTED: dict[str, Any] = yaml.safe_load(Path(__file__).with_name("corpus_expected.yaml").read_text("utf-8"))
NARROW = ["--timeout", "3", "--stream-budget-ms", "800"]


def pinned(target: str) -> dict[str, dict[str, str]]:
    """Revision -> requirement ID -> justification (YAML reads an unquoted date as a date)."""
    failures = EXPECTED[target]["failures"]
    return {str(revision): {str(ident): str(why) for ident, why in ids.items()} for revision, ids in failures.items()}


def installed(path: Path) -> str:
    if not path.exists():
        pytest.skip(f"corpus server missing: run `bash tests/peers/setup.sh` ({path} not found)")
    return shlex.quote(str(path))


def git_repository(folder: Path) -> Path:
    folder.mkdir()
    quiet = {"check": True, "capture_output": True, "cwd": folder, "timeout": 30}
    subprocess.run(["git", "init", "-q"], **quiet)  # type: ignore[call-overload]
    (folder / "README").write_text("corpus\n", encoding="utf-8")
    subprocess.run(["git", "add", "README"], **quiet)  # type: ignore[call-overload]
    subprocess.run(  # type: ignore[call-overload]
        ["git", "-c", "user.name=mcp-assay", "-c", "user.email=corpus@mcp-assay.invalid", "commit", "-qm", "init"],
        **quiet,
    )
    return folder


@contextmanager
def target(name: str, tmp_path: Path) -> Iterator[list[str]]:
    """The `run` arguments that reach ``name`` (an HTTP server runs until the block ends)."""
    if name == "mcp-server-time":
        yield ["-c", f"{installed(VENV_BIN / 'mcp-server-time')} --local-timezone UTC"]
    elif name == "mcp-server-git":
        repository = git_repository(tmp_path / "repository")
        yield ["-c", f"{installed(VENV_BIN / 'mcp-server-git')} --repository {shlex.quote(str(repository))}"]
    elif name == "server-filesystem":
        allowed = tmp_path / "files"
        allowed.mkdir()
        (allowed / "note.txt").write_text("hello\n", encoding="utf-8")
        yield ["-c", f"node {installed(NPM / 'server-filesystem' / 'dist' / 'index.js')} {shlex.quote(str(allowed))}"]
    elif name == "server-memory":
        store = shlex.quote(str(tmp_path / "memory.jsonl"))  # never the package's own folder
        yield ["-c", f"env MEMORY_FILE_PATH={store} node {installed(NPM / 'server-memory' / 'dist' / 'index.js')}"]
    elif name == "server-everything":
        entry = installed(EVERYTHING)
        port = free_port()
        with http_server(["node", entry, "streamableHttp"], port, env={"PORT": str(port)}) as server:
            yield ["-u", server.url.replace("localhost", "127.0.0.1")]
    else:  # pragma: no cover - the parametrisation names only the targets above
        raise AssertionError(name)


def must_failures(report: dict[str, Any], revision: str) -> set[str]:
    return {
        ident
        for item in report["results"]
        if item["outcome"] == "failed" and item["severity"] == "must" and item.get("revision") == revision
        for ident in item["requirements"]
    }


@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_must_failure_of_a_published_server_is_pinned_with_its_justification(
    name: str, spec_path: Path, tmp_path: Path
) -> None:
    """Spec-mandated (each pin's justification): the run tests the revisions pinned, fails exactly the pinned MUST
    requirements in each, and its exit status, verdict code and text agree."""
    expected = pinned(name)
    for revision, ids in expected.items():
        for ident, why in ids.items():
            assert why.strip() and "\n" not in why.strip() and len(why) >= 20, (name, revision, ident)
    report_path = tmp_path / "report.json"
    with target(name, tmp_path) as args:
        result = CliRunner().invoke(
            cli, ["run", *args, *NARROW, "--spec-dir", str(spec_path), "--report", f"json:{report_path}"]
        )
    assert result.exit_code in (0, 1), result.output
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert result.exit_code == report["verdict"]["exit_code"], report["verdict"]
    assert not [note for note in report["notes"] if note.startswith("harness self-check")], report["notes"]
    assert sorted(report["revisions"]["tested"]) == sorted(expected), report["revisions"]["note"]
    for revision, ids in expected.items():
        found = must_failures(report, revision)
        unjustified = sorted(found - set(ids))
        gone = sorted(set(ids) - found)
        assert not unjustified, f"{name} {revision}: new MUST failures with no justification pinned: {unjustified}"
        assert not gone, f"{name} {revision}: pinned failures that no longer occur (remove them): {gone}"
    assert (result.exit_code == 1) == any(expected.values())
