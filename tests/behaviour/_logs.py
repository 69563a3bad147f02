"""Hand-built behaviour-case traffic: tagged calls and witness reads at chosen times.

A :class:`Lane` writes what the suite's behaviour cases record for one era over one transport
(2026-07-28 HTTP by default), with every time explicit so the race rules see the timing they
judge. Tests bend one thing (a witness value, an answer, a timeout) and judge one check.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.model import (
    Ending,
    EndReason,
    Headers,
    HttpExchange,
    HttpRequest,
    HttpResponse,
    Observation,
    StdioLine,
)
from mcp_assay.wire.traffic import ExchangeLog
from tests.factories import MODERN, URL, as_probe, meta, modern_headers, server_info

T0 = 1_800_000_000.0
_ids = itertools.count(1)
STRICT = {"type": "object", "properties": {"title": {"type": "string"}}, "additionalProperties": False}


def success(payload: Any = None) -> dict[str, Any]:
    return {"resultType": "complete", "content": [], "structuredContent": payload or {}, "_meta": server_info()}


def tool_error(text: str = "refused") -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": text}], "isError": True}


class Lane:
    """Builds one lane's worth of behaviour traffic into a log."""

    def __init__(self, era: str = MODERN, transport: str = "http") -> None:
        self.era = era
        self.transport = transport
        self.log = ExchangeLog()
        self.now = T0
        self.ids = itertools.count(1)

    def at(self, seconds: float) -> float:
        self.now = T0 + seconds
        return self.now

    def tags(self, case: str, **extra: Any) -> dict[str, Any]:
        return {"case": f"{self.era}/{self.transport}/{case}", "era": self.era, "transport": self.transport, **extra}

    def witness(self, case: str, read: str, value: Any = None, *, error: str | None = None, **tags: Any) -> None:
        data: dict[str, Any] = {"read": read, "witness": "count", "via": "http", **self.tags(case, **tags)}
        if error is not None:
            data["error"] = error
        else:
            data["value"] = value
        self.log.add(Observation(id=f"o{next(_ids)}", time=self.now, kind="witness", data=data))

    def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        probe: dict[str, Any],
        result: Any = None,
        error: dict[str, Any] | None = None,
        answered_after: float | None = 0.01,
        disconnect_after: float | None = None,
        status: int = 200,
        method: str = "tools/call",
    ) -> None:
        """One HTTP exchange at the current time; answered ``answered_after`` s later, or cut off by the client."""
        ident = next(self.ids)
        params: dict[str, Any] = {"name": name, "arguments": arguments} if method == "tools/call" else {}
        body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": meta(self.era)}}
        start = self.now
        request = HttpRequest(
            method="POST", url=URL, headers=Headers(modern_headers(body)), body=json.dumps(body).encode(), time=start
        )
        response = None
        if disconnect_after is not None:
            ending = Ending(reason=EndReason.CLIENT_DISCONNECT, time=start + disconnect_after)
        else:
            assert answered_after is not None
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": ident}
            if error is not None:
                answer["error"] = error
            else:
                answer["result"] = result if result is not None else success()
            response = HttpResponse(
                status=status,
                headers=Headers({"content-type": "application/json"}),
                time=start + answered_after,
                body=json.dumps(answer).encode(),
            )
            ending = Ending(reason=EndReason.COMPLETE, time=start + answered_after)
        self.log.add(
            HttpExchange.build(
                id=f"h{next(_ids)}",
                request=request,
                response=response,
                ending=ending,
                probe=as_probe({"family": "behaviour", **probe}),
            )
        )

    def listing(
        self, principal: str, names: list[str], schema: dict[str, Any] | None = None, cache_scope: str = "private"
    ) -> None:
        tools = [{"name": name, "inputSchema": schema or STRICT} for name in names]
        result = {
            "resultType": "complete",
            "tools": tools,
            "ttlMs": 0,
            "cacheScope": cache_scope,
            "_meta": server_info(),
        }
        probe = {"name": "principal-list", **self.tags(f"tools-by-principal/{principal}", principal=principal)}
        self.call("", {}, probe=probe, result=result, method="tools/list")

    def expectation(self, table: dict[str, list[str]]) -> None:
        self.log.add(Observation(id=f"o{next(_ids)}", time=self.now, kind="expectation",
                                 data={"tools_by_principal": table}))  # fmt: skip

    def calibrate(self, before: Any = 1, after: Any = 2, *, duration: float = 0.4, tool: str = "create_draft") -> None:
        case = f"write/{tool}/calibrate"
        tags = {"tool": tool, "phase": "calibrate"}
        self.at(1.0)
        self.witness(case, "before", before, **tags)
        self.at(1.01)
        self.call(tool, {"title": "t"}, probe={"name": "cancel-race", **self.tags(case, **tags)},
                  answered_after=duration)  # fmt: skip
        self.at(1.01 + duration + 0.01)
        self.witness(case, "after", after, **tags)

    def refusal(
        self,
        kind: str,
        before: Any,
        after: Any,
        *,
        result: Any = None,
        error: dict[str, Any] | None = None,
        principal: str = "writer",
        start: float = 3.0,
        called: str = "create_draft",
        status: int = 200,
        **probe_tags: Any,
    ) -> None:
        case = f"write/create_draft/refusal/{kind}"
        tags = {"tool": "create_draft", "phase": "refusal", "refusal": kind}
        extra = {"extra": ["publish"]} if kind == "extra_arguments" else {}
        self.at(start)
        self.witness(case, "before", before, **tags)
        self.at(start + 0.01)
        arguments = {"title": "t", "publish": True} if kind == "extra_arguments" else {"title": "t"}
        probe = {"name": "refusal", **self.tags(case, principal=principal, **tags, **extra, **probe_tags)}
        self.call(called, arguments, probe=probe, result=result, error=error, status=status)
        self.at(start + 0.5)
        self.witness(case, "after", after, **tags)

    def race(
        self,
        before: Any,
        after: Any,
        *,
        timeout_ms: int = 100,
        answered_after: float | None = None,
        start: float = 5.0,
        attempt: int | None = None,
    ) -> None:
        case = "write/create_draft/race" + (f"-{attempt}" if attempt else "")
        tags: dict[str, Any] = {"tool": "create_draft", "phase": "race", "timeout_ms": timeout_ms, "settle_ms": 1200}
        if attempt:
            tags["attempt"] = attempt
        self.at(start)
        self.witness(case, "before", before, **tags)
        self.at(start + 0.01)
        probe = {"name": "cancel-race", **self.tags(case, principal="writer", **tags)}
        if answered_after is not None:
            self.call("create_draft", {"title": "t"}, probe=probe, answered_after=answered_after)
        else:
            self.call("create_draft", {"title": "t"}, probe=probe, disconnect_after=timeout_ms / 1000)
        self.at(start + 0.01 + timeout_ms / 1000 + 1.2)
        self.witness(case, "after", after, **tags)

    def stability(self, first: Any, second: Any) -> None:
        self.at(0.5)
        self.witness("stability/count", "first", first)
        self.at(0.7)
        self.witness("stability/count", "second", second)

    def handle(
        self, *, result: Any = None, error: dict[str, Any] | None = None, canary: str = "mcp-assay-canary-1"
    ) -> None:
        case = "handle/draft"
        self.at(7.0)
        create = self.tags(case, principal="writer", tool="create_draft", canary=canary)
        self.call(
            "create_draft", {"body": canary}, probe={"name": "handle-create", **create}, result=success({"id": "d_1"})
        )
        self.at(7.1)
        use = self.tags(case, principal="reader", tool="read_draft", owner="writer", canary=canary)
        self.call("read_draft", {"draft_id": "d_1"}, probe={"name": "handle-use", **use}, result=result, error=error)

    def read(self, before: Any, after: Any) -> None:
        case = "read/list_drafts"
        tags = {"tool": "list_drafts", "phase": "read"}
        self.at(8.0)
        self.witness(case, "before", before, **tags)
        self.at(8.01)
        self.call("list_drafts", {}, probe={"name": "read-tool", **self.tags(case, principal="reader", **tags)})
        self.at(8.5)
        self.witness(case, "after", after, **tags)


def stdio_line(sender: Side, body: Any, *, time: float, probe: dict[str, Any] | None = None) -> StdioLine:
    return StdioLine.build(id=f"s{next(_ids)}", connection="p1", sender=sender, time=time,
                           raw=json.dumps(body).encode() + b"\n", probe=as_probe(probe))  # fmt: skip
