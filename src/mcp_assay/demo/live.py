"""Live findings for the demo: what the proxy prints as it judges, and the suite's traffic judged as it goes.

The suite only judges its log at the end. So the demo passes every exchange the suite records to
the same live judge the proxy uses (:class:`~mcp_assay.addon.live.LiveSession`: the message checks,
on a worker thread) and shows the first failure of each check as soon as it is seen; the proxy's
own live finding lines are relayed as they arrive. These lines are a preview: the report judges
the whole log, and is what counts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from rich.text import Text

from mcp_assay.addon.live import FINDING_MARKS, LiveSession, Printer
from mcp_assay.recording.records import records_of
from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec.checks import Check, Finding
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.vocabulary.verdicts import Severity
from mcp_assay.wire.jsonrpc import Message
from mcp_assay.wire.model import Exchange

__all__ = ["FINDING_MARK", "FirstFindings", "SuiteJudge"]

FINDING_MARK = FINDING_MARKS[Severity.MUST][0]
"""What starts a live MUST finding line (after indentation), in the proxy's output and here."""
_MARKS = tuple(mark for mark, _ in FINDING_MARKS.values())

Show = Callable[[str, str], None]
"""Called with (where the finding was seen, the finding line)."""


class FirstFindings:
    """Passes each check's first live finding on, whoever saw it (thread-safe)."""

    def __init__(self, show: Show) -> None:
        self._show = show
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def offer(self, key: str, origin: str, line: str) -> None:
        with self._lock:
            if key in self._seen:
                return
            self._seen.add(key)
        self._show(origin, line)

    def proxy_line(self, line: str) -> None:
        """A line the proxy printed: relayed when it is a finding (keyed by its text up to the detail)."""
        text = line.rstrip()
        if not text.lstrip().startswith(_MARKS):
            return
        key = text.split("] ", 1)[0]
        self.offer(key, "proxy", text.strip())


class _Forward(Printer):
    """A live printer that hands finding lines to :class:`FirstFindings` instead of a console."""

    def __init__(self, first: FirstFindings) -> None:
        super().__init__("findings")
        self.first = first

    def finding(self, check: Check, message: Message, finding: Finding, redactor: Redactor) -> None:
        mark = FINDING_MARKS.get(check.severity, FINDING_MARKS[Severity.MUST])[0]
        line = Text(f"{mark} ")
        line.append(f"{', '.join(check.requirements)} {check.title} ")
        line.append(f"[{check.side.value} · {check.severity.value}] ")
        line.append(redactor.text(finding.detail or message.describe()))
        self.first.offer(f"{mark} {', '.join(check.requirements)} {check.title}", "suite", line.plain)


class SuiteJudge:
    """The message checks run over the suite's exchanges as the suite records them."""

    def __init__(self, spec: SpecSet, first: FirstFindings, secrets: Iterable[str]) -> None:
        self._session = LiveSession(spec, redactor=Redactor(secrets), printer=_Forward(first))

    def exchange(self, exchange: Exchange) -> None:
        for record in records_of(exchange):
            self._session.feed(record)

    def close(self) -> None:
        self._session.close()
