"""Why a run has no MCP server to judge, in one line that names what was (or was not) at the other end.

A run judges a server only once one is there. When selection establishes no revision to test
(:mod:`~mcp_assay.suite.selection`), or the server never sends one usable JSON-RPC answer, the
run makes no conformance statement: the report is *not judged* (:attr:`~mcp_assay.report.model.Report.unjudged`)
and says why in one line, written here from what the run saw — the failure that stopped it
(nothing listens, the command is missing), the HTTP answers (a 404 at a wrong path, an HTML page,
a body cut short), what a stdio process printed and how it ended, or the revisions a server
offers outside the window, with the flag that judges it anyway where that works.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite.selection import Selection, handshake_revision
from mcp_assay.suite.transports.connect import address_of
from mcp_assay.vocabulary.errors import Unreachable
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message
from mcp_assay.wire.model import EndReason, Exchange, HttpExchange, ProcessExit, StdioLine

__all__ = ["Seen", "usable_answer", "why_no_answer_was_usable", "why_nothing_was_tested"]

QUOTE = 60
"""Characters of an answer the line quotes."""
NOT_JSON = ("not JSON", "an empty body", "no data")
"""What an answer is when nothing in it looks like JSON (the target is probably not an MCP server)."""
WRONG_PATH = (404, 405)
"""Statuses that, with no JSON-RPC in them, say the server is there but its MCP endpoint is not at this path."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Seen:
    """What a run saw of its target: enough to say in one line why it judged nothing."""

    target: str
    """The URL (credentials and secrets redacted), or the command."""
    url: str | None
    """The URL, for its address and path; ``None`` for a stdio server."""
    items: Sequence[Exchange] = ()
    """Everything the run recorded, judged or left out, in the order it came."""
    stderr: Sequence[str] = ()
    """The last lines the server process wrote on stderr."""
    timeout: float = 10.0


def why_nothing_was_tested(selection: Selection, seen: Seen, spec: SpecSet) -> str:
    """Why selection found no revision to test, as the one line of a report that judges nothing."""
    problem = selection.problem
    exc = selection.exception
    if problem == "unreachable" and isinstance(exc, Unreachable):
        return f"{exc} — {exc.advice}" if exc.advice else str(exc)
    if problem == "unreachable":
        return _exited(seen) or _silent(seen)
    if problem == "unusable":
        return _what_it_sent(seen)
    if problem == "out-of-window" and selection.offered:
        return _outside(selection, spec)
    return selection.detail or "no revision could be chosen"


def usable_answer(items: Sequence[Exchange]) -> bool:
    """Whether the server sent at least one JSON-RPC response to a request of the run (its id answering it)."""
    asked: set[tuple[str, object]] = set()
    for item in items:
        if isinstance(item, HttpExchange):
            request = item.request_message
            if request is None or request.id_key is None:
                continue
            if any(_answers(message, request) for message in item.response_messages):
                return True
        elif isinstance(item, StdioLine) and item.message.id_key is not None:
            message = item.message
            if item.sender is Side.CLIENT and message.kind is Kind.REQUEST:
                asked.add((item.connection, message.id_key))
            elif item.sender is Side.SERVER and message.kind.is_response:
                if (item.connection, message.id_key) in asked:
                    return True
    return False


def why_no_answer_was_usable(seen: Seen) -> str:
    """For a run that tested a revision (``--spec-version``) but never got one usable answer: what came back."""
    if any(_server_sent(item) for item in seen.items):
        return _what_it_sent(seen)
    return _exited(seen) or _silent(seen)


# -- the ways a target can be absent ---------------------------------------------------------------
def _answers(message: Message, request: Message) -> bool:
    return message.kind.is_response and message.id_key == request.id_key


def _server_sent(item: Exchange) -> bool:
    if isinstance(item, HttpExchange):
        return item.response is not None
    return isinstance(item, StdioLine) and item.sender is Side.SERVER


def _own_exit(seen: Seen) -> ProcessExit | None:
    """The first process that ended on its own (not because the run closed its stdin)."""
    return next((item for item in seen.items if isinstance(item, ProcessExit) and item.stdin_closed_at is None), None)


def _stderr(seen: Seen) -> str:
    tail = [line.strip() for line in seen.stderr if line.strip()][-3:]
    return f"; its stderr ended: {_clip(' | '.join(tail), 300)}" if tail else ""


def _exited(seen: Seen) -> str:
    """A stdio server that ended before it answered: its exit code and its last words."""
    ended = _own_exit(seen)
    if ended is None:
        return ""
    how = f"exited with code {ended.code}"
    if ended.code is not None and ended.code < 0:
        try:
            how = f"was ended by {signal.Signals(-ended.code).name}"
        except ValueError:
            how = f"was ended by signal {-ended.code}"
    said = _stdout(seen)
    tail = _stderr(seen) or "; it wrote nothing on stderr"
    return f"the server process {how} before answering{said}{tail}"


def _stdout(seen: Seen) -> str:
    lines = [item for item in seen.items if isinstance(item, StdioLine) and item.sender is Side.SERVER]
    if not lines:
        return ""
    return f"; on stdout it printed {_quote(lines[0].raw)}"


def _silent(seen: Seen) -> str:
    """A target that took the requests and never answered them."""
    if seen.url is not None:
        return (
            f"{address_of(seen.url)} accepted the connection but sent no answer to server/discover or "
            f"initialize within {seen.timeout:g} s"
        )
    return (
        f"the server process sent no answer to server/discover or initialize within {seen.timeout:g} s "
        f"(it printed nothing on stdout){_stderr(seen)}"
    )


def _what_it_sent(seen: Seen) -> str:
    """A target that answered, but never in usable JSON-RPC: what it sent instead."""
    if seen.url is None:
        return _printed(seen)
    answered = [item for item in seen.items if isinstance(item, HttpExchange) and item.response is not None]
    if not answered:
        return _silent(seen)
    spoke = any(message.kind.is_response for item in answered for message in item.response_messages)
    statuses = {item.response.status for item in answered if item.response is not None}
    if not spoke and statuses <= set(WRONG_PATH):
        return _wrong_path(seen.target, seen.url, statuses)
    heard, like_mcp = _by_request(answered)
    if spoke:
        return f"{seen.target} answered, but nothing it sent named a revision: {heard}"
    if like_mcp:
        return f"{seen.target} answered, but never in usable JSON-RPC: {heard}"
    return f"{seen.target} answered, but not in JSON-RPC: {heard} — is it an MCP server?"


def _wrong_path(target: str, url: str, statuses: set[int]) -> str:
    path = urlsplit(url).path or "/"
    if statuses == {405}:
        said = f"{target} answered HTTP 405 (Method Not Allowed) to POST: {path} does not take MCP requests"
    else:
        said = f"{target} answered HTTP 404 (Not Found): the server is there, but no MCP endpoint at {path}"
    if path.rstrip("/") == "/mcp":
        return f"{said} — is its MCP endpoint mounted at another path?"
    hint = f"{said} — MCP endpoints are usually at /mcp"
    if path.rstrip("/").endswith("/sse"):
        hint += " (/sse is usually the 2024-11-05 HTTP+SSE transport, which mcp-assay does not drive)"
    return hint


def _by_request(answered: Sequence[HttpExchange]) -> tuple[str, bool]:
    """The selection requests' answers, alike ones said once with the first one quoted; and whether any of them
    looked like JSON at all (a server that cuts its JSON short is not "not an MCP server")."""
    groups: dict[str, tuple[list[str], bytes]] = {}
    like_mcp = False
    for item in answered:
        request = item.request_message
        method = request.method if request is not None and request.method else item.request.method
        head, body = _http_answer(item)
        diagnosis = _diagnosis(item, body, request)
        like_mcp = like_mcp or diagnosis not in NOT_JSON
        methods, _ = groups.setdefault(f"{head}, {diagnosis})", ([], body))
        methods.append(method)
    parts = [
        f"{_listed(list(dict.fromkeys(methods)))} got {answer}" + (f": {_quote(body)}" if body.strip() else "")
        for answer, (methods, body) in groups.items()
    ]
    return "; ".join(parts[:2]) + ("; …" if len(parts) > 2 else ""), like_mcp


def _http_answer(item: HttpExchange) -> tuple[str, bytes]:
    """``HTTP 404 Not Found (text/html`` (closed by the caller with the diagnosis), and the body to quote."""
    response = item.response
    assert response is not None
    status = f"HTTP {response.status}" + (f" {response.reason}" if response.reason else "")
    if response.is_event_stream:
        data = next((event.data for event in response.events if event.data), "")
        return f"{status} (text/event-stream", data.encode("utf-8", "replace")
    return f"{status} ({response.content_type or 'no content type'}", response.body or b""


def _diagnosis(item: HttpExchange, body: bytes, request: Message | None) -> str:
    if item.ending is not None and item.ending.reason is EndReason.SERVER_DISCONNECT:
        return "the connection closed before the body was complete"
    if not body.strip():
        return "no data" if item.response is not None and item.response.is_event_stream else "an empty body"
    message = next(iter(item.response_messages), None)
    if message is None or message.kind is Kind.UNPARSEABLE:
        return _not_json(body)
    return _jsonrpc(message, request)


def _not_json(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        if text[:1] in ("{", "[") and (exc.pos >= len(text) - 1 or exc.msg.startswith("Unterminated string")):
            return "JSON cut short"
        return "not JSON"
    except RecursionError:
        return "JSON nested deeper than mcp-assay reads"
    return "not a JSON-RPC message"


def _jsonrpc(message: Message, request: Message | None) -> str:
    if message.kind is Kind.INVALID:
        return "JSON, but not a JSON-RPC message"
    if not message.kind.is_response:
        return f"a JSON-RPC {message.kind.value}, not a response"
    if request is not None and message.id_key != request.id_key:
        return "a JSON-RPC answer whose id is not the request's"
    if message.kind is Kind.ERROR:
        error = message.error if isinstance(message.error, dict) else {}
        text = error.get("message")
        return f"JSON-RPC error {error.get('code', '?')}" + (f" ({_clip(str(text), 80)})" if text else "")
    return "a JSON-RPC result naming no revision"


def _printed(seen: Seen) -> str:
    """A stdio server that printed on stdout, but nothing usable: the first line, and how the process ended."""
    lines = [item for item in seen.items if isinstance(item, StdioLine) and item.sender is Side.SERVER]
    if not lines:
        return _exited(seen) or _silent(seen)
    first = lines[0].message
    if first.kind in (Kind.UNPARSEABLE, Kind.INVALID):
        said = f"the server printed something that is not JSON-RPC on stdout: {_quote(lines[0].raw)}"
    elif first.kind.is_response:
        shown = "no id" if first.id is MISSING else f"id {json.dumps(first.id)}"
        said = (
            f"the server answered on stdout, but with ids that match no request (the first: {shown}): "
            f"{_quote(lines[0].raw)}"
        )
    else:
        said = f"the server printed {first.describe()} on stdout, and no answer: {_quote(lines[0].raw)}"
    ended = _own_exit(seen)
    if ended is not None:
        end = f"; it then exited with code {ended.code}"
    elif not first.kind.is_response:
        end = f"; it answered neither server/discover nor initialize within {seen.timeout:g} s"
    else:
        end = ""
    return f"{said}{end}{_stderr(seen)}"


def _outside(selection: Selection, spec: SpecSet) -> str:
    """A server that speaks only revisions outside the window: which, the window, and how to judge it anyway."""
    offered = "; ".join(f"{version} (per {source})" for version, source in selection.offered.items())
    window = " and ".join(revision.name for revision in spec.window)
    said = f"the server speaks only {offered}; mcp-assay judges {window}"
    nearest = handshake_revision(spec)
    if nearest is not None and "initialize" in selection.offered.values():
        # tried on a 2025-06-18 server: the handshake era runs and judges it as the window's handshake revision
        said += f" — to judge it against {nearest.name} anyway: --spec-version {nearest.name}"
    return said


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _quote(raw: bytes) -> str:
    text = " ".join(raw[: QUOTE * 4].decode("utf-8", "replace").split())
    return repr(_clip(text, QUOTE))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
