"""The two hops of a gateway matched (mcp_assay.wire.hops): each client request with what it caused upstream.

Tool-defined (docs/gateways.md § How the hops are matched).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.hops import Correlation, finish_order, relayed_probes
from mcp_assay.wire.model import Hop, StdioLine
from tests.factories import as_probe
from tests.gateway.builders import T0, back, front, note, request, result

CALL = {"name": "add", "arguments": {"a": 1}}
DONE = {"resultType": "complete", "content": []}


def line(sender: Side, body: dict[str, Any], at: float, ident: str) -> StdioLine:
    raw = json.dumps(body).encode() + b"\n"
    return StdioLine.build(id=ident, connection="stdio:1", sender=sender, time=T0 + at, raw=raw, hop=Hop.BACK)


def matched(*items: Any) -> Correlation:
    correlation = Correlation(keep=None)
    for item in finish_order(items):
        correlation.add(item)
    correlation.settle()
    return correlation


def test_each_front_request_claims_its_own_upstream_twin() -> None:
    first = front(request("tools/call", 7, CALL), start=0.0, end=0.3, answer=result(DONE, 7))
    second = front(request("tools/call", 8, {**CALL, "arguments": {"a": 2}}), start=0.05, end=0.3,
                   answer=result(DONE, 8))  # fmt: skip
    twin_two = back(request("tools/call", 101, {**CALL, "arguments": {"a": 2}}), start=0.06, end=0.2,
                    answer=result(DONE, 101))  # fmt: skip
    twin_one = back(request("tools/call", 100, CALL), start=0.07, end=0.2, answer=result(DONE, 100))
    relays = {relay.front.request.id: relay for relay in matched(first, second, twin_one, twin_two)}
    assert relays[7].back is not None and relays[7].back.request.id == 100 and relays[7].exact
    assert relays[8].back is not None and relays[8].back.request.id == 101


def test_a_request_sent_upstream_after_the_client_was_answered_is_not_its_twin() -> None:
    """The gateway answered one request itself (a probe it refused or served from a cache); the next, like it, went
    upstream a moment after that answer (within the capture's slack): that upstream request is the next one's."""
    own = front(request("tools/list", 56), start=0.0, end=0.20, answer=result({"tools": []}, 56))
    later = front(request("tools/list", 57), start=0.21, end=0.40, answer=result({"tools": []}, 57))
    upstream = back(request("tools/list", 1107), start=0.22, end=0.30, answer=result({"tools": []}, 1107))
    relays = {relay.front.request.id: relay for relay in matched(own, later, upstream)}
    assert relays[56].back is None
    assert relays[57].back is not None and relays[57].back.request.id == 1107


def test_a_stdio_request_upstream_is_claimed_once() -> None:
    """A stdio request is listed when it is sent and again when it is answered: one client request claims it."""
    ask = front(request("tools/call", 7, CALL), start=0.0, end=0.5, answer=result(DONE, 7))
    other = front(request("tools/call", 8, CALL), start=0.45, end=0.9, answer=result(DONE, 8))
    sent = line(Side.CLIENT, request("tools/call", 1, CALL), 0.1, "l1")
    answered = line(Side.SERVER, result(DONE, 1), 0.4, "l2")
    correlation = matched(ask, other, sent, answered)
    claimed = [relay.front.request.id for relay in correlation if relay.back is not None]
    assert claimed == [7]


def test_a_notice_waits_for_its_exact_twin_before_taking_another() -> None:
    notice = front(note("notifications/cancelled", {"requestId": 7, "reason": "user"}), start=1.0, end=1.01,
                   status=202, session="c")  # fmt: skip
    unrelated = back(note("notifications/cancelled", {"requestId": 55, "reason": "the client went away"}),
                     start=0.99, end=1.0, status=202, session="u")  # fmt: skip
    twin = back(note("notifications/cancelled", {"requestId": 100, "reason": "user"}), start=1.5, end=1.51,
                status=202, session="u")  # fmt: skip
    (relay,) = list(matched(notice, unrelated, twin))
    assert relay.back is not None and relay.back.request.params["requestId"] == 100


def test_what_the_gateway_relayed_for_a_probe_is_tagged_with_the_probe() -> None:
    probe = as_probe({"name": "invalid-json", "family": "envelope", "invalid": True})
    ask = replace(front(b"{not json", start=0.0, end=0.2, status=400, answer=result({}, 1)), probe=probe)
    passed_on = back(b"{not json", start=0.01, end=0.1, status=400, answer=result({}, 1))
    (tagged,) = relayed_probes([replace(ask, hop=None)], [passed_on])
    assert tagged.probe is not None and tagged.probe.invalid


def test_memory_stays_bounded_however_long_the_traffic() -> None:
    correlation = Correlation(keep=10.0)
    for number in range(300):
        at = number * 1.0
        correlation.add(front(request("ping", number), start=at, end=at + 0.1, answer=result({}, number)))
        correlation.add(back(request("ping", number + 1000), start=at + 0.01, end=at + 0.05,
                             answer=result({}, number + 1000)))  # fmt: skip
    assert len(correlation.relays) <= 12
