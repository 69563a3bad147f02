"""``mcp-assay report``: re-render and merge JSON reports."""

from __future__ import annotations

import json
from pathlib import Path

import click

from mcp_assay.cli.options import report_options, report_targets
from mcp_assay.errors import RecordingError
from mcp_assay.report import emit_reports
from mcp_assay.report.model import FailOn, Report, merge_reports

__all__ = ["register"]


def read_report(path: Path) -> Report:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Report.from_json(data)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RecordingError(f"{path}: not a readable mcp-assay JSON report ({exc})") from exc


@click.command("report")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@report_options
def report_command(files: tuple[Path, ...], reports: tuple[str, ...], fail_on: str) -> None:
    """Re-render FILE... (JSON reports); several are merged into one, results kept per source."""
    targets = report_targets(reports)
    merged = merge_reports([read_report(path) for path in files])
    merged.fail_on = FailOn(fail_on)
    emit_reports(merged, targets)
    raise SystemExit(merged.exit_code())


def register(group: click.Group) -> None:
    group.add_command(report_command)
