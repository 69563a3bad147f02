"""The names of the faults the proxy and the tap inject toward a client (``--inject``).

The cases mcp-assay *sends* are declared, with what they feed and expect, in :mod:`mcp_assay.cases`;
what remains here are the names of the injected faults, which the injection registry
(:mod:`mcp_assay.addon.inject`) declares its cases with and the reaction rules compare with.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ProbeName"]


class ProbeName(StrEnum):
    """The injected faults' names."""

    INJECT_VERSION_REFUSAL = "inject-version-refusal"
    INJECT_SESSION_EXPIRY = "inject-session-expiry"
    INJECT_HELD_ANSWER = "inject-held-answer"
    INJECT_HELD_INITIALIZE = "inject-held-initialize"
    INJECT_HEADER_CASE = "inject-header-case"
    INJECT_HEADER_REFUSAL = "inject-header-refusal"
    INJECT_STREAM_CUT = "inject-stream-cut"
    INJECT_STREAM_RESUME = "inject-stream-resume"
