"""The probe families, in the order a run sends them.

Each module defines ``FAMILY`` (:class:`~mcp_assay.suite.context.ProbeFamily`): its name, its cases
(declared in :mod:`mcp_assay.cases`, which say what its traffic feeds), the eras, transports and
capability it needs, and the coroutine that sends it. :data:`OPENING` and :data:`CLOSING` are the
steps sent around them on each revision's session (the handshake completed, the session ended),
declared the same way. Probes never judge: the rules in :mod:`mcp_assay.spec.rules` do.
"""

from __future__ import annotations

from mcp_assay.suite.behaviour import family as behaviour
from mcp_assay.suite.context import ProbeFamily
from mcp_assay.suite.explore import family as explore
from mcp_assay.suite.probes import (
    auth,
    burst,
    completion,
    discover,
    envelope,
    gateway,
    handshake,
    interop,
    listen,
    listen_writes,
    methods,
    mrtr,
    pagination,
    prompts,
    resources,
    tokens,
    tools,
    versioning,
)

__all__ = ["CLOSING", "FAMILIES", "OPENING", "family_names"]

FAMILIES: tuple[ProbeFamily, ...] = (
    discover.FAMILY,
    handshake.FAMILY,
    versioning.FAMILY,
    tools.FAMILY,
    prompts.FAMILY,
    resources.FAMILY,
    pagination.FAMILY,
    completion.FAMILY,
    mrtr.FAMILY,
    listen.FAMILY,
    listen_writes.FAMILY,
    envelope.FAMILY,
    methods.FAMILY,
    auth.FAMILY,
    tokens.FAMILY,
    behaviour.FAMILY,
    interop.FAMILY,
    discover.LATER,
    burst.FAMILY,
    gateway.FAMILY,
    explore.FAMILY,  # opt-in (--explore), last: it may leave the server in a state no other case expects
)

OPENING: tuple[ProbeFamily, ...] = (handshake.OPENING,)
"""Sent on each revision's session before any family, without a progress line of their own: what completes it."""
CLOSING: tuple[ProbeFamily, ...] = (handshake.CLOSING,)
"""Sent on each revision's session after every family, while its transport still serves: what ends it."""


def family_names() -> tuple[str, ...]:
    """The families, in the order a run sends them (what ``--only`` and the help name)."""
    return tuple(family.name for family in FAMILIES)
