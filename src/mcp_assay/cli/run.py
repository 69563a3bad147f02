"""``mcp-assay run``: the active conformance suite against one MCP server.

``-u URL`` tests a Streamable HTTP endpoint, ``-c COMMAND`` a stdio server it spawns. Every flag
has an ``MCP_ASSAY_*`` twin; ``--config FILE`` (YAML) holds the same settings, and flags and their
twins win over it. Arguments, paths and the revision are all checked before the first request. A
progress display runs on stderr while the suite works, unless stdout is not a terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from mcp_assay.cli.options import build_spec, report_options, report_targets, spec_notes, spec_options
from mcp_assay.errors import ConfigError
from mcp_assay.logs import redact_with as redact_logs_with
from mcp_assay.report import emit_reports
from mcp_assay.report.baseline import apply_baseline, read_baseline
from mcp_assay.report.model import FailOn
from mcp_assay.suite.config import SuiteConfig, read_config_file
from mcp_assay.suite.credentials import AUTH_MODES
from mcp_assay.suite.events import (
    ExchangeRecorded,
    FamilyFinished,
    FamilyStarted,
    RevisionSelected,
    RunFinished,
    StderrLine,
)

__all__ = ["register"]

TARGET_ERROR_EXIT = 3


class HeaderList(click.ParamType):  # type: ignore[type-arg]
    """``-H "name: value"``; in the environment twin, one header per line."""

    name = "header"
    envvar_list_splitter = "\n"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value).strip()
        if ":" not in text:
            self.fail(f'{value!r}: expected "name: value"', param, ctx)
        return text


_SETTINGS = (
    "url", "command", "spec_version", "token", "auth_header", "auth_scheme", "auth_mode", "auth_query_param",
    "headers", "tool_args", "prompt_args", "resource_sample", "page_limit", "only", "verbose", "rate_limit",
    "retry_budget_ms", "timeout", "stream_budget_ms", "record", "failing_tool", "serve", "serve_timeout",
)  # fmt: skip

_OPTIONS: list[tuple[tuple[str, ...], str, dict[str, Any], str]] = [
    (("-u", "--url"), "URL", {"metavar": "URL"}, "Streamable HTTP endpoint of the server under test."),
    (("-c", "--command"), "COMMAND", {"metavar": "COMMAND"},
     'stdio server to spawn, as one shell-quoted string (e.g. "uvx some-server --flag").'),
    (("--serve",), "SERVE", {"metavar": "COMMAND"},
     "Start this HTTP server (one shell-quoted string) before the run, wait for --url's port, stop it after; "
     "its listening addresses are checked (AUTH-31)."),
    (("--serve-timeout",), "SERVE_TIMEOUT", {"type": float, "metavar": "SECONDS"},
     "How long --serve waits for the port to accept connections.  [default: 30]"),
    (("--spec-version",), "SPEC_VERSION", {"metavar": "REVISION"},
     "Test this revision (it must be in the window) instead of the newest one the server offers."),
    (("-t", "--token"), "TOKEN", {}, "Bearer token, sent per --auth-mode; never printed."),
    (("--auth-header",), "AUTH_HEADER", {"metavar": "NAME"}, "Header carrying the token.  [default: authorization]"),
    (("--auth-scheme",), "AUTH_SCHEME", {"metavar": "SCHEME"}, "Token prefix; '' for a bare token.  [default: Bearer]"),
    (("--auth-mode",), "AUTH_MODE", {"type": click.Choice(AUTH_MODES)},
     "Send the token in a header, as a query parameter, or not at all.  [default: header]"),
    (("--auth-query-param",), "AUTH_QUERY_PARAM", {"metavar": "NAME"},
     "Query parameter for --auth-mode query.  [default: token]"),
    (("-H", "--header", "headers"), "HEADERS", {"multiple": True, "type": HeaderList()},
     'Extra request header "name: value"; repeatable (one per line in the environment twin).'),
    (("--tool-args",), "TOOL_ARGS", {"metavar": "JSON|@FILE"},
     'Arguments per tool, e.g. \'{"search": {"query": "x"}}\'; only named tools are called with arguments.'),
    (("--prompt-args",), "PROMPT_ARGS", {"metavar": "JSON|@FILE"}, "Arguments per prompt, same shape (strings)."),
    (("--failing-tool",), "FAILING_TOOL", {"metavar": "NAME"},
     "A tool that fails (arguments from --tool-args): called once to see whether its failure comes back as a "
     "result with isError: true."),
    (("--resource-sample",), "RESOURCE_SAMPLE", {"type": int, "metavar": "N"},
     "How many listed resources to read.  [default: 5]"),
    (("--page-limit",), "PAGE_LIMIT", {"type": int, "metavar": "N"},
     "Pages to follow per list before stopping.  [default: 10]"),
    (("--rate-limit",), "RATE_LIMIT", {"type": float, "metavar": "N"}, "Pace the run to at most N requests a minute."),
    (("--retry-budget-ms",), "RETRY_BUDGET_MS", {"type": int, "metavar": "MS"},
     "Total time to wait out 429 rate limits; past it a case is not verified.  [default: 60000]"),
    (("--timeout",), "TIMEOUT", {"type": float, "metavar": "SECONDS"},
     "How long to wait for any one answer.  [default: 10]"),
    (("--stream-budget-ms",), "STREAM_BUDGET_MS", {"type": int, "metavar": "MS"},
     "How long listen-stream cases keep a stream open.  [default: 1500]"),
    (("--only",), "ONLY", {"metavar": "PATTERN[,PATTERN]"},
     "Run only probe families and checks matching a name or requirement-ID prefix (tools, VER, HTTP-2)."),
    (("--verbose",), "VERBOSE", {"is_flag": True, "default": None}, "Also show the stdio server's stderr."),
    (("--config", "config_file"), "CONFIG", {"type": click.Path(dir_okay=False, path_type=Path)},
     "YAML file with any of these settings (long names as keys); flags win."),
    (("--record",), "RECORD", {"type": click.Path(dir_okay=False)},
     "Write the suite's traffic to this JSONL recording (redacted) for `mcp-assay validate`."),
]  # fmt: skip


def run_options[F: Callable[..., Any]](func: F) -> F:
    """Every ``run`` setting, each with its ``MCP_ASSAY_*`` environment twin."""
    for decls, env, extra, text in reversed(_OPTIONS):
        func = click.option(*decls, envvar=f"MCP_ASSAY_{env}", show_envvar=True, help=text, **extra)(func)
    return func


@click.command("run")
@run_options
@spec_options
@report_options
@click.pass_context
def run_command(
    ctx: click.Context,
    /,
    config_file: Path | None,
    spec_dir: str | None,
    spec_paths: tuple[str, ...],
    reports: tuple[str, ...],
    fail_on: str,
    baseline: str | None,
    **settings: Any,
) -> None:
    """Run the conformance suite against one MCP server (-u URL or -c COMMAND).

    \b
    mcp-assay run -u http://127.0.0.1:8000/mcp
    mcp-assay run -u https://host/mcp -t "$TOKEN" --tool-args @args.json
    mcp-assay run -c "uvx mcp-server-git --repository ." --verbose
    mcp-assay run -u http://127.0.0.1:8000/mcp --serve "python server.py --port 8000"
    Exit 0: no MUST failed; 1: a MUST failed; 2: usage error; 3: the server could not be driven.
    """
    targets = report_targets(reports)
    known = read_baseline(baseline)
    options = {
        name: (value if ctx.get_parameter_source(name) is not ParameterSource.DEFAULT else None)
        for name, value in settings.items()
        if name in _SETTINGS
    }
    file_values = read_config_file(config_file) if config_file is not None else None
    config = SuiteConfig.from_options(options, file_values)
    redact_logs_with(config.redactor())
    if config.record is not None:
        record = Path(config.record).expanduser()
        if not record.parent.is_dir():
            raise ConfigError(f"--record {config.record}: folder {record.parent} does not exist")
    spec = build_spec(spec_dir, spec_paths)
    if config.spec_version:
        spec.require(config.spec_version)
    from mcp_assay.suite.runner import run

    report = None
    target_error = None
    interactive = sys.stdout.isatty()
    errors = Console(stderr=True)
    progress = Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=errors, transient=True,
        disable=not interactive,
    )  # fmt: skip
    with progress:
        task = progress.add_task("selecting the revision", total=None)
        exchanges = 0
        for event in run(config, spec):
            if isinstance(event, ExchangeRecorded):
                exchanges += 1
                stage = progress.tasks[task].description.split(" · ")[0]
                progress.update(task, description=f"{stage} · {exchanges} exchanges")
            elif isinstance(event, RevisionSelected):
                label = event.revision or "no revision"
                progress.update(task, description=f"testing {label}")
                if interactive:
                    progress.console.print(f"[dim]revision: {event.note}[/]", highlight=False)
            elif isinstance(event, FamilyStarted):
                progress.update(task, description=f"{event.family} · {exchanges} exchanges")
            elif isinstance(event, FamilyFinished) and event.skipped and interactive:
                progress.console.print(f"[yellow]{event.family}: {event.skipped}[/]", highlight=False)
            elif isinstance(event, StderrLine):
                progress.console.print(Text(f"server stderr: {event.text}", style="dim"), highlight=False)
            elif isinstance(event, RunFinished):
                report = event.report
                target_error = event.target_error
    assert report is not None
    report.fail_on = FailOn(fail_on)
    report.notes.extend(spec_notes(spec))
    if known is not None:
        apply_baseline(report, known)
    emit_reports(report, targets)
    if target_error is not None:
        raise SystemExit(TARGET_ERROR_EXIT)
    raise SystemExit(report.exit_code())


def register(group: click.Group) -> None:
    group.add_command(run_command)
