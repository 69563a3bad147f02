"""``mcp-assay report``: re-render and merge JSON reports, and start a baseline from one."""

from __future__ import annotations

import json
from pathlib import Path

import click

from mcp_assay.cli.command import BASELINE, AssayCommand, environment
from mcp_assay.cli.options import ReportChoices, report_choices
from mcp_assay.cli.params import WritableFile, readable_file
from mcp_assay.report import emit_reports
from mcp_assay.report.baseline import apply_baseline, baseline_text
from mcp_assay.report.model import Report, merge_reports
from mcp_assay.report.sdks import attribute
from mcp_assay.vocabulary.errors import RecordingError

__all__ = ["report_command"]


def read_report(path: Path) -> Report:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Report.from_json(data)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RecordingError(f"{path}: not a readable mcp-assay JSON report ({exc})") from exc


@click.command(
    "report",
    cls=AssayCommand,
    short_help="Re-render and merge JSON reports; start a baseline from them.",
    reads=(
        ("FILES...", "JSON reports (mcp-assay.report/1), as --report json writes them."),
        BASELINE,
        environment(),
    ),
)
@click.argument("files", nargs=-1, required=True, type=readable_file(path_type=Path))
@report_choices(
    click.option(
        "--write-baseline", type=WritableFile(path_type=Path), metavar="FILE",
        envvar="MCP_ASSAY_WRITE_BASELINE", show_envvar=True,
        help="Write a baseline accepting every failure in the report(s), with empty reasons to fill in, and stop.",
    )
)  # fmt: skip
def report_command(
    files: tuple[Path, ...],
    choices: ReportChoices,
) -> None:
    """Re-render JSON reports in any format; several are merged into one, results kept per source.

    \b
    mcp-assay report run.json --report html:run.html
    mcp-assay report run.json proxy.json --report markdown:-
    mcp-assay report run.json --write-baseline baseline.yaml
    """
    targets = choices.targets()
    known = choices.known()
    merged = merge_reports([read_report(path) for path in files])
    merged.fail_on = choices.failing
    if choices.write_baseline is not None:
        choices.write_baseline.expanduser().write_text(baseline_text(merged.results), encoding="utf-8")
        click.echo(f"baseline written to {choices.write_baseline}; fill in every reason before using it", err=True)
        return
    if known is not None:
        apply_baseline(merged, known)
    if known is not None or choices.sdk or choices.accept_sdk_findings:  # else each result keeps what it said
        attribute(merged, choices.sdk_choice, merged.sdks)
    emit_reports(merged, targets, show=choices.show)
    raise SystemExit(merged.exit_code())
