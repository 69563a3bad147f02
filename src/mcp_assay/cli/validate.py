"""``mcp-assay validate``: judge recorded traffic offline."""

from __future__ import annotations

import time

import click

from mcp_assay.audit import audit_lines
from mcp_assay.checks import REGISTRY, Check, evaluate
from mcp_assay.cli.options import (
    build_spec,
    report_options,
    report_targets,
    schema_infos,
    spec_notes,
    spec_options,
)
from mcp_assay.inputs import load_inputs
from mcp_assay.report import emit_reports
from mcp_assay.report.baseline import apply_baseline, read_baseline
from mcp_assay.report.model import FailOn, Report, traffic_stats
from mcp_assay.verdicts import Source

__all__ = ["register"]


def select_checks(only: str | None) -> list[Check] | None:
    if not only:
        return None
    patterns = [p.strip() for p in only.split(",") if p.strip()]
    return [
        check
        for check in REGISTRY.values()
        if any(
            p in check.name or any(p.upper() == r or r.startswith(p.upper()) for r in check.requirements)
            for p in patterns
        )
    ]


@click.command("validate")
@click.argument("recordings", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@spec_options
@report_options
@click.option(
    "--only",
    envvar="MCP_ASSAY_ONLY",
    show_envvar=True,
    metavar="PATTERN[,PATTERN]",
    help="Judge only checks whose name contains PATTERN or whose requirement IDs start with it (e.g. RES, HTTP-0).",
)
def validate_command(
    recordings: tuple[str, ...],
    spec_dir: str | None,
    spec_paths: tuple[str, ...],
    reports: tuple[str, ...],
    fail_on: str,
    baseline: str | None,
    only: str | None,
) -> None:
    """Judge RECORDING... (mcp-assay JSONL recordings) offline and write the report."""
    targets = report_targets(reports)
    known = read_baseline(baseline)
    from mcp_assay.spec import rules  # noqa: F401 - registers the checks

    checks = select_checks(only)
    if checks is not None and not checks:
        raise click.UsageError(f"--only {only}: no check matches")
    spec = build_spec(spec_dir, spec_paths)
    started = time.perf_counter()
    log, problems, kinds = load_inputs(recordings)
    revision: str | None = None
    revision_note = "attributed per message from the traffic (per-request _meta and headers; initialize per session)"
    runs = log.observations("suite-run")
    if runs:
        # a recording of `mcp-assay run`: judged exactly as the run judged it
        from mcp_assay.suite.runner import judge_suite_log

        verdicts, suite_notes = judge_suite_log(log, spec, checks=checks)
        problems = [*problems, *suite_notes]
        named = runs[-1].data.get("revision")
        revision = named if isinstance(named, str) else None
        revision_note = str(runs[-1].data.get("note", "")) or revision_note
    else:
        verdicts = evaluate(log, spec, checks=checks, source=Source.PASSIVE)
    report = Report(
        results=verdicts,
        target={
            "kind": "recording",
            "description": ", ".join(recordings),
            "transport": ", ".join(sorted(log.transports())) or "none",
            "inputs": kinds,
        },
        revision=revision,
        revision_note=revision_note,
        window=[revision.name for revision in spec.window],
        schemas=schema_infos(spec),
        notes=[*spec_notes(spec), *problems],
        stats={
            **traffic_stats(log),
            "messages": len(log.messages()),
            "duration_ms": round((time.perf_counter() - started) * 1000),
        },
        audit=audit_lines(log),
        fail_on=FailOn(fail_on),
    )
    if known is not None:
        apply_baseline(report, known)
    emit_reports(report, targets)
    raise SystemExit(report.exit_code())


def register(group: click.Group) -> None:
    group.add_command(validate_command)
