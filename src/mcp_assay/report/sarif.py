"""The report as SARIF 2.1.0, so code-scanning dashboards list conformance findings next to code alerts.

One run per report. Its tool names one rule per check the report holds (id = check name, with
the requirement IDs it cites, their level and, from the catalogue, our paraphrase of each and
where the specification says it), and one result per finding: a FAILED result is an ``error``, a
SHOULD one a ``warning``, an informational note a ``note``, and a failure the baseline
accepts keeps its level and carries an ``external`` suppression with the baseline's reason.
Passes and results that could not be verified are not findings and stay out (they are in the run's
``properties.summary`` counts and in the JSON report).

A result's message is its reason followed by its evidence, reproduction included, in the same
order the other writers use. Code scanning only accepts repository-relative paths as locations,
so the location is named after the target: the script of a stdio command (``python server.py``
gives ``server.py``) or ``host_port/path`` for an endpoint URL. A partial fingerprint made of the
check, its source and (for a suite run) the revision it was reached in keeps an alert's identity
across runs: the same check failing in two revisions is two alerts. User information in a URL
(``user:password@``) never reaches the log, redacted or not: the whole log is written without it.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote, urlsplit

from mcp_assay.report.about import Target
from mcp_assay.report.console import sections
from mcp_assay.report.findings import finding_fingerprint, finding_id
from mcp_assay.report.model import Report, sort_results
from mcp_assay.report.plain import evidence_lines, one_line
from mcp_assay.vocabulary.verdicts import RequirementText, Severity, Verdict

__all__ = ["SARIF_SCHEMA", "SARIF_VERSION", "artifact_uri", "render_sarif"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT = "mcpAssayResult/v1"
"""Key of the partial fingerprint every result carries (``check`` and ``source``, hashed)."""

_LEVEL = {"failed": "error", "recommended": "warning", "notes": "note"}
_BY_SEVERITY = {Severity.MUST: "error", Severity.SHOULD: "warning", Severity.INFO: "note"}
_PROBLEM_SEVERITY = {Severity.MUST: "error", Severity.SHOULD: "warning", Severity.INFO: "recommendation"}
_SOURCE_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".go", ".rs", ".rb", ".java", ".jar", ".sh")
_FALLBACK_URI = "mcp-server"
_USERINFO = re.compile(r"(?i)\b(https?://)[^/?#@\s\"]*@")
"""``user:password@`` after an http(s) scheme, up to the host."""


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) or name


def artifact_uri(target: Target) -> str:
    """A repository-relative path naming the target, for a result's location (see the module docstring)."""
    description = target.description or ""
    first = description.split(" + ")[0].split(" (")[0].split(", ")[0].strip()
    try:
        parts = urlsplit(_USERINFO.sub(r"\1", first))
        host = (parts.hostname or "") + (f"_{parts.port}" if parts.port else "")
    except ValueError:  # not a URL the report can name a location after
        parts, host = urlsplit(""), ""
    if parts.scheme in ("http", "https") and host:
        route = parts.path.strip("/")
        return quote(f"{host}/{route}" if route else host, safe="/._-~")
    try:
        words = shlex.split(first)
    except ValueError:
        words = first.split()
    for word in [*words[1:], *words[:1]]:
        if word.lower().endswith(_SOURCE_SUFFIXES) or word.lower().endswith((".jsonl", ".har", ".flows")):
            path = PurePosixPath(word.replace("\\", "/"))
            relative = path.name if path.is_absolute() or ".." in path.parts else str(path)
            return quote(relative, safe="/._-~")
    return _FALLBACK_URI


def _help(result: Verdict, entries: Mapping[str, RequirementText]) -> tuple[str, str]:
    """Plain-text and Markdown help: each requirement the check cites, paraphrased, with its source."""
    text = [result.title, ""]
    markdown = [f"**{result.title}**", ""]
    for ident in result.requirements:
        if ident not in entries:
            text.append(f"{ident} ({result.level.value})")
            markdown.append(f"- **{ident}** ({result.level.value})")
            continue
        entry = entries[ident]
        summary = " ".join(entry.summary.split())
        text.append(f"{ident} ({entry.level}, binds the {entry.side}): {summary}")
        text.append(f"  specification: {entry.source}")
        markdown.append(f"- **{ident}** ({entry.level}, binds the {entry.side}): {summary}")
        markdown.append(f"  *specification:* {entry.source}")
    text += ["", f"mcp-assay check: {result.check} (area: {result.area or 'Other'})"]
    markdown += ["", f"mcp-assay check: `{result.check}` (area: {result.area or 'Other'})"]
    return "\n".join(text), "\n".join(markdown)


def _rule(result: Verdict, entries: Mapping[str, RequirementText]) -> dict[str, Any]:
    text, markdown = _help(result, entries)
    ids = ", ".join(result.requirements)
    return {
        "id": result.check,
        "name": _pascal(result.check),
        "shortDescription": {"text": one_line(result.title)},
        "fullDescription": {"text": one_line(f"{result.title} ({ids}; {result.level.value}, {result.side.value})")},
        "help": {"text": text, "markdown": markdown},
        "defaultConfiguration": {"level": _BY_SEVERITY[result.severity]},
        "properties": {
            "requirements": list(result.requirements),
            "level": result.level.value,
            "severity": result.severity.value,
            "side": result.side.value,
            "area": result.area,
            "problem.severity": _PROBLEM_SEVERITY[result.severity],
            "tags": ["mcp", "conformance", *result.requirements],
        },
    }


def _message(result: Verdict) -> str:
    """The reason, then every piece of evidence with its detail, message excerpt and reproduction."""
    lines = [one_line(result.reason or result.title)]
    if result.revision:
        lines[0] = f"{result.revision}: {lines[0]}"
    lines += evidence_lines(result)
    hidden = result.violations - len(result.evidence)
    if hidden > 0:
        lines.append(f"{hidden} more occurrence(s) in the JSON report")
    return "\n".join(lines)


def _result(result: Verdict, key: str, rule_index: int, uri: str) -> dict[str, Any]:
    fingerprint = finding_fingerprint(result)
    item: dict[str, Any] = {
        "ruleId": result.check,
        "ruleIndex": rule_index,
        "kind": "fail",
        "level": _LEVEL.get(key, _BY_SEVERITY[result.severity]),
        "message": {"text": _message(result)},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}],
        "partialFingerprints": {FINGERPRINT: fingerprint},
        "properties": {
            "requirements": list(result.requirements),
            "severity": result.severity.value,
            "side": result.side.value,
            **({"party": result.party.value} if result.party is not None else {}),
            "source": result.source.value,
            "revision": result.revision,
            "revisions": list(result.revisions),
            "finding": finding_id(result),
            "exchanges": [item.exchange for item in result.evidence if item.exchange],
            "reproductions": [one_line(item.reproduction) for item in result.evidence if item.reproduction],
            "violations": result.violations,
            "judged": result.judged,
            **({"sdk": result.sdk.to_json()} if result.sdk is not None else {}),
        },
    }
    if result.known is not None:
        item["suppressions"] = [{"kind": "external", "status": "accepted", "justification": one_line(result.known)}]
    return item


def _tool_version(report: Report) -> str:
    name, _, version = report.tool.partition(" ")
    return version if name == "mcp-assay" and version else report.tool or "unknown"


def _invocation(report: Report, code: str, verdict: str) -> dict[str, Any]:
    """How the run went: with nothing to judge it did not execute successfully, and says why."""
    invocation: dict[str, Any] = {
        "executionSuccessful": report.unjudged is None,
        "exitCode": int(report.exit_code()),
        "exitCodeDescription": code,
        "properties": {"failOn": report.fail_on.value},
    }
    if report.unjudged is not None:
        invocation["toolExecutionNotifications"] = [{"level": "error", "message": {"text": one_line(verdict)}}]
    return invocation


def render_sarif(report: Report) -> str:
    """The report as a SARIF 2.1.0 log with one run."""
    checks: dict[str, Verdict] = {}
    for result in sort_results(report.results):
        checks.setdefault(result.check, result)
    index = {name: position for position, name in enumerate(checks)}
    uri = artifact_uri(report.target)
    results = [
        _result(result, key, index[result.check], uri)
        for key, _, _, members in sections(report)
        if key in ("failed", "recommended", "notes", "known")
        for result in sort_results(members)
    ]
    code, verdict = report.verdict()
    version = _tool_version(report)
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "mcp-assay",
                "fullName": report.tool or "mcp-assay",
                "version": version,
                "rules": [_rule(result, report.glossary) for result in checks.values()],
            }
        },
        "invocations": [_invocation(report, code, verdict)],
        "results": results,
        "properties": {
            "target": {key: str(value) for key, value in report.target.to_json().items()},
            "revision": report.revision,
            "tested": list(report.tested),
            "window": list(report.window),
            "verdict": {"code": code, "text": verdict},
            "summary": report.counts(),
            "notes": [one_line(note) for note in report.notes],
            "generatedAt": report.generated_at,
        },
    }
    if report.sdks:
        run["properties"]["sdks"] = [recognition.to_json() for recognition in report.sdks]
    if report.baseline is not None:
        run["properties"]["baseline"] = {
            "path": report.baseline.path,
            "known": report.baseline.known,
            "stale": list(report.baseline.stale),
        }
    log = {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
    return _USERINFO.sub(r"\1", json.dumps(log, indent=2, ensure_ascii=False)) + "\n"
