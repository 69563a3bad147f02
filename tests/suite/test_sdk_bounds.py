"""The SDK's HTTP client under the suite's limits (suite/probes/sdk_bounds.py), against a small real server on
loopback: an answer past the limit, an encoding that was not asked for, and a connection that fails are stopped
and noted for POSTs; what the SDK's parser says about its own limits is recognised."""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from mcp_assay.suite.probes.sdk_bounds import AnswerCut, Stops, bounded_client, parser_limit
from tests.peers.process import free_port


async def _serving(head: bytes, body: bytes, seen: list[bytes]) -> asyncio.Server:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(head + f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode() + body)
        await writer.drain()
        writer.close()

    return await asyncio.start_server(serve, "127.0.0.1", 0)


def _exchange(method: str, head: bytes, body: bytes, limit: int) -> tuple[BaseException | bytes, Stops, list[bytes]]:
    async def scenario() -> tuple[BaseException | bytes, Stops, list[bytes]]:
        seen: list[bytes] = []
        server = await _serving(head, body, seen)
        port = server.sockets[0].getsockname()[1]
        stops = Stops()
        try:
            async with bounded_client(stops, timeout=5.0, limit=limit) as client:
                try:
                    response = await client.request(method, f"http://127.0.0.1:{port}/mcp?key=k1", content=b"{}")
                    return response.content, stops, seen
                except AnswerCut as exc:
                    return exc, stops, seen
        finally:
            server.close()

    return asyncio.run(scenario())


def test_an_answer_within_the_limit_is_read_whole_and_identity_is_asked_for() -> None:
    """Tool-defined (issue 18): the limit costs a good answer nothing."""
    body, stops, seen = _exchange("POST", b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n", b"x" * 900, 1000)
    assert body == b"x" * 900 and not stops.items
    assert b"accept-encoding: identity" in seen[0].lower()


def test_an_answer_past_the_limit_stops_the_read_and_is_noted_for_a_post_only() -> None:
    """Tool-defined (issue 18): reading stops at the limit; a POST's stop names the request, without its query."""
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
    cut, stops, _ = _exchange("POST", head, b"x" * 5000, 1000)
    assert isinstance(cut, AnswerCut) and len(stops.items) == 1
    assert stops.since(0) is not None and "the answer passed the 1000-byte limit" in stops.items[0]
    assert stops.items[0].startswith("POST http://127.0.0.1:") and "k1" not in stops.items[0]
    cut, stops, _ = _exchange("GET", head, b"x" * 5000, 1000)
    assert isinstance(cut, AnswerCut) and not stops.items and stops.since(0) is None


def test_an_encoding_that_was_not_accepted_is_not_read() -> None:
    """Tool-defined (issue 18): a compressed answer's decoded size is unbounded, so it is refused, with the reason."""
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
    cut, stops, _ = _exchange("POST", head, b"\x1f\x8b" + b"\x00" * 20, 1000)
    assert isinstance(cut, AnswerCut)
    assert stops.items and "content-encoding gzip, though only identity was accepted" in stops.items[0]


def test_a_connection_that_fails_is_noted_and_raised_as_it_was() -> None:
    """Tool-defined: a transport failure is the SDK's to see, and the case's reason."""

    async def scenario() -> Stops:
        stops = Stops()
        async with bounded_client(stops, timeout=2.0) as client:
            with pytest.raises(httpx2.ConnectError):
                await client.post(f"http://127.0.0.1:{free_port()}/mcp", content=b"{}")
        return stops

    stops = asyncio.run(scenario())
    assert stops.items and "ConnectError" in stops.items[0]


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("Invalid JSON: recursion limit exceeded at line 1 column 643", "recursion limit exceeded"),
        ("Invalid JSON: number out of range at line 1 column 4324", "number out of range"),
        ("Invalid JSON: EOF while parsing an object", None),
    ],
)
def test_the_sdks_parser_limits_are_told_from_a_broken_answer(text: str, limit: str | None) -> None:
    """Tool-defined (issue 18): JSON has no nesting or digit limit, so only those words are the parser's own."""
    assert parser_limit(text) == limit
