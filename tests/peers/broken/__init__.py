"""Deliberately broken MCP peers: each scenario breaks one rule family in one known way.

``http_server.py`` serves one scenario per path (``/<scenario>/mcp``): a correct 2026-07-28 /
2025-11-25 server except for the one fault its scenario names; ``http_client.py`` drives every
scenario (a correct conversation against the server faults, one deliberately wrong request for
each client fault); ``stdio_server.py`` is a stdio server that pollutes its stdout. ``FAULTS``
maps each scenario to the requirement IDs that must catch it.
"""

FAULTS: dict[str, tuple[str, ...]] = {
    # server faults (http_server.py)
    "results": ("RES-01",),
    "versions": ("VER-07",),
    "handshake": ("HS-04",),
    "http": ("HTTP-07",),
    "cancellation": ("CAN-06",),
    "subscriptions": ("SUB-03",),
    "logging": ("LOG-01",),
    "progress": ("PROG-03",),
    "tools": ("TOOL-05",),
    "resources": ("RSRC-05",),
    "prompts": ("PRM-06",),
    "pagination": ("PAGE-01",),
    "completion": ("COMP-04",),
    "mrtr": ("MRTR-01",),
    "jsonrpc": ("RPC-15",),
    # client faults (http_client.py), answered by a correct server
    "client-envelope": ("META-01",),
    "client-http": ("HTTP-10",),
    "client-jsonrpc": ("RPC-14",),
    "client-subscriptions": ("SUB-01",),
    "client-pagination": ("PAGE-01",),
    "client-prompts": ("PRM-05",),
}
"""Scenario -> requirement IDs whose checks must fail on that scenario's traffic (and on no other)."""

STDIO_FAULTS: tuple[str, ...] = ("STDIO-01", "STDIO-02", "STDIO-04")
"""stdio_server.py prints a banner and a multi-line answer; the scripted client sends a batch line."""

CONTROL = "ok"
"""The scenario with no fault at all: none of the IDs above may fail on it."""
