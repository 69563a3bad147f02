"""Stock clients (VER-07, HS-04, HS-05, TOOL-05): what the official SDK's own client made of the server.

The active suite lets the official Python SDK's client connect in the revision under test and list
the tools (:mod:`mcp_assay.suite.probes.interop`), and records each outcome as an ``interop``
observation. That is evidence independent of mcp-assay's own reading of the schema: a validation
error the SDK raises about the discover or ``initialize`` answer, or about ``tools/list``, means the
answer breaks the definition a real client holds it to; an error answer where a result belongs is
the server's too. A connection the SDK could not make (refused, timed out) establishes nothing, nor
does a case the SDK could not finish within the run's limits or past a limit of its own JSON parser
(the probe records those as ``error``, with the reason).
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.cases import Case, sdk
from mcp_assay.spec.checks import Finding, failed, log_check, observed, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.vocabulary.protocol import Era
from mcp_assay.vocabulary.verdicts import Level, Outcome
from mcp_assay.wire.model import Observation

__all__ = [
    "a_stock_sdk_client_completes_the_handshake",
    "a_stock_sdk_client_discovers_the_server",
    "a_stock_sdk_client_lists_the_tools",
]

OBSERVATION = "interop"


def _cases(ctx: Context, case: Case, era: Era | None = None) -> list[Observation]:
    """The ``interop`` observations the SDK case ``case`` recorded (in ``era``, when given)."""
    return [
        item
        for item in ctx.log.observations(OBSERVATION)
        if item.data.get("case") == case.name and (era is None or item.data.get("era") == era)
    ]


def _judge(item: Observation, what: str) -> Finding:
    outcome = item.data.get("outcome")
    detail = str(item.data.get("detail") or "")
    if outcome == "invalid":
        return failed(item, f"{what}: {detail}")
    if outcome == "ok":
        return passed(item, f"{what}: done")
    return unverified(f"{what}: {detail or 'no outcome recorded'}", item)


@log_check(
    requirements="VER-07",
    level=Level.MUST,
    subject="stock SDK client connections",
    features={"discover"},
    follows={observed(OBSERVATION)},
    families={sdk.declare.family},
)
def a_stock_sdk_client_discovers_the_server(ctx: Context) -> Iterator[Finding]:
    """The official SDK's client, in its discover-first mode, accepts the server's DiscoverResult and stays modern.

    Triggered by the active suite's ``interop`` case ``connect`` in a 2026-07-28 run; the SDK
    validates the DiscoverResult with its own models."""
    for item in _cases(ctx, sdk.CONNECT, Era.MODERN):
        finding = _judge(item, "the official SDK client connecting in mode auto (server/discover first)")
        negotiated = item.data.get("negotiated")
        if finding.outcome is not Outcome.PASSED:
            yield finding
            continue
        revision = ctx.spec.get(negotiated) if isinstance(negotiated, str) else None
        if revision is None or not revision.has("per_request_version"):
            yield unverified(
                f"the official SDK client fell back to the initialize handshake ({negotiated}) although this run's "
                "server/discover was answered, so no DiscoverResult was judged by it",
                item,
            )
        else:
            yield passed(item, f"the official SDK client accepted the DiscoverResult and settled on {negotiated}")


@log_check(
    requirements=("HS-04", "HS-05"),
    level=Level.MUST,
    subject="stock SDK client handshakes",
    features={"handshake"},
    follows={observed(OBSERVATION)},
    families={sdk.declare.family},
)
def a_stock_sdk_client_completes_the_handshake(ctx: Context) -> Iterator[Finding]:
    """The official SDK's client completes the initialize handshake and settles on a revision in the window.

    Triggered by the active suite's ``interop`` case ``connect`` in a 2025-11-25 run: the SDK
    validates the InitializeResult with its own models and asks for its newest handshake revision,
    which a server that serves the revision under test echoes (HS-05)."""
    window = {revision.name for revision in ctx.spec.window}
    for item in _cases(ctx, sdk.CONNECT, Era.HANDSHAKE):
        finding = _judge(item, "the official SDK client's initialize handshake")
        negotiated = item.data.get("negotiated")
        if finding.outcome is not Outcome.PASSED:
            yield finding
        elif negotiated not in window:
            yield failed(
                item,
                f"the server settled the official SDK client on {negotiated}, outside the window "
                f"({', '.join(sorted(window))}), though it serves the revision under test",
            )
        else:
            yield passed(item, f"the official SDK client completed the handshake on {negotiated}")


@log_check(
    requirements="TOOL-05",
    level=Level.MUST,
    subject="stock SDK client tool listings",
    capability="tools",
    follows={observed(OBSERVATION)},
    families={sdk.declare.family},
)
def a_stock_sdk_client_lists_the_tools(ctx: Context) -> Iterator[Finding]:
    """The official SDK's client lists the tools without its own validation refusing the answer.

    Triggered by the active suite's ``interop`` case ``list-tools``: ``list_tools()`` validates the
    ListToolsResult with the SDK's models, so a clean round trip shows that no field of another
    revision leaks to a client of this one."""
    for item in _cases(ctx, sdk.LIST_TOOLS):
        listed = item.data.get("listed")
        finding = _judge(item, "the official SDK client's tools/list")
        yield (
            passed(item, f"the official SDK client listed {listed} tool(s)")
            if finding.outcome is (Outcome.PASSED)
            else finding
        )
