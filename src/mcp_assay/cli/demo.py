"""``mcp-assay demo``: what mcp-assay does, in one command, on a server it brings along.

No arguments needed: the bundled drafts example server (naive build; ``--hardened`` for the clean
one) is started on loopback, judged passively through the proxy while a real client uses it, then
actively by the suite with its probes and behaviour cases (:mod:`mcp_assay.demo.orchestrate`). The
command shows each step and each first finding as it happens (a spinner on a terminal, plain lines
otherwise), then the short terminal report (``--show`` for more), where the HTML report, the JSON
report and the recordings are, and the verdict last. With no schema on disk it fetches the pinned
ones first, unless ``--offline``.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import importlib.util
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from mcp_assay.cli.command import FETCHED_SCHEMAS, SCHEMAS, AssayCommand, environment
from mcp_assay.cli.options import show_option, spec_notes, spec_options
from mcp_assay.cli.schemas import obtain_spec, offline_option
from mcp_assay.report.brief import print_terminal
from mcp_assay.userinput.files import expanded
from mcp_assay.vocabulary.errors import ConfigError, TargetError
from mcp_assay.vocabulary.verdicts import ExitCode

if TYPE_CHECKING:
    from mcp_assay.demo.orchestrate import DemoEvent, DemoOutcome, DemoSettings
    from mcp_assay.spec import SpecSet

__all__ = ["demo_command"]

TARGET_ERROR_EXIT = ExitCode.NOT_JUDGED
ANSWER_WIDTH = 90
"""How much of a client call's answer a progress line shows."""
SDK_REMEDY = "pip install 'mcp>=2.3,<3'"


def _sdk_server_installed() -> bool:
    try:
        return importlib.util.find_spec("mcp.server") is not None
    except ModuleNotFoundError:
        return False


def _folder(output_dir: Path | None) -> Path:
    if output_dir is not None:
        folder = expanded(output_dir, "--output-dir")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"--output-dir {output_dir}: cannot create it ({exc.strerror or exc})") from None
        return folder
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return Path(tempfile.mkdtemp(prefix=f"mcp-assay-demo-{stamp}-"))


@click.command(
    "demo",
    cls=AssayCommand,
    short_help="See what mcp-assay does, on a bundled example server.",
    reads=(
        (
            "example server",
            "the drafts server and its config, shipped with mcp-assay, run on 127.0.0.1 with the installed MCP "
            "Python SDK (and its client, with --client auto or sdk); nothing else on the network.",
        ),
        SCHEMAS,
        FETCHED_SCHEMAS,
        environment("no other MCP_ASSAY_* variable reaches the proxy it starts, but MCP_ASSAY_CACHE_DIR"),
    ),
)
@click.option(
    "--hardened", is_flag=True, default=False, envvar="MCP_ASSAY_DEMO_HARDENED", show_envvar=True,
    help="Start the hardened build of the drafts server (the one the behaviour cases pass) instead of the naive one.",
)  # fmt: skip
@click.option(
    "--client", type=click.Choice(["auto", "sdk", "suite"]), default="auto", show_default=True,
    envvar="MCP_ASSAY_DEMO_CLIENT", show_envvar=True,
    help="Who drives the client session through the proxy: the official Python SDK client when it is installed "
    "(auto), only the SDK, or mcp-assay's own client.",
)  # fmt: skip
@click.option(
    "--output-dir", type=click.Path(file_okay=False, path_type=Path), envvar="MCP_ASSAY_DEMO_OUTPUT_DIR",
    show_envvar=True,
    help="Folder for the reports, the recordings and the server's log (created if missing; default: a new "
    "mcp-assay-demo-<UTC stamp>-* folder in the temp dir).",
)  # fmt: skip
@spec_options
@offline_option
@show_option
def demo_command(
    hardened: bool,
    client: str,
    output_dir: Path | None,
    spec_dir: str | None,
    spec_paths: tuple[str, ...],
    offline: bool,
    show: frozenset[str],
) -> None:
    """Show what mcp-assay does on a bundled example server: live findings, the suite, one report.

    \b
    mcp-assay demo              the naive drafts server: the behaviour cases catch it
    mcp-assay demo --hardened   the hardened build: the same cases pass
    Exits with the verdict it prints, as `run` does: 0 conformant, 1 a MUST failed (the naive build does;
    the hardened build keeps the SDK's own findings), 2 usage error, 3 it could not run.
    """
    from mcp_assay.demo.client_session import choose_client, sdk_client_available
    from mcp_assay.demo.orchestrate import DemoSettings

    if not _sdk_server_installed():
        raise ConfigError(
            f"the demo's example server runs on the official MCP Python SDK, which is missing: {SDK_REMEDY}"
        )
    if client == "sdk" and not sdk_client_available():
        raise ConfigError(f"--client sdk: the official MCP Python SDK client cannot be imported: {SDK_REMEDY}")
    console = Console(highlight=False)
    spec = obtain_spec(spec_dir, spec_paths, offline=offline, console=Console(stderr=True))
    folder = _folder(output_dir)
    build = "hardened" if hardened else "naive"
    spec_args = [*(("--spec-dir", spec_dir) if spec_dir else ()), *(f"--spec-path={path}" for path in spec_paths)]
    settings = DemoSettings(
        build=build, client=choose_client(client), folder=folder, spec_args=tuple(spec_args),
        notes=tuple(spec_notes(spec)),
    )  # fmt: skip
    console.print(
        Text.assemble(
            ("mcp-assay demo", "bold"),
            f" — the drafts example server ({build} build), judged through the proxy while a real client uses it, "
            "then by the active suite",
        ),
        soft_wrap=True,
    )
    try:
        outcome = _run(settings, spec, console)
    except TargetError as exc:  # the example server (or the proxy in front of it) did not come up
        console.print(Text(f"mcp-assay: not judged — {exc}", style="bold yellow"), soft_wrap=True)
        raise SystemExit(TARGET_ERROR_EXIT) from None
    files = outcome.files
    rows = [
        ("html report", f"{files.html}  (every result, with filters; each finding's evidence and replay command)"),
        ("json report", str(files.json)),
        ("recordings", f"{files.session}  (the client session, through the proxy)"),
        ("", f"{files.suite}  (the suite's own traffic)"),
        ("server log", str(files.server_log)),
    ]
    other = "mcp-assay demo" if hardened else "mcp-assay demo --hardened"
    trailer: list[Text | str] = [f"{label:<12}{value}" for label, value in rows]
    trailer.append(Text(f"next: {other} · your own server: mcp-assay run -u http://127.0.0.1:8000/mcp", style="dim"))
    console.print()
    print_terminal(outcome.report, console, show=show, trailer=trailer)
    if outcome.unjudged is not None:
        raise SystemExit(TARGET_ERROR_EXIT)
    raise SystemExit(int(outcome.report.exit_code()))  # one value: the verdict line, the report and the status


class _Display:
    """Turns the demo's events into lines (each step, each client call, each first finding) and, on a
    terminal, a spinner naming what the suite is doing."""

    def __init__(self, progress: Progress) -> None:
        self.console = progress.console
        self.progress = progress
        self.task = progress.add_task("starting", total=None)
        self.stage = ""
        self.exchanges = 0

    def _status(self, text: str) -> None:
        self.progress.update(self.task, description=text)

    def __call__(self, event: DemoEvent) -> None:
        from mcp_assay.demo.orchestrate import FindingSeen, SessionCalled, StageStarted, SuiteProgressed
        from mcp_assay.suite.events import ExchangeRecorded, FamilyStarted, RevisionSelected

        if isinstance(event, StageStarted):
            self.stage = event.text
            self._status(event.text)
            self.console.print(f"· {event.text}", soft_wrap=True)
        elif isinstance(event, FindingSeen):
            style = "red" if "· must]" in event.line else "yellow"
            line = Text("  ")
            line.append(event.line, style=style)
            line.append(f"  ({event.origin})", style="dim")
            self.console.print(line, soft_wrap=True)
        elif isinstance(event, SessionCalled):
            step = event.step
            answer = step.answer if len(step.answer) <= ANSWER_WIDTH else step.answer[: ANSWER_WIDTH - 1] + "…"
            text = f"{step.revision} · {step.call} → {answer}"
            self._status(f"client session · {text}")
            self.console.print(Text(f"    {text}", style="dim"), soft_wrap=True)
        elif isinstance(event, SuiteProgressed):
            inner = event.event
            if isinstance(inner, ExchangeRecorded):
                self.exchanges += 1
                if self.exchanges % 10 == 0:
                    self._status(f"{self.stage.split(' · ')[0]} · {self.exchanges} exchanges")
            elif isinstance(inner, FamilyStarted):
                self.stage = f"suite: {inner.family} ({inner.revision})" if inner.revision else f"suite: {inner.family}"
                self._status(f"{self.stage} · {self.exchanges} exchanges")
            elif isinstance(inner, RevisionSelected):
                self.console.print(Text(f"    revision: {inner.note}", style="dim"), soft_wrap=True)


def _run(settings: DemoSettings, spec: SpecSet, console: Console) -> DemoOutcome:
    from mcp_assay.demo.orchestrate import run_demo

    progress = Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True,
        disable=not console.is_terminal,
    )  # fmt: skip
    with progress:
        display = _Display(progress)
        return asyncio.run(run_demo(settings, spec, display))
