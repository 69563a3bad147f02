"""Cases sent outside the suite's families: the proxy's own server probes, and the demo's client.

``mcp-assay proxy --probe-server`` opens a session of its own on the client's revision before it
runs the server-probe families (:mod:`mcp_assay.addon.server_probe`); ``mcp-assay demo`` drives an
ordinary client session through the proxy.
"""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = ["CASES", "DEMO_SESSION", "SERVER_PROBE_DISCOVER", "SERVER_PROBE_INITIALIZE"]

probe_server = Declare("probe-server")

SERVER_PROBE_DISCOVER = probe_server(
    "discover", "VER-06 VER-07 VER-08",
    sends="server/discover on the client's revision and credentials, before the server-probe families",
    expects="a DiscoverResult, whose capabilities decide which families run",
)  # fmt: skip
SERVER_PROBE_INITIALIZE = probe_server(
    "initialize", "HS-04 HS-05",
    sends="initialize of a 2025 session of the server probes' own", expects="an initialize result",
)  # fmt: skip

demo = Declare("demo")

DEMO_SESSION = demo(
    "demo-session",
    sends="the demo client's ordinary session (initialize or discover, then its calls)",
    expects="nothing of its own: the demo's proxy judges the traffic", judging=Judging.SETUP,
)  # fmt: skip

CASES = (*probe_server.cases, *demo.cases)
