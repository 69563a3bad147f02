"""The few things an injection does to an exchange, as typed values each transport knows how to apply.

A case names one action; the HTTP injector (:mod:`.http`) and the stdio tap (:mod:`.stdio`)
apply it by its type, never by the case's name, so a new case that answers, holds, respells or
cuts is a value in a family module and nothing else. An action knows what it does in words (the
docs table), which :class:`~mcp_assay.wire.faults.FaultKind` the exchange is tagged with (what the rules
select on), whether it can only be decided once the answer's head is known, and whether the tap
can apply it (a line has no status, no headers and no event stream).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from mcp_assay.addon.inject.points import AnswerHead, RequestFacts
from mcp_assay.cases import NO_FACTS, Facts
from mcp_assay.vocabulary.protocol import MediaType
from mcp_assay.wire.faults import FaultKind

__all__ = ["Action", "Answering", "CutStream", "HoldBack", "Made", "Reply", "Respell", "error_answer"]


class Answering(Protocol):
    """What a reply's body may ask of the session (the plan): the versions a refusal offers."""

    def supported_for(self, requested: str | None) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class Made:
    """A body made on the server's behalf, and the facts the exchange's tag records about it."""

    body: bytes
    facts: Facts = NO_FACTS

    @classmethod
    def json(cls, message: Mapping[str, Any], facts: Facts = NO_FACTS) -> Made:
        """One JSON-RPC message, compact (one line: the tap writes it as is)."""
        return cls(json.dumps(message, separators=(",", ":")).encode(), facts)


def error_answer(ident: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error answering request ``ident``, saying mcp-assay made it."""
    error: dict[str, Any] = {"code": code, "message": f"{message} (injected by mcp-assay)"}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": ident, "error": error}


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """Answer in the server's place with ``status`` and a body made for the request: it never reaches the server."""

    status: int
    make: Callable[[RequestFacts, Answering], Made]
    content_type: str = MediaType.JSON
    does: str
    """What the answer is, in words (``answers 400 with -32022 ...``)."""

    fault: ClassVar[FaultKind] = FaultKind.ANSWERED
    at_response: ClassVar[bool] = False
    answer_only: ClassVar[bool] = False
    """Whether the server still gets the request and the fault is only in how its answer reaches the client."""

    @property
    def on_stdio(self) -> bool:
        """A JSON answer is a line the tap can write; a status alone or an event stream is not."""
        return self.content_type == MediaType.JSON

    def accepts(self, head: AnswerHead) -> bool:
        return True


@dataclass(frozen=True, slots=True, kw_only=True)
class HoldBack:
    """Pass the request on, and keep the server's answer back for the hold (or until the client leaves)."""

    does: str = (
        "passes the request on and holds the server's answer back `--inject-hold-ms`, or until the client leaves"
    )

    fault: ClassVar[FaultKind] = FaultKind.HELD
    at_response: ClassVar[bool] = False
    answer_only: ClassVar[bool] = True
    on_stdio: ClassVar[bool] = True

    def accepts(self, head: AnswerHead) -> bool:
        return True


@dataclass(frozen=True, slots=True, kw_only=True)
class Respell:
    """Respell the answer's header names in another legal case (``Mcp-Session-Id`` -> ``mCP-sESSION-iD``).

    Only an HTTP/1 answer keeps the case it was sent in; ``needs`` is a header the answer must carry
    for the respelling to matter (the session id of an ``initialize`` answer)."""

    needs: str | None = None
    does: str = "respells the answer's header names in another case (`mCP-sESSION-iD`, HTTP/1 only)"

    fault: ClassVar[FaultKind] = FaultKind.RESPELLED
    at_response: ClassVar[bool] = True
    answer_only: ClassVar[bool] = True
    on_stdio: ClassVar[bool] = False

    def accepts(self, head: AnswerHead) -> bool:
        return head.http1 and (self.needs is None or self.needs.lower() in head.names)

    @staticmethod
    def respelled(name: str) -> str:
        """The same header name in another case."""
        return name.swapcase()


@dataclass(frozen=True, slots=True, kw_only=True)
class CutStream:
    """End the server's event-stream answer after the events before its final response, with an event carrying
    an ``id`` and ``retry``; a ``GET`` resuming after that id gets the rest (a ``resumption`` of its own)."""

    retry_ms: int
    resumption: str
    """The name the resuming exchange's tag carries."""
    does: str

    fault: ClassVar[FaultKind] = FaultKind.CUT
    at_response: ClassVar[bool] = True
    answer_only: ClassVar[bool] = True
    on_stdio: ClassVar[bool] = False

    def accepts(self, head: AnswerHead) -> bool:
        return head.status == 200 and head.streamed


Action = Reply | HoldBack | Respell | CutStream
"""Every action a transport applies."""
