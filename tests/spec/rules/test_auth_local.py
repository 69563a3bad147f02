"""A server run locally listens on loopback only (AUTH-31), judged from what `run --serve` read."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome
from mcp_assay.wire.model import LISTENING, Observation
from tests.factories import judge, log_of, modern_call, tick

CHECK = "local_servers_listen_on_loopback"
TOOLS = {"tools": [], "ttlMs": 0, "cacheScope": "private"}


def listening(**data: Any) -> Observation:
    return Observation(id="o1", time=tick(), kind=LISTENING, data={"command": "server.py", **data})


@pytest.mark.parametrize("addresses", [["127.0.0.1:8000"], ["127.0.0.1:8000", "[::1]:8000"], ["127.0.0.5:81"]])
def test_a_server_on_loopback_only_passes_auth_31(spec: SpecSet, addresses: list[str]) -> None:
    """Spec-mandated (AUTH-31)."""
    verdict = judge(log_of(listening(addresses=addresses), modern_call("tools/list", {}, TOOLS)), spec, CHECK)
    assert verdict.outcome is Outcome.PASSED
    assert addresses[0] in verdict.reason


@pytest.mark.parametrize(
    ("addresses", "said"),
    [(["0.0.0.0:8000"], "every interface"), (["127.0.0.1:8000", "[::]:8000"], "every interface"),
     (["192.168.1.20:8000"], "192.168.1.20:8000")],
)  # fmt: skip
def test_a_server_listening_beyond_loopback_fails_auth_31(spec: SpecSet, addresses: list[str], said: str) -> None:
    """Spec-mandated (AUTH-31): 0.0.0.0, :: or a LAN address lets the network reach a local server."""
    verdict = judge(log_of(listening(addresses=addresses), modern_call("tools/list", {}, TOOLS)), spec, CHECK)
    assert verdict.outcome is Outcome.FAILED
    assert said in verdict.reason


def test_auth_31_is_not_verified_for_a_protected_server_mcp_assay_did_not_start(spec: SpecSet) -> None:
    """Tool-defined: a proxy or a run against a URL cannot see the server's sockets."""
    refused = modern_call("tools/list", {}, TOOLS, status=401, response_headers={"www-authenticate": "Bearer"})
    verdict = judge(log_of(refused), spec, CHECK)
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "--serve" in verdict.reason


def test_auth_31_follows_the_auth_gate_without_sockets_and_ignores_it_with_them(spec: SpecSet) -> None:
    """Tool-defined: an open server the run did not start is not applicable, like every AUTH item; one it
    started is judged on its sockets all the same."""
    open_call = modern_call("tools/list", {}, TOOLS)
    assert judge(log_of(open_call), spec, CHECK).outcome is Outcome.NOT_APPLICABLE
    wide = listening(addresses=["0.0.0.0:8000"])
    assert judge(log_of(wide, modern_call("tools/list", {}, TOOLS)), spec, CHECK).outcome is Outcome.FAILED


def test_auth_31_is_not_verified_where_sockets_cannot_be_read(spec: SpecSet) -> None:
    """Tool-defined: off Linux there is no /proc to read, which is said rather than guessed."""
    observation = listening(why="the listening sockets of a process can only be read on Linux (/proc)")
    verdict = judge(log_of(observation, modern_call("tools/list", {}, TOOLS)), spec, CHECK)
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "Linux" in verdict.reason
