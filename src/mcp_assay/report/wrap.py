"""Lines of prose cut where a reader expects a break: between phrases, never in the middle of one.

A terminal wraps a long line wherever the width runs out ("— ⏎ every revision"), and a rich
console wraps at the last space that fits: either way a phrase ("every revision in the window")
is split from its head. The short report's labelled rows (the header, what was not tried) are cut
here instead: at a phrase boundary (after a comma or a semicolon, before a dash) when the text no
longer fits, at a space only inside a phrase longer than the line, and each continuation indented
under the text it continues. A word longer than the line (a URL, a command) is never cut.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.cells import cell_len

__all__ = ["phrase_lines"]

_MAJOR = re.compile(r"(?<=[;:]) (?=\S)|(?= [—·] )")
"""Where a sentence-level phrase ends: after a semicolon or a colon, before a dash or a middle dot."""
_MINOR = re.compile(r"(?<=,) (?=\S)|(?= \()")
"""Where a smaller phrase ends: after a comma, before an opening parenthesis."""


_QUOTED = re.compile(r"'[^']*'|`[^`]*`|\{(?:[^{}]|\{[^{}]*\})*\}")
"""A shell-quoted argument, a code span or a JSON object (two levels deep): one unit, whatever its punctuation."""


def _split(text: str, boundary: re.Pattern[str]) -> list[str]:
    """``text`` cut at ``boundary``, each piece keeping the space (or the dash) that opens it."""
    quoted = [match.span() for match in _QUOTED.finditer(text)]
    pieces: list[str] = []
    start = 0
    for match in boundary.finditer(text):
        if any(low < match.start() < high for low, high in quoted):
            continue  # never inside a quoted argument (`--tool-args '{"a": {…}}'`)
        if match.start() > start:
            pieces.append(text[start : match.start()])
            start = match.start()
    pieces.append(text[start:])
    return [piece for piece in pieces if piece]


def _words(phrase: str) -> list[str]:
    """``phrase``'s words, each with the spaces before it; a quoted argument or a JSON object is one word."""
    quoted = [match.span() for match in _QUOTED.finditer(phrase)]
    words: list[str] = []
    start = 0
    for match in re.finditer(r"(?<=\S)\s+(?=\S)", phrase):
        if any(low < match.start() < high for low, high in quoted):
            continue
        words.append(phrase[start : match.start()])
        start = match.start()
    words.append(phrase[start:])
    return [word for word in words if word]


def phrase_lines(text: str, width: int, *, first: int = 0, indent: int = 0) -> list[str]:
    """``text`` as lines of at most ``width`` cells: the first after ``first`` cells (a label), the others after
    ``indent``; the returned lines hold the text only (the caller adds the label and the indent).

    A sentence-level phrase goes whole onto the line, or whole onto the next one where it fits there; one longer
    than a line is placed clause by clause (its commas) the same way, and a clause longer than a line is cut at
    its spaces (a word longer than a line stays whole)."""
    lines: list[str] = []
    current = ""

    def room() -> int:
        return max(20, width - (first if not lines else indent))

    def place(piece: str, finer: Sequence[re.Pattern[str]]) -> None:
        nonlocal current
        if cell_len(current + piece) <= room():
            current += piece
        elif cell_len(current) > room() // 4 and cell_len(piece.lstrip()) <= max(20, width - indent):
            lines.append(current.rstrip())  # whole on the next line (a line is not left a few words long)
            current = piece.lstrip()
        elif finer:
            for part in _split(piece, finer[0]):
                place(part, finer[1:])
        else:
            for word in _words(piece):  # a clause longer than a line: cut at spaces
                if current.strip() and cell_len(current + word) > room():
                    lines.append(current.rstrip())
                    current = word.lstrip()
                else:
                    current += word if current.strip() else word.lstrip()

    for phrase in _split(text, _MAJOR):
        place(phrase, [_MINOR])
    if current.strip():
        lines.append(current.rstrip())
    return lines or [""]
