"""Start an upstream server and a gateway in front of it (and a watcher on either hop) for a test.

``gateway_chain`` runs, on free 127.0.0.1 ports, an upstream MCP server (the witness server by
default, or ``sdk_server.py``; over HTTP or, for a bridge, as a stdio command the gateway spawns),
the project's own gateway (``tests.peers.gateway``, faithful unless faults are named) and, when
asked, something on each hop: ``back`` wraps the upstream's URL before the gateway is pointed at it,
``front`` wraps the gateway's URL before clients get it (for instance
``lambda url: tests.peers.assay.assay_proxy(url)``, whose ``.url`` is then used), and for a bridge
``stdio_back`` wraps the command it spawns (``tap_command(...)``: ``mcp-assay tap`` on that hop).
Every start is bounded and everything is stopped when the block ends, in reverse order.

``intermediary_chain`` does the same with a published intermediary (``tests.peers.intermediaries``).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.peers.process import HERE, PYTHON, RunningServer, free_port, http_server

ROOT = HERE.parents[1]
Hop = Callable[[str], AbstractContextManager[Any]]
StdioHop = Callable[[list[str]], list[str]]
"""Wraps the stdio server command a bridge spawns (the back hop of a stdio-to-HTTP gateway), e.g. ``tap_command``."""
UPSTREAMS = {"witness": HERE / "witness_server.py", "sdk": HERE / "sdk_server.py"}


@dataclass
class Chain:
    """A running chain: what clients talk to (``url``), the gateway, and the upstream behind it."""

    url: str
    gateway: RunningServer
    upstream: RunningServer | None
    upstream_url: str | None
    stdio_command: list[str] | None = None
    log: Path | None = None
    hops: dict[str, Any] = field(default_factory=dict)

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The gateway's log lines (``--log``): which front id became which upstream id, sessions, cancels."""
        if self.log is None or not self.log.exists():
            return []
        lines = [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [line for line in lines if kind is None or line.get("event") == kind]


def upstream_command(kind: str = "witness", *flags: str, port: int | None = None) -> list[str]:
    """The upstream server's command: stdio when ``port`` is None, else Streamable HTTP on ``port``."""
    script = str(UPSTREAMS[kind])
    return [PYTHON, script, "stdio"] if port is None else [PYTHON, script, "http", str(port), *flags]


def tap_command(*options: str) -> StdioHop:
    """A ``stdio_back`` that puts ``mcp-assay tap OPTIONS --`` in front of the stdio server (its judge on that hop)."""

    def wrap(command: list[str]) -> list[str]:
        return [PYTHON, "-m", "mcp_assay", "tap", *options, "--", *command]

    return wrap


def url_of(running: Any) -> str:
    return running if isinstance(running, str) else str(running.url)


def gateway_command(port: int, *, upstream_url: str | None = None, stdio: Sequence[str] | None = None,
                    faults: Sequence[str] = (), prefix: str = "", log: Path | None = None,
                    extra: Sequence[str] = ()) -> list[str]:  # fmt: skip
    command = [PYTHON, "-m", "tests.peers.gateway", "--port", str(port)]
    command += ["--upstream", upstream_url] if upstream_url else ["--upstream-command", shlex.join(stdio or [])]
    for name in faults:
        command += ["--fault", name]
    if prefix:
        command += ["--prefix", prefix]
    if log is not None:
        command += ["--log", str(log)]
    return [*command, *extra]


@contextmanager
def upstream_server(kind: str = "witness", *flags: str) -> Iterator[RunningServer]:
    """The upstream server alone over HTTP (tests that start several gateways in front of one share it)."""
    port = free_port()
    with http_server(upstream_command(kind, *flags, port=port), port) as server:
        yield server


@contextmanager
def gateway(
    upstream_url: str | None = None,
    *,
    stdio: Sequence[str] | None = None,
    faults: Sequence[str] = (),
    prefix: str = "",
    log: Path | None = None,
    extra: Sequence[str] = (),
) -> Iterator[RunningServer]:
    """The project's gateway alone, in front of ``upstream_url`` (or spawning ``stdio``)."""
    port = free_port()
    command = gateway_command(
        port, upstream_url=upstream_url, stdio=stdio, faults=faults, prefix=prefix, log=log, extra=extra
    )
    with http_server(command, port, env={"PYTHONPATH": str(ROOT)}) as running:
        yield running


@contextmanager
def gateway_chain(
    *,
    faults: Sequence[str] = (),
    prefix: str = "",
    upstream: str = "witness",
    server_flags: Sequence[str] = (),
    stdio: bool = False,
    log: Path | None = None,
    front: Hop | None = None,
    back: Hop | None = None,
    stdio_back: StdioHop | None = None,
    extra: Sequence[str] = (),
) -> Iterator[Chain]:
    """Upstream server, then the gateway (faults by name), then the hops' watchers, all stopped at the end."""
    with ExitStack() as stack:
        server: RunningServer | None = None
        upstream_url: str | None = None
        command: list[str] | None = None
        hops: dict[str, Any] = {}
        if stdio:
            command = upstream_command(upstream)
            if stdio_back is not None:
                command = stdio_back(command)
        else:
            server = stack.enter_context(upstream_server(upstream, *server_flags))
            upstream_url = server.url
            if back is not None:
                hops["back"] = stack.enter_context(back(upstream_url))
                upstream_url = url_of(hops["back"])
        running = stack.enter_context(
            gateway(upstream_url, stdio=command, faults=faults, prefix=prefix, log=log, extra=extra)
        )
        url = running.url
        if front is not None:
            hops["front"] = stack.enter_context(front(url))
            url = url_of(hops["front"])
        yield Chain(url, running, server, server.url if server else None, command, log, hops)
