"""One report, many renderings: terminal, JSON, Markdown, HTML, JUnit XML, TAP and SARIF.

``--report FORMAT[:PATH]`` may be given several times. ``terminal`` without a path goes to
standard output; every other format without a path lands in the temporary directory under a UTC
timestamped name, and the path is printed. A PATH that is an existing folder, or ends in ``/``,
gets the same timestamped name inside it. A folder of PATH that does not exist yet is created when
the report is written. ``-`` as a path means standard output.

On a terminal the report is the short one (:mod:`mcp_assay.report.brief`), with the listings
``--show`` names; a ``terminal:PATH`` file holds the full listing, like every other file. A file
report adds to the terminal report (it is left out only when another format is written to
standard output). Whatever goes where, a run ends with its verdict line.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import os
import shlex
import sys
import tempfile
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from mcp_assay.report.model import FailOn, Report, merge_reports
from mcp_assay.userinput.files import expanded
from mcp_assay.vocabulary.errors import ConfigError

__all__ = [
    "FORMATS",
    "FailOn",
    "Report",
    "ReportTarget",
    "check_writable",
    "emit_reports",
    "merge_reports",
    "parse_report_option",
    "render",
]

FORMATS: dict[str, tuple[str, str]] = {
    "terminal": ("txt", "mcp_assay.report.console:render_text"),
    "json": ("json", "mcp_assay.report.jsonreport:render_json"),
    "markdown": ("md", "mcp_assay.report.markdown:render_markdown"),
    "html": ("html", "mcp_assay.report.html:render_html"),
    "junit": ("xml", "mcp_assay.report.junit:render_junit"),
    "tap": ("tap", "mcp_assay.report.testanything:render_tap"),
    "sarif": ("sarif", "mcp_assay.report.sarif:render_sarif"),
}
"""Format name -> (file extension, ``module:function`` rendering a report to text)."""

ALIASES = {"md": "markdown", "text": "terminal", "console": "terminal", "junitxml": "junit", "xml": "junit"}


@dataclass(frozen=True, slots=True)
class ReportTarget:
    """Where one rendering of the report goes."""

    format: str
    path: Path | None
    """``None``: standard output for ``terminal``, a timestamped file otherwise (in ``folder``)."""
    stdout: bool = False
    folder: Path | None = None
    """Where the timestamped file goes when ``path`` is ``None``: the temp directory unless set."""


def parse_report_option(value: str) -> ReportTarget:
    """Parse ``FORMAT[:PATH]``; raise :class:`ConfigError` for an unknown format or unusable path."""
    name, sep, raw_path = value.partition(":")
    name = ALIASES.get(name.strip().lower(), name.strip().lower())
    if name not in FORMATS:
        raise ConfigError(f"--report {value}: unknown format {name!r}; choose from {', '.join(FORMATS)}")
    if not sep or not raw_path:
        return ReportTarget(name, None)
    if raw_path == "-":
        return ReportTarget(name, None, stdout=True)
    path = expanded(raw_path, f"--report {value}:")
    if path.is_dir():
        return ReportTarget(name, None, folder=path)
    folder = raw_path.endswith(("/", os.sep))
    blocked = _not_a_folder(path if folder else path.parent)
    if blocked is not None:
        raise ConfigError(f"--report {value}: {blocked} is not a folder")
    return ReportTarget(name, None, folder=path) if folder else ReportTarget(name, path)


def check_writable(value: str) -> ReportTarget:
    """``--report FORMAT[:PATH]`` parsed, and its place tried now, so a report that could not be written is a usage
    error before any work (exit 2) rather than a report lost at the end: the folders it lacks are created and
    removed again, the file is opened for appending (never truncated) and removed again if it is new, and a
    folder target must take a new file. Standard output and the temp directory are not tried."""
    target = parse_report_option(value)
    if target.stdout or (target.path is None and target.folder is None):
        return target
    folder = target.folder if target.path is None else target.path.parent
    assert folder is not None
    created: list[Path] = []
    try:
        for missing in reversed([item for item in (folder, *folder.parents) if not item.exists()]):
            missing.mkdir()
            created.append(missing)
        if target.path is not None:
            existed = target.path.exists()
            with target.path.open("a", encoding="utf-8"):
                pass
            if not existed:
                target.path.unlink()
        else:
            with tempfile.TemporaryFile(dir=folder):
                pass
    except OSError as exc:
        raise ConfigError(f"--report {value}: cannot write there ({exc.strerror or exc})") from None
    finally:
        for made in reversed(created):
            try:
                made.rmdir()
            except OSError:
                pass
    return target


def _not_a_folder(folder: Path) -> Path | None:
    """The first existing ancestor of ``folder`` (itself included) when it is not a folder, else ``None``: a
    missing folder is created when the report is written, a file in the way cannot be."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
    return None


def renderer(name: str) -> Callable[[Report], str]:
    module_name, _, function = FORMATS[name][1].partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, function)  # type: ignore[no-any-return]


def render(report: Report, name: str) -> str:
    return renderer(name)(report)


def default_path(name: str, now: _dt.datetime | None = None, folder: Path | None = None) -> Path:
    """``mcp-assay-<UTC stamp>.<extension>`` in ``folder`` (the temp directory by default), not yet taken."""
    stamp = (now or _dt.datetime.now(_dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
    folder = folder if folder is not None else Path(tempfile.gettempdir())
    candidate = folder / f"mcp-assay-{stamp}.{FORMATS[name][0]}"
    counter = 1
    while candidate.exists():
        candidate = folder / f"mcp-assay-{stamp}-{counter}.{FORMATS[name][0]}"
        counter += 1
    return candidate


def emit_reports(
    report: Report,
    targets: Iterable[ReportTarget],
    *,
    stdout: Console | None = None,
    notices: Console | None = None,
    show: Collection[str] = (),
    write_baseline: Path | None = None,
) -> list[Path]:
    """Render to every target; return the files written. Terminal goes to ``stdout`` with colour.

    Files are written first, each path said on ``notices``, so that the terminal report can end with the
    verdict. A file report adds to the terminal report, never replaces it: the terminal report is left out only
    when another report is written to standard output, and the verdict line then goes to ``notices``. ``show``
    names the listings the terminal report gives in full (:mod:`mcp_assay.report.brief`); ``write_baseline`` is
    a baseline file accepting every failure."""
    from mcp_assay.report.brief import known_findings_hint, print_terminal
    from mcp_assay.report.console import print_verdict
    from mcp_assay.report.sdks import sdk_hint

    stdout = stdout or Console()
    notices = notices or Console(stderr=True)
    written: list[Path] = []
    targets = list(targets)
    if not any(_on_terminal(target) or target.stdout for target in targets):
        targets.append(ReportTarget("terminal", None))  # a file adds to the screen, never replaces it
    terminal = [target for target in targets if _on_terminal(target)]
    json_report: Path | None = None
    for target in targets:
        if _on_terminal(target):
            continue
        text = render(report, target.format)
        if target.stdout:
            sys.stdout.write(text)
            sys.stdout.flush()
            continue
        path = target.path
        try:
            if path is None:
                folder = target.folder or Path(tempfile.gettempdir())
                folder.mkdir(parents=True, exist_ok=True)
                path = default_path(target.format, folder=folder)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            notices.print(
                f"could not write {path or target.folder} ({exc}); printing the {target.format} report instead"
            )
            sys.stdout.write(text)
            continue
        written.append(path)
        if target.format == "json" and json_report is None:
            json_report = path
        notices.print(f"{target.format} report written to {path}", highlight=False, soft_wrap=True)
    baseline = _write_baseline(report, write_baseline, notices) if write_baseline is not None else None
    hint = [
        *sdk_hint(report),
        *replay_hint(report, json_report),
        *known_findings_hint(report, json_report=json_report, written=baseline),
    ]
    for _ in terminal:
        print_terminal(report, stdout, show=show, hint=hint)
    if not terminal:
        print_verdict(report, notices if any(target.stdout for target in targets) else stdout, hint=hint)
    return written


def replay_hint(report: Report, json_report: Path | None) -> list[str]:
    """How to check a fix of a finding of this report (which a JSON report, just written, holds): nothing
    without one, or without findings."""
    from mcp_assay.report.findings import finding_id

    findings = [result for result in report.failed() if result.known is None]
    if json_report is None or report.unjudged is not None or not findings:
        return []
    first = next((result for result in findings if report.fail_on.decides(result)), findings[0])
    return [
        "to check a fix, re-send a finding's request and judge the answer again (its id follows ✗ or ⚠):",
        f"    mcp-assay replay {shlex.quote(str(json_report))} {finding_id(first)}",
    ]


def _on_terminal(target: ReportTarget) -> bool:
    """The terminal report to standard output (``terminal`` or ``terminal:-``): printed, not written."""
    return target.format == "terminal" and target.path is None and target.folder is None


def _write_baseline(report: Report, path: Path, notices: Console) -> Path | None:
    """``--write-baseline``: a baseline accepting every failure of ``report`` (known ones keep their reason)."""
    from mcp_assay.report.baseline import baseline_text

    path = path.expanduser()
    try:
        path.write_text(baseline_text(report.results), encoding="utf-8")
    except OSError as exc:
        notices.print(f"could not write the baseline {path} ({exc})", highlight=False, soft_wrap=True)
        return None
    notices.print(
        f"baseline written to {path}; fill in every reason before using it with --baseline", highlight=False,
        soft_wrap=True,
    )  # fmt: skip
    return path
