"""Comparing a gateway's two hops grows linearly with the traffic: the matching and every GW rule.

Tool-defined (the brief: every rule linear in traffic, asserted by counted work, never wall time). The
project's recorded sessions are put through a transparent gateway on paper: every HTTP exchange is the front
hop, and a copy of it, sent a millisecond later, the back hop. Judging 1, 2 and 3 copies with the GW rules
counts the lines of mcp-assay (the matching in ``mcp_assay.wire.hops`` included) each rule runs.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import REGISTRY
from mcp_assay.spec.gateway import is_gateway_check
from mcp_assay.wire.hops import Correlation, finish_order
from mcp_assay.wire.model import Exchange, Hop, HttpExchange
from tests.scale.growth import PACKAGE, traffic, work_per_check
from tests.scale.test_growth import LIMIT, marginal


def gateway_traffic(copies: int) -> list[Exchange]:
    items: list[Exchange] = []
    for item in traffic(copies):
        if not isinstance(item, HttpExchange):
            continue
        items.append(replace(item, hop=Hop.FRONT))
        request = item.request
        sent = replace(request, time=request.time + 0.001)
        items.append(
            HttpExchange.build(
                id=f"{item.id}-b", request=sent, response=item.response, ending=item.ending,
                connection=item.connection, hop=Hop.BACK,
            )
        )  # fmt: skip
    return finish_order(items)


def test_the_hops_are_matched_one_to_one() -> None:
    correlation = Correlation(keep=None)
    for item in gateway_traffic(1):
        correlation.add(item)
    correlation.settle()
    relays = list(correlation)
    assert relays and all(relay.back is not None and relay.exact for relay in relays)


@pytest.mark.slow
def test_every_gateway_rule_costs_linear_work_in_the_traffic(spec: SpecSet) -> None:
    checks = [check for check in REGISTRY.values() if is_gateway_check(check)]
    work_per_check(spec, gateway_traffic(1), checks=checks, root=PACKAGE)  # caches warmed, not counted
    small, middle, large = (
        work_per_check(spec, gateway_traffic(copies), checks=checks, root=PACKAGE) for copies in (1, 2, 3)
    )
    grown = {
        name: round(marginal(small.get(name, 0), middle.get(name, 0), large[name]), 2)
        for name in large
        if name != "engine" and middle.get(name, 0) > small.get(name, 0)
    }
    assert len(grown) >= 8, grown
    too_fast = {name: ratio for name, ratio in grown.items() if ratio > LIMIT}
    assert not too_fast, f"GW rules whose work grows faster than the traffic: {too_fast}"
