"""Splitting a byte stream into lines: any chunking gives the same lines, each cut at the limit and counted."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mcp_assay.wire.lines import Line, LineSplitter


@given(st.binary(max_size=300), st.lists(st.integers(min_value=0, max_value=300), max_size=10), st.integers(1, 20))
def test_any_chunking_gives_the_lines_cut_at_the_limit(data: bytes, cuts: list[int], limit: int) -> None:
    """Tool-defined: lines are split on newlines only, keep ``limit`` bytes and count the rest."""
    splitter = LineSplitter(limit)
    lines: list[Line] = []
    points = sorted({0, len(data), *(cut for cut in cuts if cut <= len(data))})
    for start, end in zip(points, points[1:], strict=False):
        lines += splitter.feed(data[start:end])
    last = splitter.close()
    if last is not None:
        lines.append(last)
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    assert lines == [Line(part[:limit], max(len(part) - limit, 0)) for part in parts]


def test_a_cut_line_reads_with_an_ellipsis() -> None:
    """Tool-defined: the text of a cut line says it was cut."""
    splitter = LineSplitter(3)
    (line,) = splitter.feed(b"abcdef\r\n")
    assert (line.text(), line.dropped) == ("abc…", 4)
