"""mcp-assay's log output: every line passes the same redaction as the reports.

Libraries log what they see. At ``--log-level info`` httpx prints every request line with its full
URL, a ``?api_key=`` and a query-mode token included; at ``debug`` httpcore prints headers. The one
handler mcp-assay installs (on the root logger, so every library's records reach it) formats each
record as usual and then scrubs the whole line, message, arguments and traceback alike, with the
:class:`~mcp_assay.redaction.Redactor` of the command: configured secrets and the credentials it
knows by value, JWTs by shape, and the secret-named query parameters of every URL in the line.

A command that learns its secrets after logging starts (``run`` once its configuration is read, the
judging worker once it has its settings) hands its redactor over with :func:`redact_with`.
"""

from __future__ import annotations

import logging
import re
import sys

from mcp_assay.redaction import Redactor

__all__ = ["RedactingFormatter", "configure", "redact_with", "scrub"]

FORMAT = "mcp-assay %(levelname)s %(message)s"
_URL = re.compile(r"""\bhttps?://[^\s"'<>()\[\]]+""")


def scrub(text: str, redactor: Redactor) -> str:
    """``text`` with every URL's secret parameters and every secret the redactor knows replaced."""
    return redactor.text(_URL.sub(lambda match: redactor.url(match.group()), text))


class RedactingFormatter(logging.Formatter):
    """Formats a record, then scrubs the whole line."""

    def __init__(self, redactor: Redactor, fmt: str = FORMAT) -> None:
        super().__init__(fmt)
        self.redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record), self.redactor)


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """mcp-assay's stderr handler (told apart from handlers others installed)."""


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


def redact_with(redactor: Redactor) -> None:
    """From now on, scrub log lines with ``redactor`` (the one the command's reports use)."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, _Handler):
            handler.setFormatter(RedactingFormatter(redactor))
