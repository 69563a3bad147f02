"""What a fault's point may read of a request: its params and the capabilities the client declares on it.

Tool-defined (issue 30): a new fault whose point depends on what is asked (a tool's name, a sampling
capability) reads ``RequestFacts.params`` and ``RequestFacts.capabilities``, on either transport and era.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_assay.addon.inject import RequestFacts

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}


def facts(body: dict[str, Any], transport: str = "http") -> RequestFacts:
    made = RequestFacts.of(json.dumps({"jsonrpc": "2.0", "id": 1, **body}).encode(), transport=transport)
    assert made is not None
    return made


def test_a_modern_request_carries_its_params_and_declared_capabilities() -> None:
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}
    found = facts({"method": "tools/call", "params": {"name": "add", "arguments": {"a": 1}, "_meta": meta}})
    assert found.params["name"] == "add" and found.params["arguments"] == {"a": 1}
    assert found.capabilities == {"sampling": {}}


def test_a_2025_initialize_carries_its_capabilities_and_other_requests_none() -> None:
    offer = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {}},
        "clientInfo": {"name": "c", "version": "1"},
    }
    assert facts({"method": "initialize", "params": offer}, "stdio").capabilities == {"roots": {}}
    later = facts({"method": "tools/call", "params": {"name": "x", "capabilities": {"not": "these"}}}, "stdio")
    assert later.capabilities is None and later.params["name"] == "x"


def test_params_that_are_not_an_object_read_as_none_given() -> None:
    found = facts({"method": "ping", "params": [1, 2]})
    assert found.params == {} and found.capabilities is None
    assert facts({"method": "ping"}) == facts({"method": "ping", "params": {"x": 1}}), "params do not change identity"
