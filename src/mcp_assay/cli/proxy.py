"""``mcp-assay proxy`` and ``mcp-assay addon-path``: judge live HTTP traffic through mitmproxy.

``proxy`` runs mitmproxy in this process with the addon loaded, either as a reverse proxy in
front of one server (``--upstream``) or as a regular forward proxy for clients that honour
``HTTP_PROXY`` / ``HTTPS_PROXY``. Findings are printed as exchanges finish; the report is written
when the proxy stops (Ctrl-C or SIGTERM), and the exit code says whether a requirement failed.

With ``--gateway-back PORT=URL`` it watches a gateway from both sides in one process: ``--upstream`` is the
gateway, and the proxy also listens on PORT, the address the gateway is told its upstream is, forwarding to
URL, the real server; one report judges both hops and names who is at fault (docs/gateways.md).

``addon-path`` prints where the addon script is, for running it inside an existing mitmproxy.
"""

from __future__ import annotations

import asyncio
import base64
import errno
import socket
from pathlib import Path
from urllib.parse import unquote, urlsplit

import click
from rich.console import Console

from mcp_assay.addon.listeners import BackHop
from mcp_assay.addon.server_probe import DEFAULT_RATE, PROBE_FAMILIES
from mcp_assay.cli.command import BASELINE, SCHEMAS, AssayCommand, environment
from mcp_assay.cli.options import (
    ReportChoices,
    build_spec,
    inject_options,
    parse_inject,
    report_choices,
    spec_options,
)
from mcp_assay.cli.params import (
    SECONDS_OR_NONE,
    SECRET_LINES,
    URL_TYPE,
    Checked,
    WritableFile,
    checked_port,
    readable_file,
)
from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec.rules.auth.facts import is_loopback_host
from mcp_assay.suite.config import read_probe_config
from mcp_assay.userinput.values import GATEWAY_BACK, HOST, Number

__all__ = ["proxy_command"]


def _upstream_parts(upstream: str) -> tuple[str, str]:
    """``http://host:port/mcp`` (checked by its parameter type) -> (``http://host:port``, ``/mcp``); a
    ``user:password@`` is left out (mitmproxy's reverse mode takes none: :func:`_upstream_credentials`)."""
    parts = urlsplit(upstream)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}", parts.path or "/"


def _upstream_credentials(upstream: str) -> tuple[str, str] | None:
    """The ``user:password@`` of the upstream URL, decoded, or ``None``. The proxy sends them to the server as
    Basic authorization on every request that carries no ``Authorization`` of its own, as curl or a browser
    would: whoever writes credentials into the URL means the server to get them."""
    parts = urlsplit(upstream)
    if "@" not in parts.netloc:
        return None
    return unquote(parts.username or ""), unquote(parts.password or "")


def _credential_secrets(upstream: str, credentials: tuple[str, str]) -> list[str]:
    """Every spelling of the upstream's credentials that may reach a log, a report or a recording."""
    user, password = credentials
    pair = f"{user}:{password}"
    given = urlsplit(upstream).netloc.rpartition("@")[0]
    header = base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return [item for item in (password, pair, given.partition(":")[2], header) if item]


def _forwards_to_itself(upstream: str, listen_host: str, listen_port: int) -> bool:
    """Whether the upstream is the proxy's own listening address (a loop, not a server)."""
    parts = urlsplit(upstream)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = (parts.hostname or "").lower()
    if port != listen_port:
        return False
    listening_everywhere = listen_host in ("0.0.0.0", "::", "[::]")
    return host == listen_host.strip("[]").lower() or (
        is_loopback_host(host) and (listening_everywhere or is_loopback_host(listen_host))
    )


def _back_hop(
    gateway_back: str | None, proxy_mode: str, hop: str | None, listen_host: str, listen_port: int
) -> BackHop | None:
    """The gateway's back hop ``--gateway-back PORT=URL`` asks for, checked against the other flags."""
    if gateway_back is None:
        return None
    if proxy_mode != "reverse":
        raise click.UsageError("--gateway-back needs --mode reverse: --upstream is the gateway")
    if hop:
        raise click.UsageError(
            "--hop and --gateway-back exclude each other: with both listeners each hop is known by its listener"
        )
    listen, _, target = gateway_back.partition("=")
    port = int(listen)
    if port == listen_port:
        raise click.UsageError(f"--gateway-back {gateway_back}: port {port} is --listen-port already; choose another")
    if _forwards_to_itself(target, listen_host, port) or _forwards_to_itself(target, listen_host, listen_port):
        raise click.UsageError(
            f"--gateway-back {gateway_back}: URL is one of the proxy's own listeners; give the real server's address"
        )
    origin, path = _upstream_parts(target)
    return BackHop(port=port, origin=origin, path=path)


def cannot_listen(host: str, port: int, *, flag: str = "--listen-port") -> str | None:
    """Why the proxy could not listen on ``host:port`` (taken, or no such local address), or ``None``.

    Tried here, before anything starts, by binding as mitmproxy will (address reuse on): mitmproxy's own
    message for a taken port suggests its ``--mode`` syntax and names none of this command's options."""
    if port == 0:
        return None
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        reason = (getattr(exc, "strerror", None) or str(exc)).lower()
        return f"--listen-host {host}: not an address this machine can listen on ({reason})"
    for family, kind, protocol, _, address in addresses:
        with socket.socket(family, kind, protocol) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    return f"{flag} {port}: {host or '*'}:{port} is already in use; choose another port" + (
                        " (--listen-port 0 picks a free one)" if flag == "--listen-port" else ""
                    )
                reason = (exc.strerror or str(exc)).lower()
                return f"--listen-host {host} --listen-port {port}: cannot listen there ({reason})"
    return None


@click.command(
    "proxy",
    cls=AssayCommand,
    short_help="Judge live traffic between clients and servers via mitmproxy.",
    reads=(
        (
            "network",
            "the requests clients send to --listen-host:--listen-port, and the answers of --upstream (reverse "
            "mode) or of any server the clients reach (regular mode).",
        ),
        ("--probe-config FILE", "a `mcp-assay run` config file (YAML) for --probe-server."),
        (
            "~/.mitmproxy",
            "mitmproxy's folder: the CA certificate for HTTPS, created there on first use "
            "(--set confdir=... moves it).",
        ),
        SCHEMAS,
        BASELINE,
        environment(),
    ),
)
@click.option(
    "--upstream", envvar="MCP_ASSAY_UPSTREAM", show_envvar=True, metavar="URL", type=URL_TYPE,
    help="The MCP server to sit in front of (reverse mode), e.g. http://127.0.0.1:8000/mcp.",
)  # fmt: skip
@click.option(
    "--mode", "proxy_mode", type=click.Choice(["reverse", "regular"]), default="reverse", show_default=True,
    envvar="MCP_ASSAY_PROXY_MODE", show_envvar=True,
    help="reverse: clients connect to the proxy as if it were the server; regular: a forward proxy for "
    "clients configured with HTTP_PROXY/HTTPS_PROXY (HTTPS needs mitmproxy's CA trusted by the client).",
)  # fmt: skip
@click.option(
    "--listen-host", default="127.0.0.1", show_default=True, type=Checked(HOST, "host"),
    envvar="MCP_ASSAY_LISTEN_HOST", show_envvar=True, help="Address to listen on.",
)  # fmt: skip
@click.option(
    "--listen-port", type=checked_port(0), default=8080, show_default=True,
    envvar="MCP_ASSAY_LISTEN_PORT", show_envvar=True,
    help="Port to listen on (0: any free port; the real one is printed).",
)  # fmt: skip
@click.option(
    "--record", type=WritableFile(path_type=Path), envvar="MCP_ASSAY_RECORD", show_envvar=True,
    help="Write every MCP exchange to this JSONL recording as it happens (redacted).",
)  # fmt: skip
@click.option(
    "--secret", "secrets", multiple=True, envvar="MCP_ASSAY_SECRETS", show_envvar=True, type=SECRET_LINES,
    help="A secret value to scrub from the recording, the report and the output; repeatable "
    "(bearer tokens, cookies and ?token= values are scrubbed anyway).",
)  # fmt: skip
@click.option(
    "--live", type=click.Choice(["all", "findings", "off"]), default="all", show_default=True,
    envvar="MCP_ASSAY_LIVE", show_envvar=True,
    help="Live output: a line per exchange plus findings, only findings, or nothing until the report.",
)  # fmt: skip
@click.option(
    "--finish-timeout", type=SECONDS_OR_NONE, default=0, show_default=True, envvar="MCP_ASSAY_FINISH_TIMEOUT",
    show_envvar=True, metavar="SECONDS",
    help="How long judging may take once the proxy stops; past it the report is written from what was judged "
    "and says so (0: as long as it takes; a second Ctrl-C cuts it short, a third stops without a report).",
)  # fmt: skip
@click.option(
    "--set", "mitm_settings", multiple=True, envvar="MCP_ASSAY_MITM_SET", show_envvar=True, metavar="NAME=VALUE",
    help="Set any mitmproxy option, as mitmdump's --set does; repeatable.",
)  # fmt: skip
@click.option(
    "--gateway-back", envvar="MCP_ASSAY_GATEWAY_BACK", show_envvar=True, metavar="PORT=URL",
    type=Checked(GATEWAY_BACK, "PORT=URL"),
    help="--upstream is a gateway: also listen on PORT, the address the gateway is told its upstream is, and forward "
    "to URL, the real server; both hops are judged in one report, each finding naming the party at fault.",
)  # fmt: skip
@click.option(
    "--hop", type=click.Choice(["front", "back"]), envvar="MCP_ASSAY_HOP", show_envvar=True,
    help="This proxy watches one hop of a gateway whose other hop another capture holds (mcp-assay tap --hop back "
    "in front of the stdio server the gateway spawns); mcp-assay validate judges the recordings together.",
)  # fmt: skip
@click.option(
    "--probe-server", is_flag=True, envvar="MCP_ASSAY_PROBE_SERVER", show_envvar=True,
    help=f"While a real client is connected, also send the suite's probe families ({', '.join(PROBE_FAMILIES)}) to "
    "the server on the client's revision and credentials (paced; marked as probes, never held against the client).",
)  # fmt: skip
@click.option(
    "--probe-config", type=readable_file(), envvar="MCP_ASSAY_PROBE_CONFIG",
    show_envvar=True, metavar="FILE",
    help="A `mcp-assay run` config file for the server probes (tool-args, failing-tool, page-limit, timeout ...).",
)  # fmt: skip
@click.option(
    "--probe-rate", type=Checked(Number(1, 100_000, whole=True, unit="requests a minute")), default=DEFAULT_RATE,
    show_default=True, envvar="MCP_ASSAY_PROBE_RATE", show_envvar=True, metavar="PER_MINUTE",
    help="At most this many server-probe requests per minute.",
)  # fmt: skip
@inject_options
@spec_options
@report_choices()
def proxy_command(
    upstream: str | None,
    proxy_mode: str,
    listen_host: str,
    listen_port: int,
    record: Path | None,
    secrets: tuple[str, ...],
    live: str,
    finish_timeout: int,
    mitm_settings: tuple[str, ...],
    gateway_back: str | None,
    hop: str | None,
    probe_server: bool,
    probe_config: str | None,
    probe_rate: int,
    inject: tuple[str, ...],
    inject_hold_ms: int,
    spec_dir: str | None,
    spec_paths: tuple[str, ...],
    choices: ReportChoices,
) -> None:
    """Judge the MCP traffic between real clients and servers, live, through mitmproxy.

    \b
    mcp-assay proxy --upstream http://127.0.0.1:8000/mcp --listen-port 8080
        then point the client at http://127.0.0.1:8080/mcp
    mcp-assay proxy --mode regular --listen-port 8080
        then run the client with HTTP_PROXY=http://127.0.0.1:8080
    """
    choices.targets(others={"--record": record})  # refuse a bad --report before starting anything
    choices.known()
    families = parse_inject(inject, inject_hold_ms)
    if probe_config is not None and not probe_server:
        raise click.UsageError("--probe-config configures the server probes: add --probe-server, or drop it")
    if probe_config is not None:
        read_probe_config(probe_config)  # a mistake in it is a usage error now, not a traceback at the first request
    if proxy_mode == "reverse":
        if not upstream:
            raise click.UsageError("--upstream is required in reverse mode (or use --mode regular)")
        if _forwards_to_itself(upstream, listen_host, listen_port):
            raise click.UsageError(
                f"--upstream {Redactor().url(upstream)} is the proxy's own address ({listen_host}:{listen_port}): it "
                "would forward every request to itself; give the server's address, or another --listen-port"
            )
        origin, path = _upstream_parts(upstream)
        credentials = _upstream_credentials(upstream)
        shown = Redactor().url(upstream)
        mode = f"reverse:{origin}"
        description = f"{shown} (reverse proxy)"
        if credentials is not None:  # scrubbed everywhere: as given, decoded, and as the header carries them
            secrets = (*secrets, *_credential_secrets(upstream, credentials))
    else:
        if upstream:
            shown = Redactor().url(upstream)
            raise click.UsageError(f"--upstream {shown} is for --mode reverse; a regular proxy has no upstream")
        origin, path, shown, credentials = "", "/", "", None
        mode = "regular"
        description = "forward proxy (regular mode)"
    settings: dict[str, str] = {}
    for item in mitm_settings:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--set")
        settings[name.strip()] = value
    back = _back_hop(gateway_back, proxy_mode, hop, listen_host, listen_port)
    if back is not None:
        description = f"the gateway at {upstream} in front of {back.origin}{back.path} (both hops)"
    problem = cannot_listen(listen_host, listen_port)
    if problem is None and back is not None:
        problem = cannot_listen(listen_host, back.port, flag="--gateway-back")
    if problem is not None:
        click.echo(f"mcp-assay proxy: {problem}", err=True)
        raise SystemExit(2)
    spec = build_spec(spec_dir, spec_paths)
    console = Console()
    from mcp_assay.addon.serve import serve

    code = asyncio.run(
        serve(
            mode=mode, host=listen_host, port=listen_port, path=path, upstream=shown, spec=spec, console=console,
            description=description, credentials=credentials, options={
                "mcp_assay_record": str(record.expanduser()) if record else None,
                **{f"mcp_assay_{name}": value for name, value in choices.worker_settings().items()},
                "mcp_assay_secrets": list(secrets),
                "mcp_assay_live": live,
                "mcp_assay_finish_timeout": finish_timeout,
                "mcp_assay_spec_dir": spec_dir,
                "mcp_assay_spec_path": list(spec_paths),
                "mcp_assay_inject": families,
                "mcp_assay_inject_hold_ms": inject_hold_ms,
                "mcp_assay_probe_server": probe_server,
                "mcp_assay_probe_config": probe_config,
                "mcp_assay_probe_rate": probe_rate,
                "mcp_assay_gateway_back": back.mode if back is not None else "",
                "mcp_assay_hop": hop or "",
            }, settings=settings, reports=list(choices.reports), back=back,
        )
    )  # fmt: skip
    raise SystemExit(code)
