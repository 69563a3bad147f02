"""Who is at fault: a gateway's hops judged on their own, each failure naming its party (mcp_assay.spec.gateway).

Tool-defined (docs/gateways.md § Who is at fault): on the front hop a check of the server judges the gateway
unless the upstream's answer already carried the same fault on the back hop; on the back hop a check of the
client judges the gateway and a check of the server the upstream; traffic without hops names no party.
"""

from __future__ import annotations

from dataclasses import replace

from mcp_assay.report.about import Target
from mcp_assay.report.build import build_report
from mcp_assay.spec.checks import REGISTRY
from mcp_assay.spec.engine import Judge
from mcp_assay.spec.gateway import GatewayJudge
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Party, Verdict
from mcp_assay.wire.model import Exchange, HttpExchange
from tests.factories import modern_headers
from tests.gateway.builders import BACK_URL, FRONT_URL, back, error, front, in_order, note, request, result

LISTED = {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private"}
UNTYPED = {"tools": [], "ttlMs": 0, "cacheScope": "private"}
CHECK = "results_name_their_result_type"


def _judged(spec: SpecSet, *items: Exchange, checks: list[str] | None = None) -> list[Verdict]:
    from mcp_assay.spec.rules import AREAS

    assert AREAS
    chosen = [REGISTRY[name] for name in (checks or [CHECK])]
    judge = GatewayJudge(spec, checks=chosen)
    for item in items:
        judge.add(item)
    return judge.verdicts()


def _pair(front_result: dict[str, object], back_result: dict[str, object]) -> list[HttpExchange]:
    return in_order(
        front(request("tools/list", 7), start=0.0, end=0.2, answer=result(front_result, 7)),
        back(request("tools/list", 1), start=0.01, end=0.1, answer=result(back_result, 1)),
    )


def _failed(verdicts: list[Verdict]) -> dict[Party | None, Verdict]:
    return {verdict.party: verdict for verdict in verdicts if verdict.outcome is Outcome.FAILED}


def test_a_fault_the_upstream_answer_carried_is_the_servers_on_both_hops(spec: SpecSet) -> None:
    verdicts = _judged(spec, *_pair(UNTYPED, UNTYPED))
    failures = [verdict for verdict in verdicts if verdict.outcome is Outcome.FAILED]
    assert len(failures) == 2  # the back hop's, and the front hop's relayed copy
    assert {verdict.party for verdict in failures} == {Party.SERVER}
    assert {item.hop for verdict in failures for item in verdict.evidence} == {"front", "back"}


def test_a_fault_that_appears_between_the_hops_is_the_gateways(spec: SpecSet) -> None:
    failures = _failed(_judged(spec, *_pair(UNTYPED, LISTED)))
    assert list(failures) == [Party.GATEWAY]
    assert failures[Party.GATEWAY].whose == "gateway as server"
    assert [item.hop for item in failures[Party.GATEWAY].evidence] == ["front"]


def test_one_check_failing_for_two_parties_gives_a_verdict_each(spec: SpecSet) -> None:
    items = [
        *_pair(UNTYPED, UNTYPED),  # relayed: the server's
        front(request("tools/list", 8), start=1.0, end=1.2, answer=result(UNTYPED, 8)),  # answered by the gateway
    ]
    failures = _failed(_judged(spec, *in_order(*items)))
    assert set(failures) == {Party.SERVER, Party.GATEWAY}
    assert failures[Party.GATEWAY].violations == 1


def test_the_client_side_of_each_hop(spec: SpecSet) -> None:
    """A request without Mcp-Method: the client's fault on the front hop, and on the back hop too when the gateway
    only passed it on; the gateway's when it left the header out itself."""
    body = request("tools/list", 7)
    bare = {**modern_headers(body)}
    bare.pop("mcp-method")

    def hops(front_headers: dict[str, str]) -> list[HttpExchange]:
        return in_order(
            front(body, start=0.0, end=0.2, headers=front_headers, answer=result(LISTED, 7)),
            back(body, start=0.01, end=0.1, headers=bare, answer=result(LISTED, 7)),
        )

    relayed = _failed(_judged(spec, *hops(bare), checks=["client_method_header_matches_the_body"]))
    assert set(relayed) == {Party.CLIENT}
    assert len([item for item in relayed[Party.CLIENT].evidence if item.hop]) >= 1
    own = _failed(_judged(spec, *hops(modern_headers(body)), checks=["client_method_header_matches_the_body"]))
    assert set(own) == {Party.GATEWAY}
    assert own[Party.GATEWAY].whose == "gateway as client"


def test_traffic_without_hops_is_judged_as_it_always_was(spec: SpecSet) -> None:
    items = [replace(item, hop=None) for item in _pair(UNTYPED, LISTED)]
    verdicts = _judged(spec, *items)
    judge = Judge(spec, checks=[REGISTRY[CHECK]])
    for item in items:
        judge.add(item)
    assert verdicts == judge.verdicts()
    assert all(verdict.party is None for verdict in verdicts)


def test_the_verdict_line_counts_the_parties_apart(spec: SpecSet) -> None:
    items = [*_pair(UNTYPED, UNTYPED), front(request("tools/list", 8), start=1.0, end=1.2, answer=result(UNTYPED, 8))]
    report = build_report(_judged(spec, *in_order(*items)), target=Target(), schemas=[])
    assert report.parties_at_fault() == "the gateway 1, the server 1"
    assert report.verdict()[1].endswith("; at fault: the gateway 1, the server 1.")
    statuses = {(status.id, status.party) for status in report.requirements()}
    assert {("RES-01", Party.GATEWAY), ("RES-01", Party.SERVER)} <= statuses


def test_an_error_without_an_id_relayed_as_the_upstream_said_it_is_the_servers(spec: SpecSet) -> None:
    """An upstream refusing a request it could not read answers with ``"id": null``: passed on unchanged (null
    stays null, the client's id is not the gateway's to restore) the fault is the upstream's on both hops."""
    refusal = {"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "Validation error"}}
    listed = {"tools": []}
    items = in_order(
        # a well-formed tools/list in the same moment: the probe's twin upstream is its own "1.0" copy, not this one
        front({"jsonrpc": "2.0", "id": 30, "method": "tools/list"}, start=0.0, end=0.3, answer=result(listed, 30),
              session="front-session"),
        back({"jsonrpc": "2.0", "id": 1072, "method": "tools/list"}, start=0.019, end=0.05, answer=result(listed, 1072),
             session="back-session"),
        front({"jsonrpc": "1.0", "id": 31, "method": "tools/list"}, start=0.02, end=0.2, status=400, answer=refusal,
              session="front-session"),
        back({"jsonrpc": "1.0", "id": 1073, "method": "tools/list"}, start=0.03, end=0.1, status=400, answer=refusal,
             session="back-session"),
    )  # fmt: skip
    failures = [
        verdict
        for verdict in _judged(spec, *items, checks=["invalid_requests_get_an_invalid_request_error"])
        if verdict.outcome is Outcome.FAILED
    ]
    assert {item.hop for verdict in failures for item in verdict.evidence} == {"front", "back"}
    assert {verdict.party for verdict in failures} == {Party.SERVER}


def test_each_hop_of_a_finding_has_its_replay_to_the_party_it_went_to(spec: SpecSet) -> None:
    """The client's request again to the gateway (front hop), the gateway's request again to the upstream (back)."""
    verdicts = _judged(spec, *_pair(UNTYPED, UNTYPED))
    replays = {item.hop: item.reproduction for verdict in verdicts for item in verdict.evidence}
    assert FRONT_URL in replays["front"] and '"id":7' in replays["front"].replace(" ", "")
    assert BACK_URL in replays["back"] and '"id":1' in replays["back"].replace(" ", "")
    plain = Judge(spec, checks=[REGISTRY[CHECK]])
    for item in _pair(UNTYPED, UNTYPED):
        plain.add(replace(item, hop=None))
    plain_replays = [item.reproduction for verdict in plain.verdicts() for item in verdict.evidence]
    assert plain_replays and all(plain_replays)  # without a gateway, every finding still has its replay (issue 27)


def _cancelled_call(*, passed_on: bool) -> list[HttpExchange]:
    """A 2025 client cancels its call 5; the upstream (call 1005) answers anyway, and the gateway relays the answer
    unchanged; ``passed_on``: the gateway sent the upstream the cancellation (with the upstream's id)."""
    done = {"content": [{"type": "text", "text": "written"}]}
    items = [
        front(request("tools/call", 5, {"name": "slow_write"}, version=None), start=0.0, end=1.0,
              answer=result(done, 5), session="front-session"),
        back(request("tools/call", 1005, {"name": "slow_write"}, version=None), start=0.01, end=0.9,
             answer=result(done, 1005), session="back-session"),
        front(note("notifications/cancelled", {"requestId": 5}), start=0.3, end=0.31, status=202,
              session="front-session"),
    ]  # fmt: skip
    if passed_on:
        items.append(
            back(
                note("notifications/cancelled", {"requestId": 1005}),
                start=0.32,
                end=0.33,
                status=202,
                session="back-session",
            )  # fmt: skip
        )
    return in_order(*items)


def test_an_answer_to_a_cancelled_call_is_the_gateways_unless_the_upstream_got_the_cancellation(spec: SpecSet) -> None:
    """CAN-08 on the front rests on what the client did there: an answer relayed unchanged is the upstream's fault
    only when the upstream itself was told of the cancellation (the back hop fails it too), never for its content
    alone (mcp-remote's cancellation refused upstream for want of a session id left the call running)."""
    check = ["cancelled_requests_are_not_answered"]
    kept = _failed(_judged(spec, *_cancelled_call(passed_on=False), checks=check))
    assert list(kept) == [Party.GATEWAY] and [item.hop for item in kept[Party.GATEWAY].evidence] == ["front"]
    told = [v for v in _judged(spec, *_cancelled_call(passed_on=True), checks=check) if v.outcome is Outcome.FAILED]
    assert {verdict.party for verdict in told} == {Party.SERVER}
    assert {item.hop for verdict in told for item in verdict.evidence} == {"front", "back"}


def test_a_probe_the_gateway_relays_upstream_is_not_held_against_it_as_a_client(spec: SpecSet) -> None:
    """A request made malformed on purpose on the front (here an unknown method, tagged as the probe, as a marked
    X-Mcp-Assay-Probe request is) is never the client's fault, and its copy upstream is not the gateway's either:
    what mcp-assay made the gateway send is not the gateway's conduct. Untagged, it is the client's on both hops."""
    from mcp_assay.cases.methods import UNKNOWN_METHOD
    from mcp_assay.wire.model import Probe

    def items(tagged: bool) -> list[HttpExchange]:
        sent = front(request("no/such-method", 42), start=0.0, end=0.2, status=404, answer=error(-32601, 42))
        relayed = back(request("no/such-method", 7), start=0.01, end=0.1, status=404, answer=error(-32601, 7))
        return in_order(replace(sent, probe=Probe.of(UNKNOWN_METHOD)) if tagged else sent, relayed)

    check = ["methods_are_defined_by_the_revision"]
    assert set(_failed(_judged(spec, *items(tagged=False), checks=check))) == {Party.CLIENT}
    assert _failed(_judged(spec, *items(tagged=True), checks=check)) == {}
