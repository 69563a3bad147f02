"""Why the suite could not reach its target, in words a user can act on.

A refused connection, a host name that does not resolve, a connection that is not accepted in
time, a TLS handshake that fails, an answer that is not HTTP; a command that is not there, not
executable or not a program: each is told apart here from the exception the HTTP client or the
operating system raised (httpx wraps httpcore, which wraps the socket's own error), and becomes one
:class:`~mcp_assay.suite.transports.Unreachable` whose message names the address or the command and
whose ``advice`` says what to check. The message never carries the URL's credentials or query.
"""

from __future__ import annotations

import errno
import os
import socket
import ssl
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from mcp_assay.vocabulary.errors import Unreachable

__all__ = ["address_of", "connection_failure", "start_failure"]


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and every exception it was raised from or during, innermost last."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def address_of(url: str) -> str:
    """``host:port`` of ``url`` (the scheme's default port when none is given), IPv6 hosts in brackets."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port or (443 if parts.scheme == "https" else 80)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def connection_failure(exc: httpx.TransportError, url: str, *, method: str, timeout: float) -> Unreachable:
    """What ``exc`` says about reaching ``url``: refused, not resolved, not accepted in time, TLS, not HTTP."""
    address = address_of(url)
    causes = list(_chain(exc))
    if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
        return Unreachable(
            f"{address} did not accept a connection within {timeout:g} s",
            advice="is the address right, and does nothing (a firewall) drop the connection?",
        )
    if any(isinstance(cause, ConnectionRefusedError) for cause in causes):
        return Unreachable(f"nothing listens at {address} (connection refused)", advice="is the server running?")
    resolve = next((cause for cause in causes if isinstance(cause, socket.gaierror)), None)
    if resolve is not None:
        host = urlsplit(url).hostname or "?"
        return Unreachable(
            f"the host name {host} could not be resolved ({resolve.strerror or resolve})",
            advice="is the host in the URL right?",
        )
    tls = next((cause for cause in causes if isinstance(cause, ssl.SSLError)), None)
    if tls is not None:
        reason = getattr(tls, "reason", None) or str(tls)
        advice = "does the server speak https at this address (http:// for plain HTTP)?"
        if isinstance(tls, ssl.SSLCertVerificationError):
            advice = "its certificate is not trusted here; is the host name right?"
        return Unreachable(f"the TLS handshake with {address} failed ({reason})", advice=advice)
    if isinstance(exc, httpx.RemoteProtocolError):
        return Unreachable(
            f"{address} accepted the connection but did not answer in HTTP ({exc})",
            advice="is this an HTTP server (an MCP endpoint over Streamable HTTP)?",
        )
    failed = next((cause for cause in causes if isinstance(cause, OSError) and cause.strerror), None)
    if failed is not None and isinstance(exc, httpx.ConnectError):
        return Unreachable(f"could not connect to {address} ({failed.strerror})")
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return Unreachable(f"{method} to {address} failed ({detail})")


def start_failure(exc: OSError, argv: Sequence[str], *, cwd: str | None = None) -> Unreachable:
    """Why ``argv`` could not be started: not found, not executable, a folder, not a program, or another reason."""
    program = argv[0] if argv else "?"
    if cwd is not None and not Path(cwd).is_dir():
        return Unreachable(f"could not start {program}: the folder {cwd} does not exist")
    if isinstance(exc, FileNotFoundError):
        if os.sep in program:
            return Unreachable(f"no such file: {program}", advice="is the path right?")
        return Unreachable(f"command not found: {program}", advice="is it installed and on PATH?")
    if os.sep in program and Path(program).is_dir():
        return Unreachable(f"{program} is a folder, not a program")
    if isinstance(exc, PermissionError):
        return Unreachable(
            f"{program} is not executable (permission denied)",
            advice="make it executable, or name its interpreter first (python server.py)",
        )
    if exc.errno == errno.ENOEXEC:
        return Unreachable(
            f"{program} is not a program this system can run ({exc.strerror})",
            advice="a script needs a #! line, or name its interpreter first (python server.py)",
        )
    return Unreachable(f"could not start {program} ({exc.strerror or exc})")
