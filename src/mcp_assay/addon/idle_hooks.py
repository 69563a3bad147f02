"""Per-flow hooks an addon offers mitmproxy only while it has something to do.

For every flow, mitmproxy looks each hook up on every addon and calls each one it finds, inside an
error guard: a few microseconds a call. The injector and the server probe are always loaded, so that
their options can be set, but most sessions ask neither to act; idle, their hooks would only return,
yet at saturation those calls are a measurable share of what the addon adds to forwarding. An idle
addon therefore hides its per-flow hooks (an instance attribute of the hook's name set to ``None``,
which mitmproxy skips) and shows them again once asked to act, keeping its place in the chain, which
decides the order the hooks run in.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["offer_flow_hooks"]


def offer_flow_hooks(addon: object, names: Iterable[str], *, active: bool) -> None:
    """Show ``addon``'s hooks ``names`` to mitmproxy when ``active``, else hide them (see the module)."""
    own = vars(addon)
    for name in names:
        if active:
            own.pop(name, None)
        else:
            own[name] = None
