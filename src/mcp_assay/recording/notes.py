"""The notes a capture's own observations carry into its report, gathered in one place.

A proxy session, a tap and ``validate`` of their recordings all meet observations that say
something the report must repeat: a capture limit reached (``note``), what ``--inject`` did and
which cases never met their point (``injection``), what stopped the server probes
(``server-probe``). A peer decides how many of these there are, so at most :data:`MAX_NOTES`
distinct notes are kept, and the rest are counted.
"""

from __future__ import annotations

from collections.abc import Callable

from mcp_assay.wire.model import Observation

__all__ = ["MAX_NOTES", "NOTE_KINDS", "SessionNotes"]

NOTE_KINDS = frozenset({"note", "injection", "server-probe"})
"""Observation kinds whose ``detail`` becomes a note of the report."""
MAX_NOTES = 200
"""Distinct notes one report keeps; past it they are counted."""


class SessionNotes:
    """Distinct notes in the order first seen, bounded; ``redact`` cleans each before it is kept."""

    def __init__(self, redact: Callable[[str], str] = lambda text: text) -> None:
        self._redact = redact
        self._kept: dict[str, None] = {}
        self._unlisted = 0

    def take(self, item: Observation) -> str | None:
        """Keep what ``item`` says, if it is a note; return the note (``None``: it is none, or a repeat)."""
        detail = item.data.get("detail")
        if item.kind not in NOTE_KINDS or not isinstance(detail, str):
            return None
        return self.add(detail)

    def add(self, text: str) -> str | None:
        """Keep a note of mcp-assay's own; return it (``None``: a repeat, or one past the bound)."""
        text = self._redact(text)
        if text in self._kept:
            return None
        if len(self._kept) >= MAX_NOTES:
            self._unlisted += 1
            return None
        self._kept[text] = None
        return text

    def notes(self) -> list[str]:
        more = [f"{self._unlisted} more distinct note(s) were not listed"] if self._unlisted else []
        return [*self._kept, *more]
