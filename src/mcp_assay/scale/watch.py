"""What a capture shows beside its verdicts, read from each exchange as it passes the judge.

``validate`` reads captured traffic in two ways: unit by unit (:mod:`~mcp_assay.scale.units`, on any core or
worker) and, for a gateway's hop recordings, all together in one process. Both need the same facts from the
same stream — whether any peer answered, revisions newer than the window, the SDK's signs, the transports
seen, what the capture itself noted — so one :class:`CaptureWatch` reads them, in one pass with the judge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_assay.recording.notes import SessionNotes
from mcp_assay.recording.presence import PeerPresence
from mcp_assay.report.sdk_signs import SdkSigns
from mcp_assay.spec.newer import NewerRevisions
from mcp_assay.wire.model import Exchange, Observation

__all__ = ["CaptureWatch"]


@dataclass
class CaptureWatch:
    """Facts of one capture for its report, gathered exchange by exchange (:meth:`see`)."""

    newer: NewerRevisions
    presence: PeerPresence = field(default_factory=PeerPresence)
    signs: SdkSigns = field(default_factory=SdkSigns)
    notes: SessionNotes = field(default_factory=SessionNotes)
    transports: set[str] = field(default_factory=set)

    @classmethod
    def newest(cls, revision: str) -> CaptureWatch:
        """A watch that names revisions newer than ``revision`` (the newest the window knows)."""
        return cls(NewerRevisions(revision))

    def see(self, exchange: Exchange) -> None:
        self.presence.see(exchange)
        self.newer.see(exchange)
        self.signs.see(exchange)
        if exchange.transport:
            self.transports.add(exchange.transport)
        elif isinstance(exchange, Observation):
            self.notes.take(exchange)  # what the capture itself noted: a limit reached, what --inject did
