"""``mcp-assay run``: the active conformance suite against one MCP server.

``-u URL`` tests a Streamable HTTP endpoint, ``-c COMMAND`` a stdio server it spawns. Every flag
has an ``MCP_ASSAY_*`` twin; ``--config FILE`` (YAML) holds the same settings, and flags and their
twins win over it. Arguments, paths and the revision are all checked before the first request. A
progress display runs on stderr while the suite works, unless stdout is not a terminal. With no
schema on disk the pinned ones are fetched first (:mod:`mcp_assay.cli.schemas`), unless ``--offline``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from mcp_assay.cli.command import BASELINE, FETCHED_SCHEMAS, SCHEMAS, AssayCommand, environment
from mcp_assay.cli.options import (
    ReportChoices,
    report_choices,
    spec_options,
)
from mcp_assay.cli.params import HEADER_LINES, SECRET_LINES, WritableFile, readable_file, setting
from mcp_assay.cli.schemas import obtain_spec, offline_option
from mcp_assay.recording.logs import redact_with as redact_logs_with
from mcp_assay.recording.logs import scrub
from mcp_assay.recording.redaction import Redactor
from mcp_assay.report import emit_reports
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite.config import SETTINGS, SuiteConfig, read_config_file
from mcp_assay.suite.credentials import AUTH_MODES
from mcp_assay.suite.events import (
    ExchangeRecorded,
    ExploreProgress,
    FamilyFinished,
    FamilyStarted,
    RevisionSelected,
    RunFinished,
    SignInStep,
    StderrLine,
)
from mcp_assay.suite.oauth import Line
from mcp_assay.suite.probes import family_names
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.wire.model import Exchange

__all__ = ["run_command"]


class EnvMayBeEmpty(click.Option):
    """An option whose environment twin means something when set but empty (``MCP_ASSAY_AUTH_SCHEME=``)."""

    def resolve_envvar_value(self, ctx: click.Context) -> str | None:
        if isinstance(self.envvar, str) and os.environ.get(self.envvar) == "":
            return ""
        return super().resolve_envvar_value(ctx)


class Interactive(click.types.BoolParamType):
    """``--interactive`` / ``--no-interactive``; the twin also takes ``always``, ``never`` and ``auto``."""

    name = "always|never|auto"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("always", "never", "auto"):
            return {"always": True, "never": False, "auto": None}[value.strip().lower()]
        return super().convert(value, param, ctx)


_SETTINGS = (
    "url", "command", "spec_version", "modern_only", "token", "auth_header", "auth_scheme", "auth_mode",
    "auth_query_param", "headers", "tool_args", "prompt_args", "generate_args", "generate_args_read_only",
    "resource_sample", "page_limit", "only", "verbose", "rate_limit",
    "retry_budget_ms", "timeout", "stream_budget_ms", "record", "failing_tool", "serve", "serve_timeout",
    "secrets", "default_version", "client_id", "client_secret", "scope", "no_register", "interactive", "no_browser",
    "redirect_host", "redirect_port", "auth_timeout", "without_token", "allow_insecure_http",
    "explore", "explore_budget", "explore_time", "explore_tool", "seed", "gateway_back",
)  # fmt: skip

_OPTIONS: list[tuple[tuple[str, ...], str, dict[str, Any], str]] = [
    (("-u", "--url"), "URL", {"metavar": "URL"}, "Streamable HTTP endpoint of the server under test."),
    (("-c", "--command"), "COMMAND", {"metavar": "COMMAND"},
     'stdio server to spawn, as one shell-quoted string (e.g. "uvx some-server --flag").'),
    (("--serve",), "SERVE", {"metavar": "COMMAND"},
     "Start this HTTP server (one shell-quoted string) before the run, wait for --url's port, stop it after; "
     "its listening addresses are checked (AUTH-31)."),
    (("--serve-timeout",), "SERVE_TIMEOUT", {"metavar": "SECONDS"},
     "How long --serve waits for the port to accept connections.  [default: 30]"),
    (("--spec-version",), "SPEC_VERSION", {"metavar": "REVISION"},
     "Test only this revision (it must be in the window) instead of every one the server serves."),
    (("--modern-only",), "MODERN_ONLY", {"is_flag": True, "default": None},
     "The server is meant to serve modern revisions only: the handshake era is not tested, and an initialize "
     "it answers anyway is a finding (VER-15, VER-21)."),
    (("--default-version",), "DEFAULT_VERSION", {"metavar": "REVISION"},
     "The revision the server serves a client that declares none, assumed when it cannot be asked (no token, no "
     "answer); in the window.  [default: the newest supported]"),
    (("-t", "--token"), "TOKEN", {}, "Bearer token, sent per --auth-mode; never printed."),
    (("--auth-header",), "AUTH_HEADER", {"metavar": "NAME"}, "Header carrying the token.  [default: authorization]"),
    (("--auth-scheme",), "AUTH_SCHEME", {"metavar": "SCHEME", "cls": EnvMayBeEmpty},
     "Token prefix; '' (or the twin set but empty) for a bare token.  [default: Bearer]"),
    (("--auth-mode",), "AUTH_MODE", {"type": click.Choice(AUTH_MODES)},
     "Send the token in a header, as a query parameter, or not at all.  [default: header]"),
    (("--auth-query-param",), "AUTH_QUERY_PARAM", {"metavar": "NAME"},
     "Query parameter for --auth-mode query.  [default: token]"),
    (("-H", "--header", "headers"), "HEADERS", {"multiple": True, "type": HEADER_LINES},
     'Extra request header "name: value"; repeatable (one per line in the environment twin).'),
    (("--secret", "secrets"), "SECRETS", {"multiple": True, "type": SECRET_LINES},
     "A value to scrub from the report, the recording and the output; repeatable, one per line in the environment "
     "twin (credentials are scrubbed anyway)."),
    (("--client-id",), "CLIENT_ID", {"metavar": "ID"},
     "OAuth client to sign in as when the server answers 401 and no token is given (else one is registered)."),
    (("--client-secret",), "CLIENT_SECRET", {"metavar": "SECRET"}, "Its secret (client_credentials); never printed."),
    (("--scope",), "SCOPE", {}, "Scope to request when signing in.  [default: the challenge's, else the metadata's]"),
    (("--no-register",), "NO_REGISTER", {"is_flag": True, "default": None},
     "Never register an OAuth client dynamically, even where the authorization server offers it."),
    (("--interactive/--no-interactive",), "OAUTH_INTERACTIVE", {"default": None, "type": Interactive()},
     "Sign in through a browser even where client_credentials exists / never (fail with the reason instead). "
     "[default: a browser only with a terminal on stderr and CI unset]"),
    (("--no-browser",), "NO_BROWSER", {"is_flag": True, "default": None},
     "Print the authorization URL instead of launching a browser, and wait for the redirect (someone asked to be "
     "shown it, so a terminal is not needed)."),
    (("--redirect-host",), "REDIRECT_HOST", {"metavar": "HOST"},
     "Loopback host of the sign-in's redirect.  [default: 127.0.0.1]"),
    (("--redirect-port",), "REDIRECT_PORT", {"metavar": "PORT"},
     "Pin the redirect's port instead of taking a free one."),
    (("--auth-timeout",), "AUTH_TIMEOUT_MS", {"metavar": "MS"},
     "How long to wait for the browser's redirect.  [default: 180000]"),
    (("--without-token",), "WITHOUT_TOKEN", {"is_flag": True, "default": None},
     "When the sign-in fails, run only the cases that need no token instead of stopping (exit 3) at the failed "
     "step."),
    (("--allow-insecure-http",), "ALLOW_INSECURE_HTTP", {"is_flag": True, "default": None},
     "Let the sign-in send credentials over plain http to a host that is not loopback (refused otherwise: exit 2)."),
    (("--tool-args",), "TOOL_ARGS", {"metavar": "JSON|@FILE"},
     'Arguments per tool, e.g. \'{"search": {"query": "x"}}\'; only named tools are called with arguments.'),
    (("--prompt-args",), "PROMPT_ARGS", {"metavar": "JSON|@FILE"}, "Arguments per prompt, same shape (strings)."),
    (("--generate-args", "generate_args"), "GENERATE_ARGS", {"multiple": True, "metavar": "TOOL"},
     "Call this tool with arguments drawn from its inputSchema (valid, plain values), whatever its annotations; "
     "repeatable, or names separated by commas."),
    (("--generate-args-read-only/--no-generate-args-read-only",), "GENERATE_ARGS_READ_ONLY",
     {"is_flag": True, "default": None},
     "Call every tool the server annotates readOnlyHint: true (never one annotated destructiveHint) with plain "
     "valid arguments drawn from its inputSchema; the report names each call. --no-generate-args-read-only: call "
     "no tool with arguments you did not give or name.  [default: on]"),
    (("--failing-tool",), "FAILING_TOOL", {"metavar": "NAME"},
     "A tool that fails (arguments from --tool-args): called once to see whether its failure comes back as a "
     "result with isError: true."),
    (("--resource-sample",), "RESOURCE_SAMPLE", {"metavar": "N"},
     "How many listed resources to read.  [default: 5]"),
    (("--page-limit",), "PAGE_LIMIT", {"metavar": "N"},
     "Pages to follow per list before stopping.  [default: 10]"),
    (("--rate-limit",), "RATE_LIMIT", {"metavar": "N"}, "Pace the run to at most N requests a minute."),
    (("--retry-budget-ms",), "RETRY_BUDGET_MS", {"metavar": "MS"},
     "Total time to wait out 429 rate limits; past it a case is not verified.  [default: 60000]"),
    (("--timeout",), "TIMEOUT", {"metavar": "SECONDS"},
     "How long to wait for any one answer.  [default: 10]"),
    (("--stream-budget-ms",), "STREAM_BUDGET_MS", {"metavar": "MS"},
     "How long listen-stream cases keep a stream open.  [default: 1500]"),
    (("--only",), "ONLY", {"metavar": "WORD[,WORD]"},
     "Narrow the run. A probe family, in lower case, sends only that family's probes, judged by every check "
     f"(the families: {', '.join(family_names())}; explore needs --explore, burst a rate_limit_probe). A requirement "
     "ID or prefix, in upper case (VER, HTTP-2, TOOL-09), or a check's name judges with those checks only, on "
     "the probes that feed them. A narrowed run never passes what the full run fails."),
    (("--verbose",), "VERBOSE", {"is_flag": True, "default": None}, "Also show the stdio server's stderr."),
    # -- explore (mcp_assay.suite.explore) --
    (("--explore",), "EXPLORE", {"is_flag": True, "default": None},
     "Also call tools with arguments drawn from their inputSchema, inside it (weighted on its edges) and outside it "
     "(one constraint broken at a time); failures are shrunk and judged by the same rules. Only readOnlyHint tools "
     "and those named with --explore-tool. Needs the explore extra (pip install 'mcp-assay[explore]')."),
    (("--explore-budget",), "EXPLORE_BUDGET", {"metavar": "N"},
     "Calls per explored tool to look for failures (each failure found is then shrunk in at most 24 more). "
     "[default: 50]"),
    (("--explore-time",), "EXPLORE_TIME", {"metavar": "SECONDS"},
     "Time bound of the exploration, per revision tested.  [default: 60]"),
    (("--explore-tool", "explore_tool"), "EXPLORE_TOOL", {"multiple": True, "metavar": "TOOL"},
     "Explore this tool too (a tool not annotated readOnlyHint: true, a write tool with its witness from --config); "
     "repeatable, or names separated by commas."),
    (("--seed",), "SEED", {"metavar": "N"},
     "Seed of the exploration (always printed; the same seed gives the same findings).  [default: drawn]"),
    (("--gateway-back",), "GATEWAY_BACK", {"metavar": "PORT=URL"},
     "--url is a gateway whose upstream is PORT: the run listens there, forwards to URL (the real server) and "
     "judges what reached it with what it sent, each finding naming the party at fault (docs/gateways.md)."),
    (("--config", "config_file"), "CONFIG", {"type": readable_file(path_type=Path)},
     "YAML file with any of these settings (long names as keys); flags win."),
    (("--record",), "RECORD", {"type": WritableFile()},
     "Write the suite's traffic to this JSONL recording (redacted) for `mcp-assay validate`."),
]  # fmt: skip


def _dest(decls: tuple[str, ...]) -> str:
    """The setting an option fills: its explicit name, else its long flag's."""
    if decls[-1].isidentifier():
        return decls[-1]
    return max(decls, key=len).split("/")[0].lstrip("-").replace("-", "_")


def run_options[F: Callable[..., Any]](func: F) -> F:
    """Every ``run`` setting, each with its ``MCP_ASSAY_*`` environment twin; a value flag without a type of
    its own takes the config schema's kind for its setting, so flag and key accept the same values."""
    for decls, env, extra, text in reversed(_OPTIONS):
        if _dest(decls) in SETTINGS and not ({"type", "is_flag", "multiple"} & set(extra)):
            extra = {**extra, "type": setting(_dest(decls))}
        func = click.option(*decls, envvar=f"MCP_ASSAY_{env}", show_envvar=True, help=text, **extra)(func)
    return func


@click.command(
    "run",
    cls=AssayCommand,
    short_help="Test one MCP server, over HTTP or stdio, with the active suite.",
    reads=(
        (
            "the server",
            "its answers: over Streamable HTTP at --url (a server --serve starts first), or over stdio from "
            "the --command it starts (with this environment).",
        ),
        (
            "--config FILE",
            "YAML: any option (long names as keys), the behaviour sections (principals, witnesses, handles) and "
            "the stub section with the signing key its key_file names (PEM).",
        ),
        ("@FILE", "--tool-args @FILE and --prompt-args @FILE: JSON."),
        (
            "sign-in",
            "when the server answers 401 and no token is given: the metadata of the authorization server it "
            "names, and the browser's redirect to --redirect-host.",
        ),
        SCHEMAS,
        FETCHED_SCHEMAS,
        BASELINE,
        environment(
            "the variables the config file names as ${NAME} (credentials are only read from there)",
            "CI (set: no browser sign-in unless --interactive)",
        ),
    ),
)
@run_options
@spec_options
@offline_option
@report_choices()
@click.pass_context
def run_command(
    ctx: click.Context,
    /,
    config_file: Path | None,
    spec_dir: str | None,
    spec_paths: tuple[str, ...],
    offline: bool,
    choices: ReportChoices,
    **settings: Any,
) -> None:
    """Run the conformance suite against one MCP server (-u URL or -c COMMAND).

    \b
    mcp-assay run -u http://127.0.0.1:8000/mcp
    mcp-assay run -u https://host/mcp -t "$TOKEN" --tool-args @args.json
    mcp-assay run -c "uvx mcp-server-git --repository ." --verbose
    mcp-assay run -u http://127.0.0.1:8000/mcp --serve "python server.py --port 8000"
    Exit 0: no MUST failed; 1: a MUST failed; 2: usage error; 3: not judged (no MCP server there: one line says why).
    """
    record = settings.get("record")
    targets = choices.targets(others={"--record": Path(record) if record else None})
    known = choices.known()
    options = {
        name: (value if ctx.get_parameter_source(name) is not ParameterSource.DEFAULT else None)
        for name, value in settings.items()
        if name in _SETTINGS
    }
    file_values = read_config_file(config_file) if config_file is not None else None
    config = SuiteConfig.from_options(options, file_values)
    if config.explore:  # the extra --explore needs, before any work; the seed, drawn now and always printed
        from mcp_assay.suite.explore import require as require_explore
        from mcp_assay.suite.explore import seeded

        require_explore()
        config = seeded(config)
        Console(stderr=True).print(
            Text(f"explore: seed {config.seed} (--seed {config.seed} reproduces this run)", style="dim"),
            soft_wrap=True, highlight=False,
        )  # fmt: skip
    redactor = config.redactor()  # the run's one redactor: its log, the lines printed here, its reports
    redact_logs_with(redactor)
    if config.record is not None and ctx.get_parameter_source("record") is ParameterSource.DEFAULT:
        try:  # the config file's record, held to the flag's checks
            WritableFile().convert(config.record, None, ctx)
        except click.BadParameter as exc:
            raise ConfigError(f"--config {config_file}: record: {exc.message}") from None
    errors = Console(stderr=True)
    spec = obtain_spec(spec_dir, spec_paths, offline=offline, console=errors)
    from mcp_assay.suite.runner import check_revisions, report_of

    for flag, revision in (("--spec-version", config.spec_version), ("--default-version", config.default_version)):
        try:
            if revision:
                spec.require(revision)
        except ConfigError as exc:
            raise ConfigError(f"{flag}: {exc}") from None
    check_revisions(config, spec)
    with _back_hop(config, spec) as back_hop:
        finished = _drive(config, spec, redactor, back_hop)
    report = report_of(finished, spec, fail_on=choices.failing, baseline=known, sdk=choices.sdk_choice)
    emit_reports(report, targets, show=choices.show, write_baseline=choices.write_baseline)
    raise SystemExit(report.exit_code())


@contextmanager
def _back_hop(config: SuiteConfig, spec: SpecSet) -> Iterator[Callable[[], list[Exchange]] | None]:
    """The gateway's back hop, listened to for the whole run when ``--gateway-back`` asks for it."""
    if config.gateway_back is None:
        yield None
        return
    if not config.url:
        raise ConfigError("--gateway-back: the target must be a gateway over HTTP (-u URL)")
    from urllib.parse import urlsplit

    from mcp_assay.addon.backhop import BackHopListener
    from mcp_assay.cli.proxy import cannot_listen

    listen, _, upstream = config.gateway_back.partition("=")
    port = int(listen)
    parts = urlsplit(upstream)
    problem = cannot_listen("127.0.0.1", port, flag="--gateway-back")
    if problem is not None:
        raise ConfigError(problem)
    gateway = urlsplit(config.url)
    if gateway.port == port and gateway.hostname in ("127.0.0.1", "localhost"):
        raise ConfigError(f"--gateway-back {config.gateway_back}: port {port} is the gateway's own (--url)")
    with BackHopListener(port, f"{parts.scheme}://{parts.netloc}", spec) as listener:
        Console(stderr=True).print(
            f"[dim]gateway: its back hop listens on http://127.0.0.1:{port}{parts.path or '/'} → {upstream}[/]",
            highlight=False, soft_wrap=True,
        )  # fmt: skip
        yield listener.exchanges


def _drive(
    config: SuiteConfig, spec: SpecSet, redactor: Redactor, back_hop: Callable[[], list[Exchange]] | None
) -> RunFinished:
    """Run the suite with a progress display on stderr; its last event."""
    from mcp_assay.suite.runner import run

    errors = Console(stderr=True)
    finished: RunFinished | None = None
    interactive = sys.stdout.isatty()
    progress = Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=errors, transient=True,
        disable=not interactive,
    )  # fmt: skip
    with progress:
        task = progress.add_task("selecting the revision", total=None)
        exchanges = 0
        for event in run(config, spec, redactor=redactor, back_hop=back_hop):
            if isinstance(event, ExchangeRecorded):
                exchanges += 1
                stage = progress.tasks[task].description.split(" · ")[0]
                progress.update(task, description=f"{stage} · {exchanges} exchanges")
            elif isinstance(event, RevisionSelected):
                label = " and ".join(event.revisions) or "no revision"
                progress.update(task, description=f"testing {label}")
                if interactive and event.revisions:  # nothing tested: the one line at the end says why
                    progress.console.print(f"[dim]revision: {event.note}[/]", highlight=False)
            elif isinstance(event, FamilyStarted):
                family = f"{event.family} ({event.revision})" if event.revision else event.family
                progress.update(task, description=f"{family} · {exchanges} exchanges")
            elif isinstance(event, FamilyFinished) and event.skipped and interactive:
                family = f"{event.family} ({event.revision})" if event.revision else event.family
                progress.console.print(f"[yellow]{family}: {event.skipped}[/]", highlight=False)
            elif isinstance(event, SignInStep):
                _print_sign_in(progress.console, event)
                if event.kind is Line.STEP:
                    progress.update(task, description="signing in")
            elif isinstance(event, ExploreProgress):  # the seed, and each tool's tally: printed whatever the terminal
                progress.console.print(Text(redactor.text(event.text), style="dim"), soft_wrap=True, highlight=False)
            elif isinstance(event, StderrLine):
                text = scrub(event.text, redactor)
                progress.console.print(Text(f"server stderr: {text}", style="dim"), highlight=False)
            elif isinstance(event, RunFinished):
                finished = event
    assert finished is not None
    return finished


_SIGN_IN_STYLE = {Line.FAILED: "yellow", Line.NOTE: "dim", Line.DONE: "green"}


def _print_sign_in(console: Console, event: SignInStep) -> None:
    """Every step of a sign-in is printed, whatever the terminal: it creates state on another server."""
    indent = {Line.START: "", Line.URL: "    "}.get(event.kind, "  ")
    style = _SIGN_IN_STYLE.get(event.kind, "")
    console.print(Text(indent + event.text, style=style), soft_wrap=True, highlight=False)
