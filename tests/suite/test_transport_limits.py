"""The suite's memory follows its documented limits, not the server: a flooding server
(``tests/peers/hostile_server.py``) costs at most the limit, the excess is counted, and the report
says what was cut.

Memory is measured with ``tracemalloc`` around the transport (Python allocations of this process,
peak), never wall time.
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from mcp_assay.suite.credentials import Credentials
from mcp_assay.suite.ratelimit import RateLimiter
from mcp_assay.suite.transports.http import ANSWER_LIMIT, HttpTransport
from mcp_assay.suite.transports.stdio import STDERR_LINE_LIMIT, STDERR_TAIL, StdioTransport
from mcp_assay.vocabulary.errors import NoAnswer
from mcp_assay.wire.jsonrpc import id_key
from mcp_assay.wire.model import EndReason, Exchange, HttpExchange, Observation
from tests.peers.process import HERE as PEERS
from tests.peers.process import PYTHON, free_port, http_server

PROBE = {"name": "test", "family": "test", "invalid": False, "intent": "test"}
HOSTILE = str(PEERS / "hostile_server.py")
MiB = 1024 * 1024


def _ids() -> Callable[[str], str]:
    counter = iter(range(1, 1000))
    return lambda prefix: f"{prefix}{next(counter)}"


def _request(ident: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/list"}).encode()


def _peak(scenario: Callable[[], Coroutine[Any, Any, Any]]) -> int:
    """Peak bytes Python allocated while ``scenario`` ran."""
    tracemalloc.start()
    try:
        asyncio.run(scenario())
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _notes(recorded: list[Exchange]) -> list[str]:
    return [str(item.data["detail"]) for item in recorded if isinstance(item, Observation) and item.kind == "note"]


def _http(mode: str, *args: str, timeout: float) -> tuple[int, list[Exchange]]:
    recorded: list[Exchange] = []
    port = free_port()
    with http_server([PYTHON, HOSTILE, "http", str(port), mode, *args], port) as server:

        async def scenario() -> None:
            transport = HttpTransport(
                server.url,
                credentials=Credentials(),
                recorder=recorded.append,
                new_id=_ids(),
                limiter=RateLimiter(),
                timeout=timeout,
            )
            try:
                await transport.send(_request(1), probe=PROBE, expect=id_key(1))
            except NoAnswer as exc:  # a stream cut at the limit before its response
                assert f"{ANSWER_LIMIT} bytes" in str(exc)
            finally:
                await transport.close()

        return _peak(scenario), recorded


def test_a_json_answer_larger_than_the_limit_costs_the_limit_and_is_noted() -> None:
    """Tool-defined: a 3x-limit body is read up to the limit, then the connection is closed; the exchange
    ends as closed by the client (so nothing is judged on a cut body) and a note names it."""
    peak, recorded = _http("body", str(3 * ANSWER_LIMIT), timeout=60)
    assert peak < 1.5 * ANSWER_LIMIT, f"peak {peak / MiB:.0f} MiB"
    (exchange,) = [item for item in recorded if isinstance(item, HttpExchange)]
    assert exchange.ending is not None and exchange.ending.reason is EndReason.CLIENT_DISCONNECT
    assert exchange.response is not None and exchange.response.body == b""
    assert any(f"{ANSWER_LIMIT} bytes" in note and exchange.id in note for note in _notes(recorded))


def test_an_event_stream_flood_costs_the_limit_and_keeps_the_events_read_before_it() -> None:
    """Tool-defined: an endless stream of 64 KiB events is closed once the limit is read, well before the
    timeout; the events read before it are kept and the note says how many bytes were read."""
    peak, recorded = _http("sse", timeout=60)
    assert peak < 6 * ANSWER_LIMIT, f"peak {peak / MiB:.0f} MiB"
    (exchange,) = [item for item in recorded if isinstance(item, HttpExchange)]
    assert exchange.ending is not None and exchange.ending.reason is EndReason.CLIENT_DISCONNECT
    assert exchange.response is not None
    kept = sum(len(event.data or "") for event in exchange.response.events)
    assert 0 < kept <= ANSWER_LIMIT
    assert any("event stream" in note and exchange.id in note for note in _notes(recorded))


@pytest.mark.parametrize("mode", ["lines", "raw"])
def test_a_stdio_server_flooding_stderr_costs_a_bounded_tail(mode: str) -> None:
    """Tool-defined: 32 MB of stderr (in lines, or as one line without a newline) leaves a tail of at
    most STDERR_TAIL lines of at most STDERR_LINE_LIMIT bytes; what was dropped is counted and noted."""
    recorded: list[Exchange] = []
    size = 32 * 1000 * 1000
    transports: list[StdioTransport] = []

    async def scenario() -> None:
        transport = StdioTransport(
            [PYTHON, HOSTILE, "stdio", mode, str(size)], recorder=recorded.append, new_id=_ids(), connection="p1"
        )
        transports.append(transport)
        await transport.start()
        try:
            reply = await transport.send(_request(1), probe=PROBE, expect=id_key(1), timeout=60)
            assert reply.ok
        finally:
            await transport.close()

    peak = _peak(scenario)
    assert peak < 4 * MiB, f"peak {peak / MiB:.1f} MiB"
    (transport,) = transports
    assert len(transport.stderr) <= STDERR_TAIL
    assert all(len(line) <= STDERR_LINE_LIMIT + 1 for line in transport.stderr)
    assert transport.stderr_bytes == size
    assert any(f"{size} bytes of stderr" in note for note in _notes(recorded)), _notes(recorded)


_SLOW_START = """
import json, sys, time
time.sleep(float(sys.argv[1]))
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "slow":
        time.sleep(float(sys.argv[1]))
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}), flush=True)
"""


def test_a_stdio_servers_first_answer_may_take_its_start_up_and_later_answers_only_the_timeout() -> None:
    """Tool-defined: a server importing its SDK for 1.5 s is not silent under a 0.5 s --timeout (its first
    answer is awaited up to STARTUP_GRACE from its start); once it has answered, a 1.5 s answer is NoAnswer."""
    recorded: list[Exchange] = []

    async def scenario() -> None:
        transport = StdioTransport(
            [PYTHON, "-c", _SLOW_START, "1.5"], recorder=recorded.append, new_id=_ids(), connection="p1", timeout=0.5
        )
        await transport.start()
        try:
            assert (await transport.send(_request(1), probe=PROBE, expect=id_key(1))).ok
            assert (await transport.send(_request(2), probe=PROBE, expect=id_key(2))).ok
            slow = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "slow"}).encode()
            with pytest.raises(NoAnswer, match=r"within 0\.5 s$"):
                await transport.send(slow, probe=PROBE, expect=id_key(3))
        finally:
            await transport.close(grace=0.5)

    asyncio.run(scenario())
