"""``mcp-assay replay REPORT FINDING``: send a finding's request again and judge the answer, to check a fix.

The finding is named by the id every report prints after its mark (``✗ 3fa2c1d``), or by a
requirement ID or check name that names one finding alone. Its evidence's request is sent again to
the recorded peer (or ``--url`` / ``--command``), what came back is printed, and the check that
found it judges the new traffic at the finding's revision. The exit status reads like ``run``'s:
1 still failing, 0 fixed, 3 nothing to judge (no request to re-send, a finding about the client,
no peer there), 2 a usage error.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
from pathlib import Path

import click
from click.core import ParameterSource
from rich.console import Console
from rich.text import Text

from mcp_assay.cli.command import SCHEMAS, AssayCommand, environment
from mcp_assay.cli.options import build_spec, spec_options
from mcp_assay.cli.params import Checked, readable_file, setting
from mcp_assay.recording.logs import redact_with as redact_logs_with
from mcp_assay.recording.redaction import Redactor
from mcp_assay.report.console import printable, replay_line
from mcp_assay.report.findings import finding_id, matching
from mcp_assay.report.model import Report
from mcp_assay.suite.launch import launch
from mcp_assay.suite.replay import NotReplayable, Resent, rejudge, resend
from mcp_assay.userinput.values import COMMAND, TEXT, TOKEN, URL, Number
from mcp_assay.vocabulary.errors import ConfigError, Unreachable
from mcp_assay.vocabulary.replays import COOKIE_VARIABLE, MARKER_ID, TOKEN_VARIABLE, Replay
from mcp_assay.vocabulary.verdicts import Evidence, ExitCode, Outcome, Side, Source, Verdict
from mcp_assay.wire.jsonrpc import Kind
from mcp_assay.wire.model import Exchange, HttpExchange, Observation, StdioLine, body_text

__all__ = ["replay_command"]

SHOWN = 2000
"""Characters of one message printed (what came back is often long; the rest is counted)."""


def _report(path: Path) -> Report:
    try:
        return Report.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"REPORT {path}: not a readable mcp-assay JSON report ({exc})") from exc


def _finding(report: Report, wanted: str) -> Verdict:
    found = matching(report.results, wanted)
    if len(found) == 1:
        return found[0]
    if not found:
        raise ConfigError(
            f"FINDING {wanted}: no finding of the report has that id (the one after ✗ or ⚠), requirement ID or check"
        )
    listed = "; ".join(f"{finding_id(item)} ({item.check}, {item.revision or 'any revision'})" for item in found)
    raise ConfigError(f"FINDING {wanted} names {len(found)} findings; give one of their ids: {listed}")


def _evidence(result: Verdict, number: int | None) -> tuple[Evidence, Replay]:
    replayable = [(item, item.replay) for item in result.evidence if item.replay is not None]
    if not replayable:
        what = result.evidence[0].summary if result.evidence else "the traffic as a whole"
        raise NotReplayable(f"finding {finding_id(result)} has no request to send again: its evidence is {what}")
    if number is None:
        item, replay = replayable[0]
        return item, replay
    if not 1 <= number <= len(result.evidence) or result.evidence[number - 1].replay is None:
        choices = ", ".join(str(index + 1) for index, item in enumerate(result.evidence) if item.replay is not None)
        raise ConfigError(f"--evidence {number}: finding {finding_id(result)} has a replay for evidence {choices}")
    item = result.evidence[number - 1]
    assert item.replay is not None
    return item, item.replay


def _clip(text: str) -> str:
    text = printable(text, newlines=False)
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}… ({len(text) - SHOWN} more characters)"


def _exchange_lines(item: Exchange, request: str, redactor: Redactor) -> list[tuple[str, str]]:
    """What one exchange shows, redacted: ``(style, line)`` pairs, the re-sent request marked."""
    return [(style, redactor.text(line)) for style, line in _lines(item, request, redactor)]


def _lines(item: Exchange, request: str, redactor: Redactor) -> list[tuple[str, str]]:
    mark = "  (the finding's request)" if item.id == request else ""
    if isinstance(item, HttpExchange):
        lines = [("bold", f"→ {item.request.method} {redactor.url(item.request.url)}{mark}")]
        if item.request.body:
            lines.append(("", f"  {_clip(body_text(item.request.body, SHOWN))}"))
        if item.response is not None:
            response = item.response
            lines.append(("bold", f"← {response.status} {response.content_type or 'no content type'}"))
            if response.is_event_stream:
                lines += [("", f"  event: {_clip(event.data)}") for event in response.events if event.data is not None]
            elif response.body:
                lines.append(("", f"  {_clip(body_text(response.body, SHOWN))}"))
        elif item.ending is not None:
            lines.append(("yellow", f"← no answer ({item.ending.reason.value}{': ' if item.ending.detail else ''}"
                                    f"{item.ending.detail})"))  # fmt: skip
        return lines
    if isinstance(item, StdioLine):
        text = _clip(body_text(item.raw, SHOWN).rstrip("\n"))
        if item.message.id == MARKER_ID:
            mark = "  (marker: the server has read what came before)"
        elif item.id == request and item.message.kind is Kind.UNPARSEABLE:
            mark += ", not valid JSON on purpose" if item.probe is not None and item.probe.invalid else ", not JSON"
        arrow = "→" if item.sender is Side.CLIENT else "←"
        return [("bold" if item.sender is Side.CLIENT else "", f"{arrow} {text}{mark}")]
    if isinstance(item, Observation) and item.kind == "no-answer":
        return [("yellow", f"  {printable(str(item.data.get('detail', 'no answer')), newlines=False)}")]
    return []


def _print_traffic(console: Console, resent: Resent, redactor: Redactor) -> None:
    for item in resent.shown:
        for style, line in _exchange_lines(item, resent.request, redactor):
            console.print(Text(line, style=style), soft_wrap=True, highlight=False)


_OUTCOMES = {
    Outcome.FAILED: ("still failing", "bold red", ExitCode.FAILED),
    Outcome.PASSED: ("fixed", "bold green", ExitCode.CONFORMANT),
}


@click.command(
    "replay",
    cls=AssayCommand,
    short_help="Send a finding's request again and judge the answer: check a fix.",
    reads=(
        ("REPORT", "a JSON report (mcp-assay.report/1) that holds the finding, as --report json writes it."),
        (
            "FINDING",
            "the id a report prints after ✗ or ⚠ (or a longer prefix of its SARIF fingerprint), or a "
            "requirement ID or check name that names one finding alone.",
        ),  # fmt: skip
        SCHEMAS,
        (
            "network / processes",
            "the recorded endpoint (or --url) over HTTP, a server --serve starts first; over stdio the "
            "recorded server command (or --command), started once and stopped after.",
        ),  # fmt: skip
        environment(
            f"{COOKIE_VARIABLE} (a cookie a request carried), {TOKEN_VARIABLE}_<PRINCIPAL> (the token of a "
            "behaviour case's principal)"
        ),
    ),
)
@click.argument("report", metavar="REPORT", type=readable_file(path_type=Path))
@click.argument("finding", metavar="FINDING", type=Checked(TEXT, "finding"))
@click.option(
    "-u", "--url", metavar="URL", type=Checked(URL, "url", keep=True), envvar="MCP_ASSAY_URL", show_envvar=True,
    help="Send it to this endpoint instead of the recorded one (a finding found over HTTP; the twin is run's, and "
    "is left unused for a stdio finding).",
)  # fmt: skip
@click.option(
    "-c", "--command", metavar="COMMAND", type=Checked(COMMAND, "command", keep=True), envvar="MCP_ASSAY_COMMAND",
    show_envvar=True,
    help="Start this stdio server command instead of the recorded one, as one shell-quoted string (the twin is "
    "run's, and is left unused for an HTTP finding).",
)  # fmt: skip
@click.option(
    "--serve", metavar="COMMAND", type=Checked(COMMAND, "serve", keep=True), envvar="MCP_ASSAY_SERVE",
    show_envvar=True,
    help="Start this HTTP server (one shell-quoted string) first, wait for the endpoint's port, stop it after: "
    "a run's --serve stopped its server when the run ended (the twin is run's, left unused for a stdio finding).",
)  # fmt: skip
@click.option(
    "--serve-timeout", type=setting("serve_timeout"), default=30, show_default=True, metavar="SECONDS",
    envvar="MCP_ASSAY_SERVE_TIMEOUT", show_envvar=True, help="How long --serve waits for the port.",
)  # fmt: skip
@click.option(
    "-t", "--token", envvar=TOKEN_VARIABLE, show_envvar=True, metavar="TOKEN", type=Checked(TOKEN, "token"),
    help="The credential the request carried, where the replay says ${MCP_ASSAY_TOKEN} (the report never keeps "
    "it); never printed.",
)  # fmt: skip
@click.option(
    "--evidence", "number", type=Checked(Number(1, 1000, whole=True), "evidence number"), metavar="N",
    envvar="MCP_ASSAY_EVIDENCE", show_envvar=True,
    help="Replay the finding's Nth piece of evidence (default: the first with a request, the one reports show).",
)  # fmt: skip
@click.option(
    "--timeout", type=setting("timeout"), default=10, show_default=True, metavar="SECONDS",
    envvar="MCP_ASSAY_TIMEOUT", show_envvar=True, help="How long to wait for an answer.",
)  # fmt: skip
@spec_options
def replay_command(
    report: Path,
    finding: str,
    url: str | None,
    command: str | None,
    serve: str | None,
    serve_timeout: float,
    token: str | None,
    number: float | None,
    timeout: float,
    spec_dir: str | None,
    spec_paths: tuple[str, ...],
) -> None:
    """Send a finding's request again to a live peer, show what came back, and judge it with the same check.

    Exit 1 while the finding still fails, 0 once it passes (the way to check a fix), 3 when there is
    nothing to judge, 2 for a usage error.

    \b
    mcp-assay replay report.json 3fa2c1d
    mcp-assay replay report.json 3fa2c1d --url http://127.0.0.1:9000/mcp
    mcp-assay replay report.json 3fa2c1d --serve "python server.py --port 8000"
    mcp-assay replay report.json RPC-13 --command "python server.py"
    """
    spec = build_spec(spec_dir, spec_paths)
    result = _finding(_report(report), finding)
    item, replay = _evidence(result, int(number) if number is not None else None)
    url = _for(replay, "http", "--url", url, result)
    command = _for(replay, "stdio", "--command", command, result)
    serve = _for(replay, "http", "--serve", serve, result)
    console = Console(highlight=False)
    _heading(console, result, item)
    if result.side is Side.CLIENT:
        raise NotReplayable(
            f"{result.check} judges the client, and a replay is sent by mcp-assay, not by the client: run the client "
            "through mcp-assay proxy (or the tap) again to see whether it is fixed"
        )
    given = [token, *(os.environ.get(name) for name in replay.variables)]
    redactor = Redactor(secrets=[value for value in given if value])  # what was filled in is never printed
    redact_logs_with(redactor)
    resent = asyncio.run(
        _resend(replay, url=url, command=command, serve=serve, serve_timeout=serve_timeout, token=token,
                timeout=timeout)
    )  # fmt: skip
    target = redactor.url(resent.target) if replay.transport == "http" else redactor.text(resent.target)
    console.print(Text(f"sent to {printable(target, newlines=False)}:", style="bold"), soft_wrap=True)
    _print_traffic(console, resent, redactor)
    active = result.source is not Source.PASSIVE
    verdict = rejudge(resent, result.check, spec, revision=result.revision, active=active, redactor=redactor)
    raise SystemExit(_conclude(console, result, verdict))


async def _resend(
    replay: Replay,
    *,
    url: str | None,
    command: str | None,
    serve: str | None,
    serve_timeout: float,
    token: str | None,
    timeout: float,
) -> Resent:
    """The replay sent, after ``serve`` has started its server (stopped after); an HTTP endpoint with nothing
    listening says how to start one."""
    launched = await launch(shlex.split(serve), url or replay.url, timeout=serve_timeout) if serve else None
    try:
        return await resend(replay, url=url, command=command, token=token, environment=os.environ, timeout=timeout)
    except Unreachable as exc:
        if replay.transport != "http" or serve:
            raise
        raise Unreachable(
            f"{exc}: start the server first, or give --serve COMMAND to start it for the replay (a run's --serve "
            "stopped its server when the run ended)",
            advice=exc.advice,
        ) from exc
    finally:
        if launched is not None:
            await launched.stop()


def _for(replay: Replay, transport: str, flag: str, value: str | None, result: Verdict) -> str | None:
    """``value`` when the finding was found over ``transport``; a flag for the other one is a usage error, and its
    environment twin (run's, set for another target) is left unused."""
    if value is None or replay.transport == transport:
        return value
    ctx = click.get_current_context()
    name = flag.lstrip("-")
    if ctx.get_parameter_source(name) is ParameterSource.ENVIRONMENT:
        return None
    other = "--url" if flag == "--command" else "--command"
    found = "stdio" if replay.transport == "stdio" else "HTTP"
    raise ConfigError(f"{flag}: finding {finding_id(result)} was found over {found}; give {other} instead")


def _heading(console: Console, result: Verdict, item: Evidence) -> None:
    where = f" · {result.revision}" if result.revision else ""
    console.print(
        Text(f"finding {finding_id(result)} · {', '.join(result.requirements)}{where} · {result.source.value}  "
             f"{printable(result.title, newlines=False)}", style="bold"),
        soft_wrap=True,
    )  # fmt: skip
    reason = result.reason or item.detail
    if reason:
        console.print(Text(f"reported: {printable(reason, newlines=False)}", style="dim"), soft_wrap=True)
    console.print(Text(f"replay: {replay_line(item.reproduction)}", style="dim"), soft_wrap=True, crop=False)


def _conclude(console: Console, result: Verdict, verdict: Verdict) -> int:
    """The verdict line and the exit status: still failing 1, fixed 0, nothing judged 3."""
    words, style, code = _OUTCOMES.get(verdict.outcome, ("not judged", "bold yellow", ExitCode.NOT_JUDGED))
    reason = verdict.reason or _first_detail(verdict)
    if verdict.outcome is Outcome.FAILED and verdict.evidence:
        reason = verdict.evidence[0].detail or reason
    verb = {Outcome.FAILED: "fails", Outcome.PASSED: "passes"}.get(verdict.outcome, "could not judge")
    text = f"{words} — {result.check} {verb} on the replay"
    if result.revision:
        text += f" at {result.revision}"
    if reason:
        text += f": {printable(reason, newlines=False)}"
    console.print(Text(text, style=style), soft_wrap=True)
    return int(code)


def _first_detail(verdict: Verdict) -> str:
    return next((item.detail for item in verdict.evidence if item.detail), "")
