"""Attribution of revisions and correlation of responses across transports."""

from __future__ import annotations

from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import Kind
from mcp_assay.wire.traffic import ExchangeLog
from tests.factories import (
    LEGACY,
    MODERN,
    http,
    legacy_call,
    legacy_headers,
    legacy_session,
    log_of,
    modern_call,
    request_body,
    result_body,
    stdio,
)

TOOLS = {"tools": [{"name": "add", "inputSchema": {"type": "object"}}], "ttlMs": 0, "cacheScope": "private"}


def test_modern_requests_are_attributed_per_request_and_legacy_per_session() -> None:
    log = log_of(
        modern_call("tools/list", {}, TOOLS),
        legacy_session("s-1"),
        legacy_call("tools/list", None, {"tools": []}, session="s-1"),
    )
    revisions = [(m.method or m.kind.value, log.revision(m)) for m in log.messages()]
    assert revisions[0] == ("tools/list", MODERN)
    assert ("initialize", LEGACY) in revisions
    assert revisions[-1] == ("result", LEGACY)


def test_a_stdio_connection_locks_to_the_negotiated_revision() -> None:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    log = log_of(
        stdio(Side.CLIENT, init),
        stdio(
            Side.SERVER,
            result_body(
                {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}, 0
            ),
        ),
        stdio(Side.CLIENT, {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        stdio(Side.CLIENT, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    assert {log.revision(m) for m in log.messages()} == {LEGACY}


def test_responses_are_matched_by_id_and_type_within_their_scope() -> None:
    first = stdio(Side.CLIENT, request_body("tools/list", 1))
    wrong_type = stdio(Side.SERVER, result_body({}, "1"))
    right = stdio(Side.SERVER, result_body({}, 1))
    log = log_of(first, wrong_type, right)
    request = first.message
    assert [m.exchange for m in log.responses_to(request)] == [right.id]
    assert log.orphan_responses()[0].exchange == wrong_type.id


def test_http_answers_belong_to_their_own_exchange_even_when_ids_repeat() -> None:
    one = modern_call("tools/list", {}, TOOLS, ident=1)
    two = modern_call("tools/list", {}, TOOLS, ident=1)
    log = log_of(one, two)
    for exchange in (one, two):
        request = exchange.request_message
        assert request is not None
        assert [m.exchange for m in log.responses_to(request)] == [exchange.id]


def test_the_server_said_what_it_can_do() -> None:
    discover = modern_call(
        "server/discover", {},
        {"supportedVersions": [MODERN], "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private"},
    )  # fmt: skip
    later = modern_call("tools/list", {}, TOOLS, ident=2)
    log = log_of(discover, later)
    message = later.request_message
    assert message is not None
    advertised = log.server_capabilities(message)
    assert advertised is not None and advertised.value == {"tools": {}}
    assert set(log.tools(message) or {}) == {"add"}


def test_exchanges_without_messages_still_get_a_revision() -> None:
    get = http(None, status=405, method="GET", headers=legacy_headers("s-9"))
    log = log_of(legacy_session("s-9"), get)
    assert log.exchange_revision(get.id) == LEGACY
    assert all(m.kind in (Kind.REQUEST, Kind.RESULT, Kind.NOTIFICATION) for m in log.messages())


def test_messages_are_ordered_by_time_with_capture_order_breaking_ties_even_past_a_nan_time() -> None:
    from mcp_assay.wire.model import StdioLine

    def line(n: int, time: float) -> StdioLine:
        raw = f'{{"jsonrpc": "2.0", "method": "notifications/m{n}"}}\n'.encode()
        return StdioLine.build(id=f"t{n}", connection="c", sender=Side.CLIENT, time=time, raw=raw)

    times = [(0, 2.0), (1, 1.0), (2, 2.0), (3, 1.0), (4, 0.5)]
    log = ExchangeLog(line(n, time) for n, time in times)
    assert [m.method for m in log.messages()] == [f"notifications/m{n}" for n in (4, 1, 3, 0, 2)]
    with_nan = ExchangeLog(line(n, time) for n, time in [*times, (5, float("nan")), (6, 1.0)])
    order = {id(m): position for position, m in enumerate(with_nan._messages)}
    assert with_nan.messages() == sorted(with_nan._messages, key=lambda m: (m.time, order[id(m)]))
