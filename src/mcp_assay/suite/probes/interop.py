"""Stock clients: does the official Python SDK's own client get along with the server?

Every other family speaks through mcp-assay's own clients, which are built from the same reading of
the specification as the rules that judge the answers. These cases are independent evidence: the
official SDK (``mcp``, when it can be imported) connects with its own client, in the revision under
test, validates what it gets with its own models, and lists the tools (``tools/list`` through its
own schema validation). A third client is configured with nothing at all (``mode="auto"``: discover,
else the ``initialize`` handshake; no headers), the way a user points a stock client at a server;
which revision it settles on, and whether it works at all, goes into the report as a note.

The SDK's traffic is its own and is not part of the judged log; what it concluded is recorded as an
``interop`` observation (case, era, outcome, the version it settled on, the SDK's error), which the
rules in :mod:`mcp_assay.spec.rules.interop` judge: a validation error the SDK raises about an answer
is the server's failure, a connection that could not be made is *not verified*. Over stdio, and
without the SDK, the cases are not verified and say why.

Third-party code is never the judge of the server: the SDK runs under the suite's own limits
(:mod:`~mcp_assay.suite.probes.sdk_bounds`: the answer limit, the run's timeout), and a case it could
not finish because of one of them, a transport failure, or a limit of its own JSON parser is *not
verified* with that reason.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import Awaitable, Callable
from importlib.machinery import PathFinder
from typing import TYPE_CHECKING, Any

from mcp_assay.cases import Case
from mcp_assay.cases import sdk as cases
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.credentials import Credentials
from mcp_assay.suite.transports.http import HttpTransport
from mcp_assay.vocabulary.protocol import Era, ErrorCode

if TYPE_CHECKING:  # httpx2 comes with the SDK, which may not be installed
    from mcp_assay.suite.probes.sdk_bounds import Stops

__all__ = ["FAMILY", "REQUIREMENTS", "sdk_available"]

REQUIREMENTS = frozenset().union(*(case.feeds for case in cases.CASES))
OBSERVATION = "interop"
SETTLE_TIMEOUT = 3.0
"""Seconds, times --timeout, one SDK case may take in all."""


def sdk_available() -> bool:
    """Whether the official Python SDK's Streamable HTTP client is installed: found, not imported.

    ``importlib.util.find_spec("mcp.client.streamable_http")`` imports ``mcp`` and ``mcp.client`` to look
    inside them, about 0.7 s of CPU (the SDK's models of both revisions, its web server); every run paid
    it here, a run over stdio (which skips these cases) too. The cases import the SDK when they run."""
    return _findable("mcp.client.streamable_http")


def _findable(name: str) -> bool:
    """Whether module ``name`` can be found on the import path, without importing it or any package above it."""
    parts = name.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])  # a top-level name is found without being imported
        for depth in range(2, len(parts) + 1):
            if spec is None or spec.submodule_search_locations is None:
                return False
            inner = ".".join(parts[:depth])
            loaded = sys.modules.get(inner)
            spec = (
                loaded.__spec__ if loaded is not None else PathFinder.find_spec(inner, spec.submodule_search_locations)
            )
    except (ImportError, ValueError):
        return False
    return spec is not None


def _classify(exc: BaseException) -> tuple[str, str]:
    """``invalid`` when the SDK refused an answer (its validation, or an error where a result belongs),
    ``error`` when it could not get one at all; with the SDK's own words."""
    from mcp.shared.exceptions import MCPError
    from pydantic import ValidationError

    from mcp_assay.suite.probes.sdk_bounds import parser_limit

    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _classify(exc.exceptions[0])
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:400]
    limit = parser_limit(str(exc))
    own = not isinstance(exc, MCPError) or (
        exc.code == ErrorCode.PARSE_ERROR and exc.message.startswith("Failed to parse")
    )
    if limit is not None and own:  # the SDK's own parse error, not an error the server sent
        return "error", f"the SDK's own JSON parser stopped at a limit JSON does not have ({limit}): the SDK's " \
                        "limit, not a fault of the server"  # fmt: skip
    cause = exc.__cause__ or exc.__context__
    if isinstance(exc, ValidationError) or isinstance(cause, ValidationError):
        return "invalid", f"the SDK's own validation refused the answer ({text})"
    if isinstance(exc, MCPError):
        return "invalid", f"the server answered with an error ({text})"
    return "error", f"the SDK could not complete it ({text})"


async def _attempt(
    ctx: SuiteContext,
    case: Case,
    era: str,
    mode: str,
    body: Callable[[], Awaitable[dict[str, Any]]],
    stops: Stops,
) -> tuple[dict[str, Any] | None, str]:
    """Run one SDK case, bounded in time, and record what came of it: what it found, or why not.

    A case that fails after its client stopped reading an answer (a limit, a transport failure) is not
    verified with that reason, whatever the SDK made of it."""
    data: dict[str, Any] = {"case": case.name, "era": era, "mode": mode}
    limit = ctx.config.timeout * SETTLE_TIMEOUT
    mark = len(stops.items)
    try:
        async with asyncio.timeout(limit):
            found = await body()
    except TimeoutError:
        stop = stops.since(mark)
        detail = f"the SDK client got nowhere within {limit:g} s" + (f" ({stop})" if stop else "")
        ctx.observe(OBSERVATION, **data, outcome="error", detail=detail)
        return None, detail
    except Exception as exc:  # the SDK's failure is the finding (or the reason there is none), never a crash
        stop = stops.since(mark)
        outcome, detail = ("error", f"the SDK could not complete it ({stop})") if stop else _classify(exc)
        ctx.observe(OBSERVATION, **data, outcome=outcome, detail=detail)
        return None, detail
    ctx.observe(OBSERVATION, **data, outcome="ok", **found)
    return found, ""


def _answer_limit(ctx: SuiteContext) -> int | None:
    """The limit the run's own transport reads of one answer (``None``: the default one)."""
    transport = ctx.transport
    return transport.answer_limit if isinstance(transport, HttpTransport) else None


def _credentials(ctx: SuiteContext) -> Credentials:
    transport = ctx.transport
    return transport.credentials if isinstance(transport, HttpTransport) else ctx.config.credentials()


async def run(ctx: SuiteContext) -> None:
    if not sdk_available():
        ctx.skip("not verified: the official SDK client is not installed (pip install mcp)", requirements=REQUIREMENTS)
        return
    if not ctx.http or ctx.config.url is None:
        ctx.skip("the stock-client cases drive Streamable HTTP targets; over stdio the SDK would start a server of "
                 "its own", requirements=REQUIREMENTS)  # fmt: skip
        return
    try:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
    except ImportError as exc:  # installed but not importable: the same reason, with the SDK's own words
        ctx.skip(f"not verified: the official SDK client cannot be imported ({exc})", requirements=REQUIREMENTS)
        return

    from mcp_assay.suite.probes.sdk_bounds import Stops, bounded_client

    url = ctx.config.url
    credentials = _credentials(ctx)
    era = Era.MODERN if ctx.modern else Era.HANDSHAKE
    mode = "auto" if ctx.modern else "legacy"  # a version pin would skip server/discover; auto asks it
    tools = ctx.advertises("tools") is True
    limit = _answer_limit(ctx)
    stops = Stops()

    async def configured() -> dict[str, Any]:
        headers = dict(credentials.header_pairs())
        async with bounded_client(stops, headers=headers, timeout=ctx.config.timeout, limit=limit) as http:
            async with Client(streamable_http_client(credentials.url(url), http_client=http), mode=mode) as client:
                negotiated = str(client.protocol_version)
                found: dict[str, Any] = {"negotiated": negotiated}
                if tools:
                    await _attempt(ctx, cases.LIST_TOOLS, era, mode, lambda: _list(client), stops)
                return found

    await _attempt(ctx, cases.CONNECT, era, mode, configured, stops)
    if not tools:
        ctx.skip("the server does not advertise tools, so the SDK client had no tools/list to validate",
                 case=cases.LIST_TOOLS)  # fmt: skip
    await _unconfigured(ctx, url, credentials)


async def _list(client: Any) -> dict[str, Any]:
    result = await client.list_tools()
    return {"listed": len(result.tools)}


async def _unconfigured(ctx: SuiteContext, url: str, credentials: Credentials) -> None:
    """A stock client pointed at the server and nothing else: where does it land, and does it work?"""
    if credentials.header_pairs():
        ctx.observe("note", detail="stock client: an unconfigured SDK client was not tried, because the run's "
                                   "credentials travel in a header a client must be configured to send")  # fmt: skip
        return
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from mcp_assay.suite.probes.sdk_bounds import Stops, bounded_client

    window = [revision.name for revision in ctx.spec.window]
    limit = _answer_limit(ctx)
    stops = Stops()

    async def bare() -> dict[str, Any]:
        async with bounded_client(stops, timeout=ctx.config.timeout, limit=limit) as http:
            async with Client(streamable_http_client(credentials.url(url), http_client=http), mode="auto") as client:
                return {"negotiated": str(client.protocol_version)}

    found, why = await _attempt(ctx, cases.UNCONFIGURED, "auto", "auto", bare, stops)
    if found is None:
        ctx.observe("note", detail=f"stock client: an unconfigured SDK client (mode auto, no headers) did not get "
                                   f"through: {why}")  # fmt: skip
        return
    negotiated = found["negotiated"]
    where = "inside the window" if negotiated in window else f"outside the window ({', '.join(window)})"
    ctx.observe("note", detail=f"stock client: an unconfigured SDK client (mode auto, no headers) just works; it "
                               f"settled on {negotiated}, {where}")  # fmt: skip


FAMILY = ProbeFamily(
    name="sdk",
    cases=cases.CASES,
    run=run,
    transports=frozenset({"http", "stdio"}),
    description="the official SDK's own client: connect, list tools, and an unconfigured client",
)
