"""Options several commands share, and turning them into library objects.

Each option declares its environment twin explicitly (``MCP_ASSAY_<NAME>``), so the twin is
stable, documented in ``--help``, and checked by a test that walks every command.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from mcp_assay.cli.params import Checked, ReportSpec, SpecPath, WritableFile, readable_file
from mcp_assay.recording.redaction import REDACTED
from mcp_assay.report import ReportTarget, parse_report_option
from mcp_assay.report.baseline import Baseline, read_baseline
from mcp_assay.report.model import FailOn, SchemaInfo
from mcp_assay.report.sdks import ACCEPT_FLAG, SdkChoice, parse_sdk
from mcp_assay.spec import SpecSet, load_spec
from mcp_assay.spec.engine import registered_checks
from mcp_assay.spec.sources import SPEC_DIR_ENV
from mcp_assay.userinput.values import Number
from mcp_assay.vocabulary.errors import ConfigError

__all__ = [
    "ReportChoices",
    "build_spec",
    "given_options",
    "parse_show_option",
    "inject_options",
    "parse_inject",
    "report_choices",
    "report_options",
    "report_targets",
    "schema_infos",
    "sdk_choice",
    "sdk_options",
    "spec_dir_name",
    "show_option",
    "spec_notes",
    "spec_options",
    "write_baseline_option",
]


class Families(click.ParamType):  # type: ignore[type-arg]
    """``--inject version,hold``: every name a known fault family (or ``all``); the text is kept as given."""

    name = "family[,family]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from mcp_assay.addon.inject import parse_families

        try:
            parse_families(str(value))
        except ConfigError as exc:
            self.fail(str(exc).removeprefix("--inject "), param, ctx)
        return value


def spec_options[F: Callable[..., Any]](func: F) -> F:
    """``--spec-dir`` and ``--spec-path``."""
    func = click.option(
        "--spec-path",
        "spec_paths",
        multiple=True,
        envvar="MCP_ASSAY_SPEC_PATH",
        show_envvar=True,
        metavar="[REVISION=]PATH",
        type=SpecPath(),
        help="Use this schema.json even if it matches no pin (the report says so). Repeatable; "
        "the revision is the parent folder's name unless given as REVISION=PATH.",
    )(func)
    func = click.option(
        "--spec-dir",
        envvar=SPEC_DIR_ENV,
        show_envvar=True,
        type=click.Path(exists=True, file_okay=False, dir_okay=True),
        help="Folder of <revision>/schema.json files (default: the cache filled by `mcp-assay spec pull`).",
    )(func)
    return func


def show_option[F: Callable[..., Any]](func: F) -> F:
    """``--show``: which listings the terminal report gives in full."""
    return click.option(
        "--show",
        "show",
        multiple=True,
        envvar="MCP_ASSAY_SHOW",
        show_envvar=True,
        metavar="LISTING[,LISTING]",
        callback=parse_show_option,
        help="List these in full in the terminal report too: failed, not-verified, should, notes, known, passed, "
        "or all (the full listing). Default: the failures by cause, one line per SHOULD finding, the counts.",
    )(func)


def parse_show_option(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> frozenset[str]:
    """``--show`` values as section keys; an unknown one is a usage error before any work."""
    from mcp_assay.report.brief import parse_show
    from mcp_assay.vocabulary.errors import ConfigError

    try:
        return parse_show(values or ())
    except ConfigError as exc:
        raise click.BadParameter(str(exc).removeprefix("--show: "), ctx, param) from None


def write_baseline_option[F: Callable[..., Any]](func: F) -> F:
    """``--write-baseline``: a baseline from this run's failures, next to its reports."""
    return click.option(
        "--write-baseline",
        type=WritableFile(path_type=Path),
        envvar="MCP_ASSAY_WRITE_BASELINE",
        show_envvar=True,
        metavar="FILE",
        help="Also write a baseline accepting every failure of this run (known ones keep their reason); fill in "
        "each reason, then pass it as --baseline so CI fails only on new failures.",
    )(func)


def sdk_options[F: Callable[..., Any]](func: F) -> F:
    """``--sdk NAME@VERSION`` (or ``none``) and ``--accept-sdk-findings``: whose failures are the SDK's."""
    func = click.option(
        ACCEPT_FLAG,
        "accept_sdk_findings",
        is_flag=True,
        default=False,
        envvar="MCP_ASSAY_ACCEPT_SDK_FINDINGS",
        show_envvar=True,
        help="Accept the failures that are known findings of the SDK the peer is built on: they are listed as "
        "KNOWN and no longer decide the exit status (your own failures still do).",
    )(func)
    func = click.option(
        "--sdk",
        "sdk",
        multiple=True,
        envvar="MCP_ASSAY_SDK",
        show_envvar=True,
        metavar="NAME@VERSION|none",
        callback=_check_sdk,
        help="The SDK the peer is built on, e.g. mcp@2.3.0 (instead of recognizing it from what the peer shows); "
        "none: attribute no failure to an SDK. Repeatable (a server's and a client's).",
    )(func)
    return func


def _check_sdk(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> tuple[str, ...]:
    """``--sdk`` checked before any work: a malformed or unknown value is one usage error."""
    try:
        parse_sdk(values or ())
    except ConfigError as exc:
        raise click.BadParameter(str(exc).removeprefix("--sdk "), ctx, param) from None
    return tuple(values or ())


def sdk_choice(values: Sequence[str], accept: bool) -> SdkChoice:
    """The checked ``--sdk`` values and ``--accept-sdk-findings`` as one choice."""
    return parse_sdk(values, accept=accept)


def report_options[F: Callable[..., Any]](func: F) -> F:
    """``--report``, ``--fail-on``, ``--baseline`` and ``--show``."""
    func = show_option(func)
    func = click.option(
        "--baseline",
        envvar="MCP_ASSAY_BASELINE",
        show_envvar=True,
        metavar="FILE",
        type=readable_file(),
        help="Known findings (mcp-assay.baseline/1 YAML): a failure an entry matches is reported as KNOWN with "
        "its reason and does not fail the run; an entry whose check now passes does.",
    )(func)
    func = click.option(
        "--fail-on",
        type=click.Choice([item.value for item in FailOn]),
        default=FailOn.MUST.value,
        show_default=True,
        envvar="MCP_ASSAY_FAIL_ON",
        show_envvar=True,
        help="Exit 1 on failed MUST requirements (must), also on SHOULD findings (should), or never.",
    )(func)
    func = click.option(
        "--report",
        "reports",
        multiple=True,
        envvar="MCP_ASSAY_REPORT",
        show_envvar=True,
        metavar="FORMAT[:PATH]",
        type=ReportSpec(),
        help="terminal, json, markdown, html, junit, tap or sarif; repeatable. Without PATH a file lands in the "
        "temp dir (terminal goes to stdout, or to stderr for the tap); a PATH that is a folder gets the same "
        "timestamped name in it; PATH '-' is stdout. Default: terminal.",
    )(func)
    return func


def inject_options[F: Callable[..., Any]](func: F) -> F:
    """``--inject`` and ``--inject-hold-ms`` (``proxy`` and ``tap``).

    The fault families are imported here, when ``proxy`` or ``tap`` declares its options, not when this module
    is: every other command's process goes without them."""
    from mcp_assay.addon.inject import DEFAULT_HOLD_MS, MAX_HOLD_MS, family_names

    func = click.option(
        "--inject-hold-ms",
        type=Checked(Number(1, MAX_HOLD_MS, whole=True, unit="milliseconds"), "ms"),
        default=DEFAULT_HOLD_MS,
        show_default=True,
        envvar="MCP_ASSAY_INJECT_HOLD_MS",
        show_envvar=True,
        metavar="MS",
        help="How long the hold family keeps an answer from the client: longer than its timeout, bounded.",
    )(func)
    func = click.option(
        "--inject",
        multiple=True,
        envvar="MCP_ASSAY_INJECT",
        show_envvar=True,
        metavar="FAMILY[,FAMILY]",
        type=Families(),
        help=f"Inject faults toward the client on the server's behalf and judge its reactions: {family_names()}, "
        "or all; repeatable. Off by default (forwarding is unchanged). Each case fires at most once per era in a "
        "session, and is marked 'injected by mcp-assay' everywhere.",
    )(func)
    return func


def parse_inject(values: Sequence[str], hold_ms: int) -> str:
    """``--inject`` values as the addon option (``version,hold``); unknown families or a bad hold are usage errors."""
    from mcp_assay.addon.inject import check_hold_ms, parse_families

    families = parse_families(values)
    check_hold_ms(hold_ms)
    return ",".join(sorted(family.name for family in families))


def report_targets(values: Sequence[str], *, others: Mapping[str, Path | None] | None = None) -> list[ReportTarget]:
    """The ``--report`` targets; two that would write the same file (or both to standard output), or one that
    would overwrite another output (``others``: ``{"--record": path}``), are a usage error."""
    targets = [parse_report_option(value) for value in values]
    seen: dict[Path | str, str] = {}
    for flag, path in (others or {}).items():
        if path is not None:
            seen[path.expanduser().resolve()] = f"{flag} {path}"
    for value, target in zip(values, targets, strict=True):
        place: Path | str | None
        if target.path is not None:
            place = target.path.expanduser().resolve()
        else:
            place = "standard output" if target.stdout or target.format == "terminal" else None
        if place is None:
            continue
        if place in seen:
            where = place if isinstance(place, str) else f"the same file ({target.path})"
            raise ConfigError(f"--report {value} and {seen[place]} would both write to {where}; give each its own")
        seen[place] = f"--report {value}"
    return targets


@dataclass(frozen=True, slots=True)
class ReportChoices:
    """What a command that writes a report was asked for: ``--report``, ``--fail-on``, ``--baseline``, ``--show``,
    ``--write-baseline``, ``--sdk`` and ``--accept-sdk-findings``, gathered once (:func:`report_choices`)."""

    reports: tuple[str, ...]
    fail_on: str
    baseline: str | None
    show: frozenset[str]
    write_baseline: Path | None
    sdk: tuple[str, ...]
    accept_sdk_findings: bool

    def targets(self, *, others: Mapping[str, Path | None] | None = None) -> list[ReportTarget]:
        """The checked ``--report`` targets (:func:`report_targets`)."""
        return report_targets(self.reports, others=others)

    def known(self) -> Baseline | None:
        """The ``--baseline``, read and checked against the registered checks (a mistake in it is a usage error)."""
        return read_baseline(self.baseline, registered_checks())

    @property
    def sdk_choice(self) -> SdkChoice:
        return sdk_choice(self.sdk, self.accept_sdk_findings)

    @property
    def failing(self) -> FailOn:
        return FailOn(self.fail_on)

    def worker_settings(self) -> dict[str, Any]:
        """The choices as the judging worker of the proxy and the tap takes them (plain JSON values)."""
        return {
            "fail_on": self.fail_on,
            "baseline": self.baseline,
            "show": sorted(self.show),
            "write_baseline": str(self.write_baseline.expanduser()) if self.write_baseline else None,
            "sdk": list(self.sdk),
            "accept_sdk_findings": self.accept_sdk_findings,
        }


_REPORT_CHOICES = ("reports", "fail_on", "baseline", "show", "write_baseline", "sdk", "accept_sdk_findings")


def report_choices(
    write_baseline: Callable[[Callable[..., Any]], Callable[..., Any]] = write_baseline_option,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The report options of a command (:func:`report_options`, :func:`sdk_options`, and ``write_baseline``, the
    ``--write-baseline`` option), handed to it as one :class:`ReportChoices` keyword argument, ``choices``."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def command(*args: Any, **kwargs: Any) -> Any:
            choices = ReportChoices(**{name: kwargs.pop(name) for name in _REPORT_CHOICES})
            return func(*args, choices=choices, **kwargs)

        return report_options(sdk_options(write_baseline(command)))

    return decorate


SECRET_OPTIONS = frozenset({"secrets", "token", "client_secret"})
"""Options whose values are credentials: a recording's header says they were given, never what they were."""


def given_options(ctx: click.Context) -> dict[str, Any]:
    """The options the user gave the current command (by flag, environment twin or config), by their long flag
    name, for a recording's header: credentials replaced whole (the recording writer scrubs the rest)."""
    shown: dict[str, Any] = {}
    for param in ctx.command.params:
        name = param.name
        if not isinstance(param, click.Option) or name is None:
            continue
        source = ctx.get_parameter_source(name)
        value = ctx.params.get(name)
        if source in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP) or value is None:
            continue
        flag = max(param.opts, key=len)
        if name in SECRET_OPTIONS:
            value = [REDACTED for _ in value] if isinstance(value, list | tuple) else REDACTED
        elif isinstance(value, tuple | list | frozenset | set):
            value = sorted(str(item) for item in value) if isinstance(value, frozenset | set) else list(value)
        elif isinstance(value, Path):
            value = str(value)
        shown[flag] = value
    return shown


def build_spec(spec_dir: str | None, spec_paths: Sequence[str]) -> SpecSet:
    return load_spec(spec_dir=spec_dir, spec_paths=spec_paths, spec_dir_name=spec_dir_name())


def spec_dir_name() -> str:
    """Where the current command's schema folder came from: ``MCP_ASSAY_SPEC_DIR`` when it was read from
    there, else ``--spec-dir`` (errors about the folder name the one the user used)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.get_parameter_source("spec_dir") is ParameterSource.ENVIRONMENT:
        return SPEC_DIR_ENV
    return "--spec-dir"


def schema_infos(spec: SpecSet) -> list[SchemaInfo]:
    return [
        SchemaInfo(r.name, r.schema.origin.value, str(r.schema.path), r.schema.sha256, r.schema.pinned)
        for r in spec.window
    ]


def spec_notes(spec: SpecSet) -> list[str]:
    return [
        f"an unpinned schema was used for {revision.name} "
        f"({revision.schema.path}, sha256 {revision.schema.sha256[:12]}…)"
        for revision in spec.unpinned
    ]
