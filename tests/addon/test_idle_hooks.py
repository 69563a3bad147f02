"""The injector and the server probe offer mitmproxy their per-flow hooks only while asked to act.

mitmproxy calls every hook it finds on every addon for every flow (``getattr(addon, name, None)``,
skipping what is falsy): an idle injector or probe must cost forwarding nothing, and one asked to act
must be called, in its place in the chain.
"""

from __future__ import annotations

from mitmproxy.test import taddons

from mcp_assay.addon.inject.http import FLOW_HOOKS, Injector
from mcp_assay.addon.server_probe import ServerProbe


def _offered(addon: object, names: tuple[str, ...]) -> dict[str, bool]:
    return {name: callable(getattr(addon, name, None)) for name in names}


def test_an_idle_injector_offers_no_per_flow_hook_and_an_asked_one_offers_all() -> None:
    injector = Injector(window=lambda: ["2026-07-28", "2025-11-25"])
    with taddons.context(injector) as context:
        context.configure(injector, mcp_assay_inject="")
        assert _offered(injector, FLOW_HOOKS) == dict.fromkeys(FLOW_HOOKS, False)
        context.configure(injector, mcp_assay_inject="version,hold")
        assert _offered(injector, FLOW_HOOKS) == dict.fromkeys(FLOW_HOOKS, True)
        assert getattr(injector, "request").__func__ is Injector.request  # noqa: B009 - as mitmproxy looks it up
        context.configure(injector, mcp_assay_inject="")
        assert _offered(injector, FLOW_HOOKS) == dict.fromkeys(FLOW_HOOKS, False)


def test_the_server_probe_offers_its_response_hook_only_when_asked_to_probe() -> None:
    probe = ServerProbe(spec=lambda: None, notify=lambda record: None)
    with taddons.context(probe) as context:
        context.configure(probe, mcp_assay_probe_server=False)
        assert _offered(probe, ("response",)) == {"response": False}
        context.configure(probe, mcp_assay_probe_server=True)
        assert _offered(probe, ("response",)) == {"response": True}
    probe.done()
