"""Pagination (PAGE-): cursors on the four list methods, and the listings they assemble.

Besides its own rules, this module reconstructs *walks*: the pages a client fetched for one
list method from one server, chained by ``nextCursor``. The tools, resources and prompts rules
use the latest walk to know which tools, prompts or resources a server offers (so that a call
naming something absent from a complete listing is known to name something that does not
exist) and to compare listings with each other.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mcp_assay.cases import pagination as cases
from mcp_assay.spec.checks import Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import error_code, http_exchange
from mcp_assay.spec.validator import canonical
from mcp_assay.vocabulary.protocol import ErrorCode, HeaderKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message
from mcp_assay.wire.model import HttpExchange
from mcp_assay.wire.traffic import ExchangeLog, endpoint_of

__all__ = [
    "INVALID_CURSORS",
    "ITEMS",
    "Listing",
    "Page",
    "Walk",
    "first_answer",
    "listing_for",
    "server_key",
    "walks",
]

ITEMS = {
    "tools/list": ("tools", "name"),
    "prompts/list": ("prompts", "name"),
    "resources/list": ("resources", "uri"),
    "resources/templates/list": ("resourceTemplates", "uriTemplate"),
}
"""Paginated method -> (the result member holding the items, the member that identifies an item)."""

LIST_CHANGED = {
    "tools/list": "notifications/tools/list_changed",
    "prompts/list": "notifications/prompts/list_changed",
    "resources/list": "notifications/resources/list_changed",
    "resources/templates/list": "notifications/resources/list_changed",
}

_LISTS_CHANGED: dict[str, list[str]] = {
    notification: [method for method, named in LIST_CHANGED.items() if named == notification]
    for notification in set(LIST_CHANGED.values())
}
"""List-changed notification -> the list methods it invalidates."""

INVALID_CURSORS = frozenset({"mcp-assay-invalid-cursor", "mcp-conformance-invalid-cursor"})
"""Cursors probes send to provoke PAGE-05 (any cursor tagged ``invalid-cursor`` works too)."""


# -- walks ---------------------------------------------------------------------------------------
def server_key(message: Message, ctx: Context) -> str:
    """Which server a message concerns: the MCP endpoint on HTTP, the stdio server otherwise."""
    exchange = ctx.log.get(message.exchange)
    if isinstance(exchange, HttpExchange):
        return endpoint_of(exchange)
    return "stdio"


def credentials_of(message: Message, ctx: Context) -> str:
    """Who asked: the Authorization header, plus the principal the suite's behaviour cases tag.

    The tag tells principals apart where the wire cannot: in a recording every credential reads
    ``[REDACTED]``, and over stdio a principal is the environment the server was started with."""
    probe = ctx.probe(message)
    principal = probe.facts.principal if probe is not None else None
    tag = f" as {principal}" if principal is not None else ""
    exchange = http_exchange(message, ctx)
    if exchange is None:
        return tag
    return (exchange.request.headers.get(HeaderKey.AUTHORIZATION) or "") + tag


def first_answer(request: Message, ctx: Context) -> Message | None:
    answers = ctx.log.responses_to(request)
    return answers[0] if answers else None


@dataclass
class Page:
    """One paginated request and the result it got (looked up when asked: over stdio it comes later)."""

    request: Message
    log: ExchangeLog = field(repr=False, compare=False)
    _answer: Message | None = field(default=None, repr=False, compare=False)

    @property
    def answer(self) -> Message | None:
        if self._answer is None:  # once found it stays the first answer: the log only grows
            answers = self.log.responses_to(self.request)
            self._answer = answers[0] if answers else None
        return self._answer

    @property
    def cursor(self) -> Any:
        params = self.request.params
        return params.get("cursor", MISSING) if isinstance(params, dict) else MISSING

    @property
    def result(self) -> dict[str, Any] | None:
        answer = self.answer
        if answer is None or answer.kind is not Kind.RESULT or not isinstance(answer.result, dict):
            return None
        return answer.result

    @property
    def next_cursor(self) -> Any:
        result = self.result
        return result.get("nextCursor", MISSING) if result is not None else MISSING

    def items(self) -> list[Any]:
        result = self.result
        member = ITEMS[self.request.method or ""][0]
        items = result.get(member) if result is not None else None
        return items if isinstance(items, list) else []


@dataclass
class Walk:
    """Pages of one list method from one server, chained by ``nextCursor``."""

    method: str
    key: str
    credentials: str
    pages: list[Page] = field(default_factory=list)
    headless: bool = False
    """The first page captured already carried a cursor (the walk started before the capture)."""
    _keyed: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def complete(self) -> bool:
        """Every page was captured and the last one ended the list."""
        if self.headless or not self.pages:
            return False
        last = self.pages[-1]
        return last.result is not None and last.next_cursor is MISSING

    @property
    def start(self) -> float:
        return self.pages[0].request.time

    @property
    def end(self) -> float:
        last = self.pages[-1]
        return last.answer.time if last.answer is not None else last.request.time

    def items(self) -> list[Any]:
        return [item for page in self.pages for item in page.items()]

    def forget(self) -> None:
        """A page was added: the items must be gathered again when next asked."""
        self._keyed = None

    def by_key(self) -> dict[str, Any]:
        """The walk's items by their identifying member (built once: every message asking costs nothing more)."""
        if self._keyed is None:
            ident = ITEMS[self.method][1]
            found: dict[str, Any] = {}
            for item in self.items():
                if isinstance(item, dict) and isinstance(item.get(ident), str):
                    found.setdefault(item[ident], item)
            self._keyed = found
        return self._keyed


_LISTS_CHANGED_BY = {
    notification: [method for method, changed in LIST_CHANGED.items() if changed == notification]
    for notification in set(LIST_CHANGED.values())
}
"""The list methods each list-changed notification is about (the message checks that ask :class:`Walks` advance it
exchange by exchange, so this is not worked out at each advance)."""


class Walks:
    """Every walk in the log by method, and by method and server with their start times, kept up to
    date as the log grows (each new message is looked at once)."""

    RECENT = 32
    """How many walks back a listing lookup looks for a complete one before settling for the latest."""

    def __init__(self, ctx: Context) -> None:
        self.by_method: dict[str, list[Walk]] = defaultdict(list)
        self.shelves: dict[tuple[str, str], list[Walk]] = defaultdict(list)
        self.starts: dict[tuple[str, str], list[float]] = defaultdict(list)
        self.changes: dict[str, list[float]] = defaultdict(list)
        self.position = 0
        self.advance(ctx)

    def advance(self, ctx: Context) -> None:
        """Take in the messages added to the log since the last call."""
        notifications = _LISTS_CHANGED_BY
        for message in ctx.log.messages_since(self.position):
            if message.sender is Side.SERVER and message.method in notifications:
                for method in notifications[message.method]:
                    insort(self.changes[method], message.time)
            if message.kind is Kind.REQUEST and message.sender is Side.CLIENT and message.method in ITEMS:
                if not ctx.deliberately_invalid(message):
                    self._page(message, ctx)
        self.position = ctx.log.message_count()

    def _page(self, request: Message, ctx: Context) -> None:
        assert request.method is not None
        page = Page(request, ctx.log)
        key = server_key(request, ctx)
        group = self.by_method[request.method]
        cursor = page.cursor
        walk = None
        if cursor is not MISSING:
            for candidate in reversed(group):
                if candidate.key == key and candidate.pages and candidate.pages[-1].next_cursor == cursor:
                    walk = candidate
                    break
        if walk is None:
            walk = Walk(request.method, key, credentials_of(request, ctx), headless=cursor is not MISSING)
            group.append(walk)
            shelf = (request.method, key)
            at = bisect_right(self.starts[shelf], request.time)
            self.starts[shelf].insert(at, request.time)
            self.shelves[shelf].insert(at, walk)
        walk.pages.append(page)
        walk.forget()

    def changed_between(self, method: str, start: float, end: float) -> bool:
        times = self.changes.get(method, [])
        index = bisect_left(times, start)
        return index < len(times) and times[index] <= end

    def as_of(self, method: str, key: str, moment: float) -> Walk | None:
        """The latest complete walk that ended by ``moment`` (looking :attr:`RECENT` walks back), else the
        latest that ended by then, else the first one."""
        shelf = self.shelves.get((method, key))
        if not shelf:
            return None
        started = bisect_right(self.starts[(method, key)], moment)
        latest: Walk | None = None
        looked = 0
        for walk in reversed(shelf[:started]):
            if walk.end > moment:
                continue  # still in flight at that moment
            if walk.complete:
                return walk
            latest = latest or walk
            looked += 1
            if looked >= self.RECENT:
                break
        return latest or shelf[0]


def walks(ctx: Context, method: str) -> list[Walk]:
    """Every walk of ``method`` in the log, in the order they started."""
    return list(ctx.view(Walks).by_method.get(method, []))


@dataclass(frozen=True)
class Listing:
    """What a server offers according to a walk."""

    items: dict[str, Any]
    complete: bool
    """The walk was captured from its first page to its last and no list-changed notification
    came between it and the message, so absence from it means absence."""


def listing_for(message: Message, ctx: Context, method: str) -> Listing | None:
    """The items ``method`` listed for the server ``message`` concerns, as of ``message``'s time.

    The latest complete walk that ended before the message wins; failing that the latest walk
    before it; failing that the first walk after it."""
    index = ctx.view(Walks)
    chosen = index.as_of(method, server_key(message, ctx), message.time)
    if chosen is None:
        return None
    start, end = sorted((chosen.end, message.time))
    return Listing(chosen.by_key(), chosen.complete and not index.changed_between(method, start, end))


def list_changed_between(ctx: Context, method: str, start: float, end: float) -> bool:
    """Whether the server said ``method``'s list changed between ``start`` and ``end`` (inclusive)."""
    return ctx.view(Walks).changed_between(method, start, end)


# -- rules ---------------------------------------------------------------------------------------
def _is_paginated_request(message: Message) -> bool:
    return message.kind is Kind.REQUEST and message.method in ITEMS


@message_check(
    requirements="PAGE-01",
    level=Level.MUST,
    subject="paginated requests and results",
    kinds={Kind.REQUEST, Kind.RESULT},
    methods=ITEMS,
)
def cursors_are_strings(message: Message, ctx: Context) -> Finding | None:
    """On the four list methods, params.cursor and nextCursor are strings when present."""
    if message.kind is Kind.REQUEST:
        if not _is_paginated_request(message) or not isinstance(message.params, dict):
            return None
        cursor = message.params.get("cursor", MISSING)
        if cursor is MISSING or isinstance(cursor, str):
            return passed(message)
        return failed(message, f"{message.describe()} sends a cursor that is not a string: {cursor!r}"[:300])
    request = ctx.log.request_of(message)
    if request is None or request.method not in ITEMS or not isinstance(message.result, dict):
        return None
    if message.result.get("resultType") == "input_required":
        return None
    next_cursor = message.result.get("nextCursor", MISSING)
    if next_cursor is MISSING or isinstance(next_cursor, str):
        return passed(message)
    return failed(message, f"the {request.method} result has a nextCursor that is not a string: {next_cursor!r}"[:300])


def _issued(ctx: Context, request: Message, cursor: str) -> tuple[list[Message], list[Message], bool]:
    """Results before ``request`` that issued ``cursor`` for its method, for other methods, and
    whether any earlier result of its method was captured at all."""
    key = server_key(request, ctx)
    same: list[Message] = []
    other: list[Message] = []
    seen_method = False
    for message in ctx.log.messages():
        if message.time > request.time:
            break
        if message.kind is not Kind.RESULT or message.sender is not Side.SERVER:
            continue
        origin = ctx.log.request_of(message)
        if origin is None or origin.method not in ITEMS or server_key(message, ctx) != key:
            continue
        if origin.method == request.method:
            seen_method = True
        result = message.result
        if isinstance(result, dict) and result.get("nextCursor", MISSING) == cursor:
            (same if origin.method == request.method else other).append(message)
    return same, other, seen_method


@message_check(
    requirements="PAGE-02",
    level=Level.MUST,
    subject="paginated requests with a cursor",
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
    methods=ITEMS,
)
def clients_send_only_cursors_the_server_issued(message: Message, ctx: Context) -> Finding | None:
    """A client sends back only a nextCursor the server gave it for the same method, unaltered."""
    if not _is_paginated_request(message) or not isinstance(message.params, dict):
        return None
    cursor = message.params.get("cursor", MISSING)
    if not isinstance(cursor, str):
        return None
    same, other, seen_method = _issued(ctx, message, cursor)
    if same:
        return passed(message)
    if other:
        origin = ctx.log.request_of(other[-1])
        method = origin.method if origin is not None else "another method"
        return failed(message, f"{message.method} was sent a cursor the server issued for {method}")
    if not seen_method:
        return unverified(
            f"no earlier {message.method} result was captured, so the cursor's origin is unknown", message
        )
    return failed(message, f"{message.method} was sent cursor {cursor!r} that no earlier result issued"[:300])


@log_check(
    requirements="PAGE-03",
    level=Level.MUST_NOT,
    subject="empty-string cursors",
    features={"per_request_version"},
    follows=ITEMS,
)
def clients_follow_empty_string_cursors(ctx: Context) -> Iterator[Finding]:
    """An empty-string nextCursor is followed like any other cursor, not taken as the end of the list."""
    for method in ITEMS:
        for walk in walks(ctx, method):
            for position, page in enumerate(walk.pages):
                if page.next_cursor != "" or page.answer is None or not ctx.in_scope(page.answer):
                    continue
                if position + 1 < len(walk.pages):
                    yield passed(walk.pages[position + 1].request)
                    continue
                followed_others = any(
                    isinstance(p.cursor, str) and p.cursor != ""
                    for other in walks(ctx, method)
                    if other.key == walk.key
                    for p in other.pages
                )
                if followed_others:
                    yield failed(
                        page.answer,
                        f'the client follows {method} cursors but stopped at nextCursor "", which is not the end',
                    )
                else:
                    yield unverified(
                        f'the client never followed a {method} cursor, so stopping at "" proves nothing', page.answer
                    )


def _item_keys(page: Page) -> list[str]:
    ident = ITEMS[page.request.method or ""][1]
    return [
        item[ident] if isinstance(item, dict) and isinstance(item.get(ident), str) else canonical(item)
        for item in page.items()
    ]


@log_check(requirements="PAGE-04", level=Level.SHOULD, subject="paginated walks", follows=ITEMS)
def cursors_are_stable_and_walks_terminate(ctx: Context) -> Iterator[Finding]:
    """A walk never revisits a cursor or repeats an item, and the same cursor gives the same page."""
    for method in ITEMS:
        seen_pages: dict[tuple[str, str, str], Page] = {}
        for walk in walks(ctx, method):
            in_scope = [page for page in walk.pages if page.answer is not None and ctx.in_scope(page.answer)]
            if not in_scope:
                continue
            problem = None
            cursors_used: set[str] = set()
            items_seen: dict[str, int] = {}
            for number, page in enumerate(walk.pages, start=1):
                if isinstance(page.cursor, str):
                    cursors_used.add(page.cursor)
                if page.result is None:
                    break
                for item in _item_keys(page):
                    if item in items_seen and problem is None:
                        where = (
                            f"twice on page {number}"
                            if items_seen[item] == number
                            else f"on page {items_seen[item]} and again on page {number}"
                        )
                        problem = (page.answer, f"{method} listed {item[:80]!r} {where}")
                    items_seen.setdefault(item, number)
                next_cursor = page.next_cursor
                if isinstance(next_cursor, str) and next_cursor in cursors_used and problem is None:
                    problem = (page.answer, f"{method} returned nextCursor {next_cursor[:60]!r} again: the walk loops")
            for page in walk.pages:
                if not isinstance(page.cursor, str) or page.result is None:
                    continue
                slot = (walk.key, walk.credentials, page.cursor)
                earlier = seen_pages.get(slot)
                seen_pages[slot] = page
                if earlier is None or earlier.answer is None or page.answer is None or problem is not None:
                    continue
                if list_changed_between(ctx, method, earlier.request.time, page.answer.time):
                    continue
                if _item_keys(earlier) != _item_keys(page) or earlier.next_cursor != page.next_cursor:
                    problem = (page.answer, f"the same {method} cursor gave a different page the second time")
            if problem is not None:
                subject, detail = problem
                yield failed(subject, detail)
            elif len(walk.pages) > 1:
                yield passed(walk.pages[-1].answer)


def _invalid_cursor_request(request: Message, ctx: Context) -> bool:
    if not _is_paginated_request(request) or not isinstance(request.params, dict):
        return False
    cursor = request.params.get("cursor", MISSING)
    if cursor is MISSING:
        return False
    probe = ctx.probe(request)
    return cursor in INVALID_CURSORS or (probe is not None and probe.case is cases.INVALID_CURSOR)


@message_check(
    requirements="PAGE-05",
    level=Level.SHOULD,
    subject="answers to invalid cursors",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods=ITEMS,
)
def invalid_cursors_get_invalid_params(message: Message, ctx: Context) -> Finding | None:
    """A list request with an invalid cursor is answered with -32602.

    Triggered by a list request whose ``cursor`` is ``"mcp-assay-invalid-cursor"`` (or
    ``"mcp-conformance-invalid-cursor"``), or any list request sent as the case
    ``invalid-cursor``."""
    request = ctx.log.request_of(message)
    if request is None or not _invalid_cursor_request(request, ctx):
        return None
    if message.kind is Kind.RESULT:
        return failed(message, f"{request.method} with an invalid cursor was served with a result")
    code = error_code(message)
    if code == ErrorCode.INVALID_PARAMS:
        return passed(message)
    return failed(message, f"{request.method} with an invalid cursor got code {code}, expected -32602")


@message_check(
    requirements="PAGE-06",
    level=Level.SHOULD,
    subject="paginated requests with a cursor",
    features={"handshake"},
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
    methods=ITEMS,
)
def cursors_stay_in_their_session(message: Message, ctx: Context) -> Finding | None:
    """A 2025 client does not carry a cursor from one session into another."""
    if not _is_paginated_request(message) or not isinstance(message.params, dict):
        return None
    cursor = message.params.get("cursor", MISSING)
    if not isinstance(cursor, str):
        return None
    same, _, _ = _issued(ctx, message, cursor)
    if not same:
        return None
    session = ctx.log.session(message)
    if any(ctx.log.session(result) == session for result in same):
        return passed(message)
    return failed(message, f"{message.method} reused a cursor issued in another session")
