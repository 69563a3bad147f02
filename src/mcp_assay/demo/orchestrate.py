"""``mcp-assay demo`` from start to report: the main job, on the bundled drafts server, in one call.

The steps, each waited for with a bound: start the drafts server (naive or hardened build) on a
free loopback port; put ``mcp-assay proxy`` in front of it; drive it through the proxy with a real
client session in every revision of the window (:mod:`~mcp_assay.demo.client_session`); stop the proxy,
which writes its report; run the active suite with its probes and the behaviour cases
(``drafts.yaml``) against the server; stop the server. The proxy's report and the suite's become
one report (:func:`combine`), written as HTML and JSON next to the two recordings and the server's
log. Findings are shown live as they are seen (:mod:`~mcp_assay.demo.live`), and every step is an
event for the command's progress display. Nothing here talks to anything but 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml

from mcp_assay.demo.client_session import SessionStep, drive_session
from mcp_assay.demo.live import FirstFindings, SuiteJudge
from mcp_assay.demo.processes import DraftsServer, start_proxy
from mcp_assay.report import render
from mcp_assay.report.about import Stats, Target
from mcp_assay.report.model import FailOn, Report, merge_reports
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite.behaviour.config import BehaviourConfig, parse_behaviour
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.events import Event, ExchangeRecorded, RunFinished
from mcp_assay.suite.runner import arun
from mcp_assay.vocabulary.verdicts import Outcome

__all__ = [
    "BUILDS",
    "CLIENT_LABELS",
    "DemoEvent",
    "DemoFiles",
    "DemoOutcome",
    "DemoSettings",
    "FindingSeen",
    "SessionCalled",
    "StageStarted",
    "SuiteProgressed",
    "behaviour_config",
    "combine",
    "run_demo",
]

BUILDS = ("naive", "hardened")
ROLES = ("reader", "writer")
CLIENT_LABELS = {
    "sdk": "the official Python SDK client",
    "suite": "mcp-assay's own client (the Python SDK is not installed)",
}


@dataclass(frozen=True, slots=True)
class StageStarted:
    """The demo moved on to its next step."""

    text: str


@dataclass(frozen=True, slots=True)
class FindingSeen:
    """A live finding: the first failure of a check, as the proxy or the live judge saw it."""

    origin: str
    """``proxy`` (the client session's traffic) or ``suite`` (the probes' traffic)."""
    line: str


@dataclass(frozen=True, slots=True)
class SessionCalled:
    """The client session made one call through the proxy."""

    step: SessionStep


@dataclass(frozen=True, slots=True)
class SuiteProgressed:
    """An event of the active suite, passed on for the progress display."""

    event: Event


DemoEvent = StageStarted | FindingSeen | SessionCalled | SuiteProgressed


@dataclass(frozen=True, slots=True)
class DemoFiles:
    """Where one demo run keeps what it made: all in one folder."""

    folder: Path

    @property
    def html(self) -> Path:
        return self.folder / "report.html"

    @property
    def json(self) -> Path:
        return self.folder / "report.json"

    @property
    def session(self) -> Path:
        """The recording the proxy made of the client session."""
        return self.folder / "session.jsonl"

    @property
    def suite(self) -> Path:
        """The recording of the suite's own traffic."""
        return self.folder / "suite.jsonl"

    @property
    def proxy_report(self) -> Path:
        return self.folder / "proxy-report.json"

    @property
    def server_log(self) -> Path:
        return self.folder / "server.log"


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoSettings:
    """One demo run."""

    build: str = "naive"
    client: str = "sdk"
    """``sdk`` or ``suite`` (see :func:`~mcp_assay.demo.client_session.choose_client`)."""
    folder: Path
    spec_args: tuple[str, ...] = ()
    """``--spec-dir`` / ``--spec-path`` flags for the proxy, so it judges with the same schemas."""
    notes: tuple[str, ...] = ()
    """Notes for the report from before the run (an unpinned schema, say)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoOutcome:
    """What the demo produced."""

    report: Report
    files: DemoFiles
    server_url: str
    proxy_url: str
    unjudged: str | None = None
    live_findings: int = 0
    notes: list[str] = field(default_factory=list)


def behaviour_config(environ: Mapping[str, str]) -> BehaviourConfig:
    """The demo's behaviour cases (``drafts.yaml``), its ``${NAME}`` values taken from ``environ``."""
    text = resources.files("mcp_assay.demo").joinpath("drafts.yaml").read_text(encoding="utf-8")
    config = parse_behaviour(yaml.safe_load(text), "the demo's drafts.yaml", environ)
    assert config is not None
    return config


async def run_demo(settings: DemoSettings, spec: SpecSet, emit: Callable[[DemoEvent], None]) -> DemoOutcome:
    """Run the demo end to end (see the module docstring) and write its report; return what it made."""
    started = time.perf_counter()
    files = DemoFiles(settings.folder)
    for made in (files.session, files.suite):  # a reused --output-dir: its recordings are replaced, as its reports are
        made.unlink(missing_ok=True)  # (a recording elsewhere is never overwritten; this folder is the demo's own)
    tokens = {role: f"{role}-{secrets.token_hex(12)}" for role in ROLES}
    counted: list[str] = []

    def show(origin: str, line: str) -> None:
        counted.append(line)
        emit(FindingSeen(origin, line))

    first = FirstFindings(show)
    notes: list[str] = list(settings.notes)
    emit(StageStarted(f"starting the drafts example server ({settings.build} build) on 127.0.0.1"))
    server = await asyncio.to_thread(DraftsServer.start, settings.build, files.folder, tokens)
    try:
        emit(StageStarted("starting mcp-assay proxy in front of it"))
        proxy = await asyncio.to_thread(
            start_proxy, server.url, record=files.session, report=files.proxy_report, secrets=list(tokens.values()),
            spec_args=settings.spec_args, on_line=first.proxy_line,
        )  # fmt: skip
        proxy_url = f"http://127.0.0.1:{proxy.port}/mcp"
        try:
            emit(StageStarted(f"client session through the proxy: {CLIENT_LABELS[settings.client]}"))
            eras = sorted(spec.window, reverse=True)
            try:
                await drive_session(
                    proxy_url, tokens["writer"], eras, client=settings.client, step=lambda s: emit(SessionCalled(s))
                )
            except Exception as exc:  # the server's misbehaviour is data: the report says what happened
                notes.append(f"the client session stopped early: {type(exc).__name__}: {exc}")
        finally:
            emit(StageStarted("stopping the proxy: it judges the whole session and writes its report"))
            await asyncio.to_thread(proxy.stop)
        emit(StageStarted("the active suite: probes and behaviour cases, straight to the server"))
        suite_report, unjudged = await _suite(server, tokens, spec, files, first, emit)
    finally:
        await asyncio.to_thread(server.stop)
    proxy_report = _read_report(files.proxy_report, notes)
    report = combine(
        suite_report, proxy_report, build=settings.build, server_url=server.url, proxy_url=proxy_url,
        client=CLIENT_LABELS[settings.client], files=files, notes=notes, spec=spec,
        duration_ms=round((time.perf_counter() - started) * 1000),
    )  # fmt: skip
    files.html.write_text(render(report, "html"), encoding="utf-8")
    files.json.write_text(render(report, "json"), encoding="utf-8")
    return DemoOutcome(
        report=report, files=files, server_url=server.url, proxy_url=proxy_url, unjudged=unjudged,
        live_findings=len(counted), notes=notes,
    )  # fmt: skip


async def _suite(
    server: DraftsServer,
    tokens: Mapping[str, str],
    spec: SpecSet,
    files: DemoFiles,
    first: FirstFindings,
    emit: Callable[[DemoEvent], None],
) -> tuple[Report, str | None]:
    environ = {
        "DRAFTS_READER_TOKEN": tokens["reader"],
        "DRAFTS_WRITER_TOKEN": tokens["writer"],
        "DRAFTS_COUNT_URL": server.count_url,
    }
    config = SuiteConfig(
        url=server.url, token=tokens["writer"], behaviour=behaviour_config(environ), record=str(files.suite)
    )
    judge = SuiteJudge(spec, first, tokens.values())
    finished: list[RunFinished] = []

    def on_event(event: Event) -> None:
        if isinstance(event, ExchangeRecorded) and event.judged:
            judge.exchange(event.exchange)
        elif isinstance(event, RunFinished):
            finished.append(event)
        emit(SuiteProgressed(event))

    try:
        report = await arun(config, spec, on_event)
    finally:
        judge.close()
    return report, finished[-1].unjudged if finished else None


def _read_report(path: Path, notes: list[str]) -> Report | None:
    try:
        return Report.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        notes.append(f"the proxy's report could not be read ({exc}); the report holds the suite's results only")
        return None


def combine(
    suite: Report,
    proxy: Report | None,
    *,
    build: str,
    server_url: str,
    proxy_url: str,
    client: str,
    files: DemoFiles,
    notes: Iterable[str],
    spec: SpecSet,
    duration_ms: int,
) -> Report:
    """The suite's report and the proxy's as one, said to be the demo's.

    Results stay apart per check and source, as in any merge, except that a check one source could
    not establish is left out when the other established it (a passive *not verified* next to the
    suite's pass says nothing more)."""
    reports = [suite] if proxy is None else [suite, proxy]
    merged = merge_reports(reports) if len(reports) > 1 else suite
    established = {r.check for r in merged.results if r.outcome in (Outcome.PASSED, Outcome.FAILED)}
    merged.results = [
        r for r in merged.results if r.outcome in (Outcome.PASSED, Outcome.FAILED) or r.check not in established
    ]
    merged.target = Target(
        kind="demo",
        description=f"{server_url} (the drafts example server, {build} build)",
        transport="streamable-http",
        proxy=proxy_url,
        client=client,
        recording=f"{files.session}, {files.suite}",
        evidence=[item for report in reports for item in report.target.evidence or ()] or None,
        unknown_revisions={k: v for r in reports for k, v in (r.target.unknown_revisions or {}).items()} or None,
    )
    merged.tested = []
    eras = ", ".join(revision.name for revision in sorted(spec.window, reverse=True))
    merged.revision_note = (
        f"the suite tested {' and '.join(suite.tested) or 'no revision'}, each on its own; the client session used "
        f"{eras}, judged by the proxy"
    )
    merged.notes = list(dict.fromkeys([*notes, *merged.notes]))
    merged.stats = Stats(
        exchanges=sum(report.stats.exchanges or 0 for report in reports),
        messages=sum(report.stats.messages or 0 for report in reports),
        duration_ms=duration_ms,
    )
    merged.fail_on = FailOn.MUST
    return merged
