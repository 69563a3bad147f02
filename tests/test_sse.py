"""The incremental SSE parser: chunk boundaries are not event boundaries."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_assay.wire.sse import SseEvent, SseParser, parse_sse

STREAM = (
    b": keep-alive\r\n"
    b"id: 1\r\ndata: \r\n\r\n"  # a priming event: an id and empty data
    b'event: message\r\ndata: {"a": 1}\r\n\r\n'
    b"data: line one\ndata: line two\n\n"
    b'retry: 1500\rdata: {"b": 2}\r\r'
    b"data:no-space\n\n"
)


def _collect(chunks: list[bytes]) -> list[SseEvent]:
    events: list[SseEvent] = []
    parser = SseParser(events.append)
    for chunk in chunks:
        parser.feed(chunk, 1.0)
    parser.feed(b"", 2.0)
    return events


def _shape(events: list[SseEvent]) -> list[tuple[object, ...]]:
    return [(e.comment, e.data, e.event, e.id, e.retry, e.incomplete) for e in events]


def test_every_field_kind_and_line_ending_is_understood() -> None:
    """Spec-mandated (WHATWG event stream): CRLF, LF and CR endings, comments, ids, retry, multi-line data."""
    events = parse_sse(STREAM)
    assert _shape(events) == [
        ("keep-alive", None, None, None, None, False),
        (None, "", None, "1", None, False),
        (None, '{"a": 1}', "message", None, None, False),
        (None, "line one\nline two", None, None, None, False),
        (None, '{"b": 2}', None, None, 1500, False),
        (None, "no-space", None, None, None, False),
    ]
    assert events[1].carries_message is False
    assert events[2].carries_message is True


def test_a_crlf_split_across_chunks_is_one_line_ending() -> None:
    events = _collect([b"data: x\r", b"\n\r", b"\ndata: y\r\n\r\n"])
    assert [e.data for e in events] == ["x", "y"]


def test_a_stream_that_stops_mid_event_reports_the_block_as_incomplete() -> None:
    events = _collect([b'data: {"half": '])
    assert len(events) == 1
    assert events[0].incomplete
    assert events[0].data == '{"half": '


def test_multibyte_utf8_split_between_chunks_is_reassembled() -> None:
    text = "data: \u00e9t\u00e9 \u2603\n\n".encode()
    events = _collect([text[:8], text[8:9], text[9:]])
    assert events[0].data == "\u00e9t\u00e9 \u2603"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_chunking_yields_the_same_events(cuts: list[int]) -> None:
    """Tool-defined: the proxy sees arbitrary network chunks; the events must not depend on them."""
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True) if STREAM[a:b]]
    assert _shape(_collect(chunks)) == _shape(parse_sse(STREAM))
