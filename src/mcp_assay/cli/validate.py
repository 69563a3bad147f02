"""``mcp-assay validate``: judge recorded traffic offline."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import click

from mcp_assay.addon.importers import READERS
from mcp_assay.audit import audit_lines
from mcp_assay.cli.command import BASELINE, SCHEMAS, AssayCommand, environment
from mcp_assay.cli.options import (
    build_spec,
    report_options,
    report_targets,
    sdk_choice,
    sdk_options,
    spec_options,
    write_baseline_option,
)
from mcp_assay.cli.params import Checked
from mcp_assay.inputs import load_inputs, recording_source
from mcp_assay.report import emit_reports
from mcp_assay.report.baseline import apply_baseline, read_baseline
from mcp_assay.report.build import PER_MESSAGE, build_report
from mcp_assay.report.model import FailOn, Report, traffic_stats
from mcp_assay.report.sdk_signs import SdkSigns
from mcp_assay.report.sdks import SdkChoice, attribute
from mcp_assay.scale.cluster import CLUSTER_ENV, judge_on_cluster
from mcp_assay.scale.local import cores, judge_here
from mcp_assay.scale.locations import SUFFIXES, Recording, expand, is_url
from mcp_assay.scale.reduce import reduce_units, target_of
from mcp_assay.scale.units import plan_units
from mcp_assay.spec.checks import Check
from mcp_assay.spec.engine import registered_checks, select_checks
from mcp_assay.spec.requirements import glossary
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite.judging import RUN_OBSERVATION, judge_suite_log, tested_revisions
from mcp_assay.values import TEXT, Number

__all__ = ["register"]

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
@report_options
@sdk_options
@write_baseline_option
@click.option(
    "--only",
    envvar="MCP_ASSAY_ONLY",
    show_envvar=True,
    metavar="PATTERN[,PATTERN]",
    type=Checked(TEXT, "pattern"),
    help="Judge only checks whose name contains PATTERN or whose requirement IDs start with it (e.g. RES, HTTP-0).",
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
    reports: tuple[str, ...],
    fail_on: str,
    baseline: str | None,
    show: frozenset[str],
    write_baseline: Path | None,
    only: str | None,
    sdk: tuple[str, ...],
    accept_sdk_findings: bool,
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
    targets = report_targets(reports)
    known = read_baseline(baseline, registered_checks())
    checks = select_checks(only)
    if checks is not None and not checks:
        raise click.UsageError(f"--only {only}: no check matches")
    if jobs is not None and cluster:
        raise click.UsageError(
            "--jobs and --cluster: choose one (a cluster runs as many units at once as it has threads)"
        )
    choice = sdk_choice(sdk, accept_sdk_findings)
    found = expand(recordings)
    spec = build_spec(spec_dir, spec_paths)
    started = time.perf_counter()
    local = [item.location for item in found if not is_url(item.location)]
    if any(recording_source(path).startswith("mcp-assay run") for path in local if path.endswith(".jsonl")):
        if len(local) < len(found):
            raise click.UsageError("recordings of mcp-assay run are judged here, as the run judged them: not from URLs")
        report = _judge_suite_recordings(local, spec, checks, choice)  # small: read whole, judged as the run did
    else:
        report = _judge_captures(found, recordings, spec, checks, choice, jobs=jobs, cluster=cluster)
    report.fail_on = FailOn(fail_on)
    report.stats = replace(report.stats, duration_ms=round((time.perf_counter() - started) * 1000))
    if known is not None:
        apply_baseline(report, known)
        attribute(report, choice, report.sdks)  # after the baseline, which keeps its own reasons
    emit_reports(report, targets, show=show, write_baseline=write_baseline)
    raise SystemExit(report.exit_code())


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
    if cluster:
        results = judge_on_cluster(cluster, lambda threads: plan_units(found, threads), spec, checks)
    else:
        count = jobs if jobs is not None else cores()
        results = judge_here(plan_units(found, count), spec, checks, count)
    return reduce_units(results, spec=spec, checks=checks, sdk=sdk, described=described)


def _judge_suite_recordings(
    recordings: Sequence[str], spec: SpecSet, checks: list[Check] | None, sdk: SdkChoice
) -> Report:
    """Recordings of ``mcp-assay run``: judged exactly as the run judged them (its revision, its skips)."""
    log, problems, kinds = load_inputs(recordings, READERS)
    signs = SdkSigns()
    for item in log:
        signs.see(item)
    verdicts, notes = judge_suite_log(log, spec, checks=checks)
    runs = log.observations(RUN_OBSERVATION)
    note = str(runs[-1].data.get("note", "")) if runs else ""
    return build_report(
        verdicts,
        target=target_of(recordings, log.transports(), kinds),
        schemas=spec.schema_infos(),
        tested=tested_revisions(log),
        revision_note=note or PER_MESSAGE,
        notes=[*problems, *notes],
        audit=audit_lines(log),
        stats=replace(traffic_stats(log), messages=len(log.messages())),
        glossary=glossary(verdicts),
        sdk=sdk,
        signs=signs,
    )


def register(group: click.Group) -> None:
    group.add_command(validate_command)
