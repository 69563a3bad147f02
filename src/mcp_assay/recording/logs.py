"""mcp-assay's log output: every line passes the same redaction as the reports.

Libraries log what they see. httpx prints every request line with its full URL, a ``?api_key=``
and a query-mode token included, and httpcore its traces (shown at ``--log-level debug``). The one
handler mcp-assay installs (on the root logger, so every library's records reach it) formats each
record as usual and then scrubs the whole line, message, arguments and traceback alike, with the
:class:`~mcp_assay.recording.redaction.Redactor` of the command: configured secrets and the credentials it
knows by value, JWTs by shape, and the secret-named query parameters of every URL in the line.

A command that learns its secrets after logging starts (``run`` once its configuration is read, the
judging worker once it has its settings) hands its redactor over with :func:`redact_with`; what it
prints outside the log (a server's stderr under ``--verbose``, a one-line error) goes through the same
redactor (:func:`redactor`).

The libraries mcp-assay drives (the official SDK, the HTTP clients, the servers and event loops under
them: :data:`QUIET`) log their own troubles, tracebacks included, when mcp-assay pushes them to a limit
or a peer breaks them. What that means for the verdict is mcp-assay's to say, so their records reach
stderr only at ``--log-level debug``.
"""

from __future__ import annotations

import logging
import sys

from mcp_assay.recording.redaction import Redactor

__all__ = ["QUIET", "RedactingFormatter", "configure", "redact_with", "redactor", "scrub"]

FORMAT = "mcp-assay %(levelname)s %(message)s"
QUIET = frozenset(
    {
        "mcp",
        "mcp_types",
        "httpx",
        "httpx2",
        "httpcore",
        "httpcore2",
        "h11",
        "h2",
        "hpack",
        "uvicorn",
        "starlette",
        "sse_starlette",
        "anyio",
        "asyncio",
        "pydantic",
        "jwt",
        "websockets",
    }
)
"""Top-level loggers of the libraries whose records are shown only at ``--log-level debug``."""


def scrub(text: str, redactor: Redactor) -> str:
    """``text`` with every URL's secret parameters and password, and every secret the redactor knows, replaced."""
    return redactor.prose(text)


class RedactingFormatter(logging.Formatter):
    """Formats a record, then scrubs the whole line."""

    def __init__(self, redactor: Redactor, fmt: str = FORMAT) -> None:
        super().__init__(fmt)
        self.redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record), self.redactor)


class _QuietLibraries(logging.Filter):
    """Drops the records of the :data:`QUIET` libraries unless the level is ``debug``."""

    def __init__(self) -> None:
        super().__init__()
        self.level = logging.WARNING

    def filter(self, record: logging.LogRecord) -> bool:
        return self.level <= logging.DEBUG or record.name.partition(".")[0] not in QUIET


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """mcp-assay's stderr handler (told apart from handlers others installed)."""

    def __init__(self) -> None:
        super().__init__()
        self.quiet = _QuietLibraries()
        self.addFilter(self.quiet)


def configure(level: int | str, redactor: Redactor | None = None) -> None:
    """Send every log record at ``level`` or above to stderr, redacted.

    Like :func:`logging.basicConfig`, this leaves a process whose logging someone else set up (a test
    runner, an application embedding mcp-assay) alone; called again, it updates its own handler."""
    root = logging.getLogger()
    handler = next((item for item in root.handlers if isinstance(item, _Handler)), None)
    if handler is None:
        if root.handlers:
            return
        handler = _Handler()
        root.addHandler(handler)
    handler.setStream(sys.stderr)
    handler.setFormatter(RedactingFormatter(redactor or Redactor()))
    root.setLevel(level)
    handler.quiet.level = root.level


def redact_with(redactor: Redactor) -> None:
    """From now on, scrub log lines with ``redactor`` (the one the command's reports use)."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, _Handler):
            handler.setFormatter(RedactingFormatter(redactor))


def redactor() -> Redactor:
    """The redactor mcp-assay's log lines pass (a fresh one when mcp-assay installed no handler)."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, _Handler) and isinstance(handler.formatter, RedactingFormatter):
            return handler.formatter.redactor
    return Redactor()
