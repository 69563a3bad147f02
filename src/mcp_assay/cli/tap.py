"""``mcp-assay tap``: judge a stdio MCP server and its client by standing between them.

Put ``mcp-assay tap [options] --`` in front of the server command in any client's configuration.
Stdout belongs to the protocol, so everything the tap itself says (live findings, the terminal
report) goes to stderr; file reports and the recording are written as usual. The tap exits with
the server's exit code (or dies by the server's signal), whatever the findings: a client sees what
it would see without the tap. Where there was no server to judge (its command could not be started,
or it ended before it wrote a line) the tap exits 3, and the report is one line saying why.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import click
from rich.console import Console

from mcp_assay.cli.command import BASELINE, SCHEMAS, AssayCommand, environment
from mcp_assay.cli.options import (
    ReportChoices,
    build_spec,
    given_options,
    inject_options,
    parse_inject,
    report_choices,
    spec_options,
)
from mcp_assay.cli.params import SECONDS_OR_NONE, SECRET_LINES, WritableFile
from mcp_assay.recording.redaction import command_secrets
from mcp_assay.report.about import Target
from mcp_assay.vocabulary.verdicts import ExitCode
from mcp_assay.wire.model import Hop

__all__ = ["tap_command"]


@click.command(
    "tap",
    cls=AssayCommand,
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
    short_help="Judge a stdio server and its client, from the client's config.",
    reads=(
        (
            "COMMAND...",
            "the stdio server it starts (with the tap's environment): the lines the client writes to the tap's "
            "stdin, the lines the server writes to its stdout, and its stderr.",
        ),
        SCHEMAS,
        BASELINE,
        environment(),
    ),
)
@click.option(
    "--record", type=WritableFile(path_type=Path), envvar="MCP_ASSAY_RECORD", show_envvar=True,
    help="Write every line both sides send (and the server's stderr) to this JSONL recording, redacted.",
)  # fmt: skip
@click.option(
    "--secret", "secrets", multiple=True, envvar="MCP_ASSAY_SECRETS", show_envvar=True, type=SECRET_LINES,
    help="A secret value to scrub from the recording and the report; repeatable.",
)  # fmt: skip
@click.option(
    "--live", type=click.Choice(["all", "findings", "off"]), default="findings", show_default=True,
    envvar="MCP_ASSAY_LIVE", show_envvar=True,
    help="Live output on stderr: every line plus findings, only findings, or nothing until the report.",
)  # fmt: skip
@click.option(
    "--finish-timeout", type=SECONDS_OR_NONE, default=0, show_default=True, envvar="MCP_ASSAY_FINISH_TIMEOUT",
    show_envvar=True, metavar="SECONDS",
    help="How long judging may take once the server exits; past it the report is written from what was judged "
    "and says so (0: as long as it takes).",
)  # fmt: skip
@click.option(
    "--hop", type=click.Choice(["front", "back"]), envvar="MCP_ASSAY_HOP", show_envvar=True,
    help="The server is one hop of a gateway: back for a stdio server a gateway spawns, front for a stdio bridge a "
    "client spawns; mcp-assay validate judges this recording with the proxy's of the other hop (docs/gateways.md).",
)  # fmt: skip
@inject_options
@spec_options
@report_choices()
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def tap_command(
    record: Path | None,
    secrets: tuple[str, ...],
    live: str,
    finish_timeout: int,
    hop: str | None,
    inject: tuple[str, ...],
    inject_hold_ms: int,
    spec_dir: str | None,
    spec_paths: tuple[str, ...],
    choices: ReportChoices,
    command: tuple[str, ...],
) -> None:
    """Run COMMAND (a stdio MCP server) and judge both sides of its traffic.

    \b
    mcp-assay tap --record session.jsonl --report json:report.json -- python server.py
    mcp-assay tap --spec-dir /abs/spec --record /abs/s.jsonl -- python /abs/server.py
    The terminal report goes to stderr; the exit code is the server's. In a client's config,
    give --spec-dir and whole paths: clients pass on only a few variables (HOME, PATH ...),
    so MCP_ASSAY_SPEC_DIR from your shell never reaches the tap.
    """
    from mcp_assay.addon.descriptors import standard_streams
    from mcp_assay.addon.inject import STDIO_FAMILIES, build_plan, parse_families
    from mcp_assay.addon.inject.stdio import StdioInjector
    from mcp_assay.addon.tap import HopFeed, Tap, exit_like, start_error
    from mcp_assay.addon.worker import RemoteSession, WorkerSettings, say

    if command[0].startswith("-"):  # an option of the tap's own, misspelled: no program is named with a dash
        raise click.UsageError(_not_an_option(command[0]))
    targets = choices.targets(others={"--record": record})
    if any(target.stdout for target in targets):
        raise click.UsageError("--report FORMAT:- would write to stdout, which is the protocol channel; give a file")
    spec = build_spec(spec_dir, spec_paths)  # refuse unusable schemas before the server starts
    choices.known()  # and a baseline with a mistake in it
    errors = Console(stderr=True)
    families = parse_families(parse_inject(inject, inject_hold_ms))
    elsewhere = sorted(family.name for family in families - STDIO_FAMILIES)
    if elsewhere:
        errors.print(f"mcp-assay tap: --inject {', '.join(elsewhere)}: no such fault on stdio", highlight=False)
    plan = build_plan(
        families & STDIO_FAMILIES, transport="stdio", hold_ms=inject_hold_ms, window=[r.name for r in spec.window]
    )
    description = " ".join(command)
    session = RemoteSession(
        WorkerSettings(
            spec_dir=spec_dir,
            spec_paths=list(spec_paths),
            record=str(record.expanduser()) if record else None,
            record_source=f"stdio tap: {description}" + (f" ({hop} hop of a gateway)" if hop else ""),
            record_options=given_options(click.get_current_context()),
            secrets=[*secrets, *command_secrets(command)],  # the command's --api-key VALUE too
            live=live,
            reports=list(choices.reports),
            stream="stderr",
            **choices.worker_settings(),
            target=Target(kind="tap", description=description, transport="stdio").to_json(),
            orphaned="finish",  # clients kill the tap once they closed its stdin: that must not cost the report
        )
    )
    stdin, stdout, stderr = standard_streams()
    feed = HopFeed(session, Hop(hop)) if hop else session
    tap = Tap(command, feed, stdin=stdin, stdout=stdout, stderr=stderr)
    tap.injector = StdioInjector(plan, feed.feed) if plan is not None else None
    code: int | None = None
    failed = ""
    try:
        code = tap.run()
    except OSError as exc:
        failed = f"mcp-assay tap: cannot start {command[0]!r}: {start_error(exc)}"
    finished = session.close(deadline=finish_timeout or None, interruptible=False)
    if finished.error:  # the server's exit code matters more than the report
        say(f"mcp-assay tap: no report: {finished.error}")
    if code is None:
        if finished.error:
            say(failed)  # the report's one line says it otherwise
        raise SystemExit(ExitCode.NOT_JUDGED)
    if finished.unjudged:
        raise SystemExit(ExitCode.NOT_JUDGED)  # the server never answered: nothing was judged, as the report says
    exit_like(code)


def _not_an_option(word: str) -> str:
    """The usage error for ``word``, a dashed word where the server command starts: the tap's options it is close to,
    and where the command goes."""
    ctx = click.get_current_context()
    flags = [flag for param in ctx.command.params if isinstance(param, click.Option) for flag in param.opts]
    close = difflib.get_close_matches(word.partition("=")[0], flags, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"no such option: {word}{hint}; the server command comes after the tap's options, or after --"
