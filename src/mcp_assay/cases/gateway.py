"""The ``gateway`` cases: what ``run`` adds when it watches a gateway's back hop (``--gateway-back``).

Two more sessions of their own, each opened and listing the tools, so that what reached the upstream
shows whether the gateway gives each client session an upstream session of its own (GW-17; GW-14 when they carry
credentials of different principals). Every other
case of the suite reaches the upstream through the gateway as it is, and the GW rules judge what the
gateway made of it.
"""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = ["CASES", "INITIALIZE", "LIST"]

declare = Declare("gateway")

INITIALIZE = declare(
    "gateway-own-session", "GW-14 GW-17",
    sends="initialize, then notifications/initialized, in a session of its own (a second principal, then a third)",
    expects="the gateway opens an upstream session of this session's own", judging=Judging.ALONG,
)  # fmt: skip
LIST = declare(
    "gateway-own-session-list", "GW-14 GW-17",
    sends="tools/list in that session", expects="it reaches the upstream in an upstream session no other session uses",
    judging=Judging.ALONG,
)  # fmt: skip

CASES = tuple(declare.cases)
