"""Why a check reads everything of its kind: the reasons the rule areas give with ``Every``, written once.

Every message check declares the ``methods`` it judges and every log check what it ``follows``
(:mod:`mcp_assay.spec.checks`); a check that needs a message of any method, or every window, says why
with one of these. A check whose reason is not here gives its own.
"""

from __future__ import annotations

from mcp_assay.spec.checks import Every

__all__ = [
    "ANY_AUTHORIZATION",
    "ANY_BEHAVIOUR",
    "ANY_CANCELLATION",
    "ANY_ENVELOPE",
    "ANY_EXCHANGE_HTTP",
    "ANY_GATEWAY_RELAY",
    "ANY_INPUT_REQUIRED",
    "ANY_PAIRING",
    "ANY_RESULT",
    "ANY_SCHEMA",
    "ANY_SESSION",
    "ANY_VERSION",
]

# -- message checks --------------------------------------------------------------------------------
ANY_ENVELOPE = Every(
    "it judges the JSON-RPC or MCP envelope every message of its sender and kind carries, whatever its method"
)
ANY_SCHEMA = Every("it validates each message against its own method's definition, so every method is its business")
ANY_RESULT = Every("it judges a member (resultType, _meta, cache hints, base64 data) a result of any method may carry")
ANY_INPUT_REQUIRED = Every(
    "an input_required result, a retry or an elicitation may answer or ride on any method (a wrong one is a failure)"
)

# -- log checks ------------------------------------------------------------------------------------
ANY_AUTHORIZATION = Every(
    "authorization lives in the HTTP of every exchange (credentials, challenges, metadata documents, OAuth requests), "
    "not in a JSON-RPC method"
)
ANY_BEHAVIOUR = Every("it judges what the suite's probes and witness reads show, over every exchange of the run")
ANY_EXCHANGE_HTTP = Every(
    "it audits the HTTP of every exchange (headers, status, media types, streams), bodiless GETs and DELETEs included, "
    "whatever method a body carries"
)
ANY_PAIRING = Every("it pairs requests, notifications and answers by id, whatever their method")
ANY_SESSION = Every(
    "it follows 2025 sessions through every exchange of their connection or session id, whatever the method"
)
ANY_VERSION = Every("it follows the version each request names and each refusal gives, whatever the method")
ANY_CANCELLATION = Every("it follows requests of any method to their cancellation, closed stream or timeout and after")
ANY_GATEWAY_RELAY = Every("it matches traffic of any method on one hop of a gateway to its relay on the other")
