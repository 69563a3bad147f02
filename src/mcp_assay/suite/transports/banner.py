"""A ``run -c`` command that started an HTTP server instead of a stdio one, told from the line it prints.

Servers built on the official SDKs often take the transport from an argument, so ``run -c "python
server.py http 8000"`` is an easy slip: the process listens on a port and never reads its stdin.
Without a word about it the run would wait out each request and blame the exit code. A web
server announces itself on stderr ("Uvicorn running on http://127.0.0.1:8000", "Server listening
on http://localhost:3000/mcp", "Listening on port 3000"), so the stdio transport reads each
stderr line, while the process has not answered anything, for such a line naming a local
address; the run then stops at once with the command that judges that server over HTTP.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

__all__ = ["http_advice", "port_of", "served_url"]

_ANNOUNCED = re.compile(
    r"\b(?:running|listening|serving|started|available|live)\s+(?:on|at)\s+(?:(?:address|url)\s+)?"
    r"(https?://[^\s'\"<>()\[\]]+|https?://\[[0-9a-f:]+\](?::\d{1,5})?[^\s'\"<>()]*)",
    re.IGNORECASE,
)
"""A web server's "running on URL" line (Uvicorn, Hypercorn, Werkzeug, Node's own habits)."""
_PORT_ONLY = re.compile(r"\blistening\s+on\s+(?:port\s+)?:?(\d{2,5})\b(?![.:\d])", re.IGNORECASE)
"""``Listening on port 3000`` (a Node server that names no URL)."""
_LOCAL = {"localhost", "0.0.0.0", "::", "::1"}


def _local(host: str | None) -> bool:
    return host is not None and (host.lower() in _LOCAL or host.startswith("127."))


def served_url(line: str) -> str | None:
    """The local URL a stderr line says a web server listens on, or ``None`` (a remote URL is someone else's)."""
    found = _ANNOUNCED.search(line)
    if found is not None:
        url = found.group(1).rstrip(".,;:")
        try:
            host = urlsplit(url).hostname
        except ValueError:
            return None
        return url if _local(host) else None
    port = _PORT_ONLY.search(line)
    if port is not None and 0 < int(port.group(1)) < 65536:
        return f"http://127.0.0.1:{port.group(1)}"
    return None


def port_of(url: str) -> int | None:
    try:
        parts = urlsplit(url)
        return parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None


def http_advice(url: str, argv: Sequence[str]) -> str:
    """``use -u http://127.0.0.1:8000/mcp --serve "python server.py http 8000"``: the endpoint a client would use
    (on loopback; ``/mcp`` where the line names no path) and the command, started by the run itself."""
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    netloc = parts.netloc
    if host in ("0.0.0.0", "::"):  # noqa: S104 - an address the server said it binds, not one we bind
        netloc = f"127.0.0.1:{parts.port}" if parts.port else "127.0.0.1"
    guessed = parts.path in ("", "/")
    endpoint = urlunsplit((parts.scheme, netloc, "/mcp" if guessed else parts.path, "", ""))
    usually = " (MCP endpoints are usually at /mcp)" if guessed else ""
    return f"use -u {endpoint} --serve {shlex.quote(shlex.join(argv))}{usually}"
