"""``mcp-assay validate``: judge recorded traffic offline."""

from __future__ import annotations

import time

import click

from mcp_assay.addon.importers import READERS
from mcp_assay.audit import audit_lines
from mcp_assay.cli.options import build_spec, report_options, report_targets, spec_options
from mcp_assay.inputs import load_inputs
from mcp_assay.report import emit_reports
from mcp_assay.report.baseline import read_baseline
from mcp_assay.report.build import PER_MESSAGE, build_report
from mcp_assay.report.model import FailOn
from mcp_assay.spec.engine import evaluate, registered_checks, select_checks
from mcp_assay.spec.requirements import glossary
from mcp_assay.suite.judging import RUN_OBSERVATION, judge_suite_log, tested_revisions
from mcp_assay.verdicts import Source

__all__ = ["register"]


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
    known = read_baseline(baseline, registered_checks())
    checks = select_checks(only)
    if checks is not None and not checks:
        raise click.UsageError(f"--only {only}: no check matches")
    spec = build_spec(spec_dir, spec_paths)
    started = time.perf_counter()
    log, problems, kinds = load_inputs(recordings, READERS)
    tested: list[str] = []
    revision_note = PER_MESSAGE
    runs = log.observations(RUN_OBSERVATION)
    if runs:
        # a recording of `mcp-assay run`: judged exactly as the run judged it, each revision it tested on its own
        verdicts, suite_notes = judge_suite_log(log, spec, checks=checks)
        problems = [*problems, *suite_notes]
        tested = tested_revisions(log)
        revision_note = str(runs[-1].data.get("note", "")) or revision_note
    else:
        verdicts = evaluate(log, spec, checks=checks, source=Source.PASSIVE)
    report = build_report(
        verdicts,
        target={
            "kind": "recording",
            "description": ", ".join(recordings),
            "transport": ", ".join(sorted(log.transports())) or "none",
            "inputs": kinds,
        },
        schemas=spec.schema_infos(),
        tested=tested,
        revision_note=revision_note,
        notes=problems,
        audit=audit_lines(log),
        stats={
            "exchanges": len(log),
            "messages": len(log.messages()),
            "duration_ms": round((time.perf_counter() - started) * 1000),
        },
        fail_on=FailOn(fail_on),
        glossary=glossary(verdicts),
        baseline=known,
    )
    emit_reports(report, targets)
    raise SystemExit(report.exit_code())


def register(group: click.Group) -> None:
    group.add_command(validate_command)
