"""``mcp-assay validate``: judge recorded traffic offline."""

from __future__ import annotations

import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from mcp_assay.addon.importers import READERS
from mcp_assay.cli.command import BASELINE, SCHEMAS, AssayCommand, environment
from mcp_assay.cli.options import (
    ReportChoices,
    build_spec,
    report_choices,
    spec_options,
)
from mcp_assay.cli.params import Checked
from mcp_assay.recording.audit import AuditTrail, audit_lines
from mcp_assay.recording.inputs import Inputs, load_inputs, merged_inputs, reader_for, recording_source
from mcp_assay.recording.records import verify_recording
from mcp_assay.report import emit_reports
from mcp_assay.report.about import Stats
from mcp_assay.report.baseline import apply_baseline
from mcp_assay.report.build import PER_MESSAGE, build_report
from mcp_assay.report.model import Report, traffic_stats
from mcp_assay.report.sdk_signs import SdkSigns
from mcp_assay.report.sdks import SdkChoice, attribute
from mcp_assay.scale.cluster import CLUSTER_ENV, judge_on_cluster
from mcp_assay.scale.local import cores, judge_here
from mcp_assay.scale.locations import SUFFIXES, Recording, expand, is_url
from mcp_assay.scale.reduce import reduce_units, target_of
from mcp_assay.scale.units import WINDOW, HopsSeen, plan_units
from mcp_assay.scale.watch import CaptureWatch
from mcp_assay.spec.checks import Check
from mcp_assay.spec.engine import split_only
from mcp_assay.spec.gateway import GatewayJudge
from mcp_assay.spec.newer import NewerRevisions
from mcp_assay.spec.requirements import glossary
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite.judging import RUN_OBSERVATION, judge_suite_log, tested_revisions
from mcp_assay.suite.untried import coverage_of
from mcp_assay.userinput.values import TEXT, Number
from mcp_assay.vocabulary.errors import ConfigError, RecordingError
from mcp_assay.vocabulary.verdicts import Source

__all__ = ["validate_command"]

MAX_JOBS = 1024
"""The most processes ``--jobs`` starts (more than any machine's cores: a typo, not a plan)."""


@click.command(
    "validate",
    cls=AssayCommand,
    short_help="Judge recordings, mitmproxy flow files or HAR files offline, on every core or a cluster.",
    reads=(
        (
            "RECORDINGS...",
            f"files (each {', '.join(reader.name for reader in READERS[:-1])} or {READERS[-1].name}, told apart by "
            f"content), folders (their files ending in {', '.join(SUFFIXES)}, and below), glob patterns, or fsspec "
            "URLs; each recording is a capture of its own, all judged into one report.",
        ),
        SCHEMAS,
        BASELINE,
        environment(),
    ),
)
@click.argument("recordings", nargs=-1, required=True, type=Checked(TEXT, "recording"))
@spec_options
@report_choices()
@click.option(
    "--only",
    envvar="MCP_ASSAY_ONLY",
    show_envvar=True,
    metavar="ID[,ID]",
    type=Checked(TEXT, "pattern"),
    help="Judge only the checks citing these requirement IDs or ID prefixes, in upper case (RES, HTTP-0, "
    "AUTH-09), or named here whole (as `mcp-assay checks` lists them).",
)
@click.option(
    "--jobs",
    "-j",
    envvar="MCP_ASSAY_JOBS",
    show_envvar=True,
    type=Checked(Number(1, MAX_JOBS, whole=True, unit="processes"), "N"),
    default=None,
    metavar="N",
    help="Judge in N processes at once (default: one per core this process may use; 1: in this process).",
)
@click.option(
    "--cluster",
    envvar=CLUSTER_ENV,
    show_envvar=True,
    metavar="ADDRESS",
    type=Checked(TEXT, "address"),
    default=None,
    help="Judge on a Dask cluster (its scheduler's address, e.g. tcp://host:8786) instead of this machine's cores.",
)
def validate_command(
    recordings: tuple[str, ...],
    spec_dir: str | None,
    spec_paths: tuple[str, ...],
    choices: ReportChoices,
    only: str | None,
    jobs: int | None,
    cluster: str | None,
) -> None:
    """Judge recorded MCP traffic offline and write the report.

    \b
    mcp-assay validate session.jsonl   a recording: run, proxy, tap or demo --record
    mcp-assay validate capture.flows   a mitmproxy flow file: mitmdump -w capture.flows
    mcp-assay validate export.har      a HAR file: browser developer tools, mitmdump --set hardump=FILE
    mcp-assay validate nightly/        every recording in a folder, on every core
    mcp-assay validate 's3://bucket/mcp/*.jsonl' --cluster tcp://scheduler:8786
    """
    targets = choices.targets()
    found = expand(recordings)
    _check_recordings([item.location for item in found if not is_url(item.location)])
    known = choices.known()
    selected = split_only(only)
    if selected.others:
        raise click.UsageError(
            f"--only {','.join(selected.others)}: not a requirement ID or prefix (upper case: RES, HTTP-0) nor a "
            "check's name; probe families are for `mcp-assay run`"
        )
    if selected.unmatched:
        raise click.UsageError(f"--only {','.join(selected.unmatched)}: no check cites a requirement starting so")
    checks = selected.checks
    if jobs is not None and cluster:
        raise click.UsageError(
            "--jobs and --cluster: choose one (a cluster runs as many units at once as it has threads)"
        )
    choice = choices.sdk_choice
    spec = build_spec(spec_dir, spec_paths)
    started = time.perf_counter()
    local = [item.location for item in found if not is_url(item.location)]
    evidence = _verified(local)
    if any(recording_source(path).startswith("mcp-assay run") for path in local if path.endswith(".jsonl")):
        if len(local) < len(found):
            raise click.UsageError("recordings of mcp-assay run are judged here, as the run judged them: not from URLs")
        report = _judge_suite_recordings(local, spec, checks, choice)  # small: read whole, judged as the run did
    else:
        report = _judge_captures(found, recordings, spec, checks, choice, jobs=jobs, cluster=cluster)
    report.target = replace(report.target, evidence=evidence)
    report.fail_on = choices.failing
    report.stats = replace(report.stats, duration_ms=round((time.perf_counter() - started) * 1000))
    if known is not None:
        apply_baseline(report, known)
        attribute(report, choice, report.sdks)  # after the baseline, which keeps its own reasons
    emit_reports(report, targets, show=choices.show, write_baseline=choices.write_baseline)
    raise SystemExit(report.exit_code())


def _verified(recordings: Sequence[str]) -> list[Mapping[str, Any]]:
    """Each file's digest and what its chain says, said on stderr before anything is judged (the verdicts then
    rest on files the reader knows to be whole, altered, or unverifiable), and kept for the report's evidence."""
    evidence: list[Mapping[str, Any]] = []
    for path in recordings:
        reader_for(Path(path), READERS)  # a file of no known format is one line before anything else is said
        integrity = verify_recording(path)
        style = {"whole": "green", "broken": "red"}.get(integrity.state, "yellow")
        Console(stderr=True).print(
            Text(f"{Path(path).name}: {integrity.summary()}", style=style), soft_wrap=True, highlight=False
        )
        evidence.append(integrity.evidence())
    return evidence


def _judge_captures(
    found: Sequence[Recording],
    described: Sequence[str],
    spec: SpecSet,
    checks: list[Check] | None,
    sdk: SdkChoice,
    *,
    jobs: int | None,
    cluster: str | None,
) -> Report:
    """Captures of live traffic: each recording (or share of a long one) judged on its own, here, on every core,
    or on a cluster, and reduced into one report (:mod:`mcp_assay.scale`)."""
    try:
        return _judge_in_units(found, described, spec, checks, sdk, jobs=jobs, cluster=cluster)
    except HopsSeen:
        if any(is_url(item.location) for item in found):
            raise click.UsageError("recordings of a gateway's hops are judged here, together: not from URLs") from None
        return _judge_hops([item.location for item in found], described, spec, checks, sdk)


def _judge_in_units(
    found: Sequence[Recording],
    described: Sequence[str],
    spec: SpecSet,
    checks: list[Check] | None,
    sdk: SdkChoice,
    *,
    jobs: int | None,
    cluster: str | None,
) -> Report:
    """Each recording (or share of a long one) judged on its own and reduced into one report; :class:`HopsSeen`
    when one of them crossed a gateway's hops."""
    if cluster:
        results = judge_on_cluster(cluster, lambda threads: plan_units(found, threads), spec, checks)
    else:
        count = jobs if jobs is not None else cores()
        results = judge_here(plan_units(found, count), spec, checks, count)
    return reduce_units(results, spec=spec, checks=checks, sdk=sdk, described=described)


def _judge_hops(
    recordings: Sequence[str], described: Sequence[str], spec: SpecSet, checks: list[Check] | None, sdk: SdkChoice
) -> Report:
    """Captures of a gateway's hops (a both-hops recording, or a proxy's of the front and a tap's of the back),
    merged in the order their exchanges finished and judged in this process: who is at fault for a failure on one
    hop depends on what the other hop showed, which a share of the traffic judged elsewhere cannot see."""
    inputs = Inputs()
    trail = AuditTrail()
    watch = CaptureWatch.newest(spec.newest.name)
    judge = GatewayJudge(spec, checks=checks, source=Source.PASSIVE, window=WINDOW, on_window=trail.take)
    for exchange in merged_inputs(recordings, READERS, inputs):
        watch.see(exchange)
        judge.add(exchange)
    verdicts = judge.verdicts()
    for log, carried in judge.carried():
        trail.take(log, carried)
    return build_report(
        verdicts,
        target=replace(
            target_of(described, watch.transports, inputs.kinds), unknown_revisions=watch.newer.found or None
        ),
        schemas=spec.schema_infos(),
        notes=[*inputs.problems, *watch.notes.notes(), *filter(None, [trail.note()])],
        audit=list(trail.lines),
        stats=Stats(
            exchanges=judge.exchanges_seen,
            observations=judge.observations_seen,
            messages=judge.messages_seen,
            windows=judge.windows + 1,
        ),
        glossary=glossary(verdicts),
        unjudged=watch.presence.unjudged(),  # a capture in which no peer ever answered holds nothing to judge
        sdk=sdk,
        signs=watch.signs,
    )


SCRIPTS = (".py", ".js", ".mjs", ".ts", ".sh")
"""What a server's own source looks like: ``validate server.py`` is someone who meant ``run -c``."""


RECORDING_SUFFIXES = (".jsonl", ".ndjson", ".json", ".har", ".flow", ".flows", ".mitm")
"""Names a recording goes by: such a file no reader reads is a damaged recording (data: not judged, exit 3)."""


def _check_recordings(recordings: Sequence[str]) -> None:
    """A file none of the readers reads, and not named like a recording, is the user's mistake: one line under the
    usage, exit 2, before any work (a server's source gets the ``run -c`` line that tests the server it starts)."""
    for raw in recordings:
        path = Path(raw)
        if path.suffix.lower() in RECORDING_SUFFIXES:
            continue
        try:
            reader_for(path, READERS)
        except RecordingError as exc:
            hint = ""
            if path.suffix in SCRIPTS:
                runner = {".py": "python", ".sh": "sh"}.get(path.suffix, "node")
                hint = f"; to test the server it starts: mcp-assay run -c {shlex.quote(f'{runner} {raw}')}"
            raise ConfigError(f"{exc}{hint}") from None


def _judge_suite_recordings(
    recordings: Sequence[str], spec: SpecSet, checks: list[Check] | None, sdk: SdkChoice
) -> Report:
    """Recordings of ``mcp-assay run``: judged exactly as the run judged them (its revision, its skips)."""
    log, problems, kinds = load_inputs(recordings, READERS)
    signs = SdkSigns()
    for item in log:
        signs.see(item)
    verdicts, notes = judge_suite_log(log, spec, checks=checks)
    newer = NewerRevisions(spec.newest.name)
    newer.see_all(log)
    runs = log.observations(RUN_OBSERVATION)
    note = str(runs[-1].data.get("note", "")) if runs else ""
    tested = tested_revisions(log)
    report = build_report(
        verdicts,
        target=replace(target_of(recordings, log.transports(), kinds), unknown_revisions=newer.found or None),
        schemas=spec.schema_infos(),
        tested=tested,
        revision_note=note or PER_MESSAGE,
        notes=[*problems, *notes],
        audit=audit_lines(log),
        stats=replace(traffic_stats(log), messages=len(log.messages())),
        glossary=glossary(verdicts),
        sdk=sdk,
        signs=signs,
    )
    report.untried, report.generated = coverage_of(log, verdicts, tested)  # what the run did not try, as it said
    return report
