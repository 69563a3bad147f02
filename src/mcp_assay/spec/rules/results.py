"""The result envelope and caching hints (RES-): what every 2026 result carries besides its payload.

A 2026-07-28 result names its ``resultType`` and the server that produced it; discover, list and
read results say how long and for whom they may be cached (``ttlMs``, ``cacheScope``), the pages of
one list walk agree on the scope, and interim ``input_required`` results carry no hints. All these
rules are gated on the revision's schema: a 2025-11-25 result has no envelope, so a legacy server's
results are never held to it (RES-03 is a rule for this tool, and these gates are how it keeps it).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.checks import Every, Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import is_int
from mcp_assay.spec.rules.shared.envelopes import answer_to, canonical, client_capabilities, is_probe, place_of
from mcp_assay.spec.rules.shared.headers import request_headers
from mcp_assay.spec.rules.shared.reads import ANY_RESULT
from mcp_assay.spec.rules.versions._eras import advertised_discover
from mcp_assay.vocabulary.protocol import HeaderKey, MetaKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import HttpExchange

CORE_RESULT_TYPES = ("complete", "input_required")
SCOPES = ("public", "private")

_RESULTS: dict[str, Any] = {"sent_by": Side.SERVER, "kinds": {Kind.RESULT}}


def _result(message: Message) -> dict[str, Any] | None:
    return message.result if isinstance(message.result, dict) else None


def cacheable_methods(ctx: Context, message: Message) -> frozenset[str]:
    """Methods whose result definition requires ttlMs in the message's revision (read from the schema)."""
    revision = ctx.revision(message)
    if revision is None:
        return frozenset()
    validator = revision.validator
    held = _CACHEABLE.get(id(validator))
    if held is not None and held[0] is validator:
        return held[1]
    methods = set()
    for method, definition in validator.result_defs.items():
        body = validator.defs.get(definition, {})
        if isinstance(body, dict) and "ttlMs" in body.get("required", []):
            methods.add(method)
    if len(_CACHEABLE) >= 64:  # a process that loads the revisions again and again (tests) holds few of them
        _CACHEABLE.clear()
    _CACHEABLE[id(validator)] = (validator, frozenset(methods))
    return frozenset(methods)


_CACHEABLE: dict[int, tuple[object, frozenset[str]]] = {}
"""What :func:`cacheable_methods` read from each revision's schema (held with its validator, so an id stays its
own): a revision's schema never changes, and the rules ask for every result."""


def _method_of(message: Message, ctx: Context) -> str | None:
    request = ctx.log.request_of(message)
    return request.method if request is not None else None


# -- RES-01, RES-02, RES-05: the envelope ---------------------------------------------------------
@message_check(
    requirements="RES-01",
    level=Level.MUST,
    subject="results",
    features={"result_envelope"},
    **_RESULTS,
    methods=ANY_RESULT,
)
def results_name_their_result_type(message: Message, ctx: Context) -> Finding | None:
    """Every 2026 result carries a string resultType, empty results included."""
    result = _result(message)
    if result is None:
        return None  # a non-object result is RPC-06's finding
    if "resultType" not in result:
        return failed(message, f"{message.describe()} has no resultType")
    if not isinstance(result["resultType"], str):
        return failed(message, f"resultType is a {type(result['resultType']).__name__}, not a string")
    return passed(message)


def _extensions(value: Any) -> set[str]:
    if isinstance(value, dict) and isinstance(value.get("extensions"), dict):
        return set(value["extensions"])
    return set()


@message_check(
    requirements=("RES-02", "VER-19"),
    level=Level.MUST,
    subject="results",
    features={"result_envelope"},
    **_RESULTS,
    side=Side.SERVER,
    because=(
        "judges the results a server sends; the client half of VER-19 (declaring extensions) is "
        "judged with the envelope"
    ),
    methods=ANY_RESULT,
)
def result_types_are_core_or_negotiated(message: Message, ctx: Context) -> Finding | None:
    """resultType is complete or input_required, or a value of an extension both sides declared."""
    result = _result(message)
    kind = result.get("resultType") if result is not None else None
    if not isinstance(kind, str):
        return None
    if kind in CORE_RESULT_TYPES:
        return passed(message)
    request = ctx.log.request_of(message)
    client = _extensions(client_capabilities(request)) if request is not None else set()
    discover = advertised_discover(ctx, message)
    server = _extensions(discover.result.get("capabilities")) if discover is not None and _result(discover) else set()
    if not server:
        server = _extensions(ctx.capabilities(message))
    shared = client & server
    if shared:
        return unverified(
            f"resultType {kind!r} is not a core type; it may belong to the extension(s) {', '.join(sorted(shared))} "
            "both sides declared",
            message,
        )
    lacking = "the client" if not client else "the server" if not server else "the two sides together"
    return failed(
        message,
        f"resultType {kind!r} is neither complete nor input_required, and {lacking} declared no extension defining it",
    )


@message_check(
    requirements="RES-05",
    level=Level.SHOULD,
    subject="results",
    features={"result_envelope"},
    **_RESULTS,
    methods=ANY_RESULT,
)
def results_identify_the_server(message: Message, ctx: Context) -> Finding | None:
    """Every 2026 result names the server in _meta serverInfo, with string name and version."""
    result = _result(message)
    if result is None:
        return None
    meta = result.get("_meta")
    info = meta.get(MetaKey.SERVER_INFO) if isinstance(meta, dict) else None
    if not isinstance(info, dict):
        return failed(message, f"{message.describe()} has no {MetaKey.SERVER_INFO} in _meta")
    missing = [field for field in ("name", "version") if not isinstance(info.get(field), str)]
    if missing:
        return failed(message, f"{MetaKey.SERVER_INFO} lacks a string {' and '.join(missing)}")
    return passed(message)


# -- RES-06 .. RES-09: the caching hints -----------------------------------------------------------
@message_check(
    requirements="RES-06",
    level=Level.MUST,
    subject="cacheable results",
    features={"cache_hints"},
    **_RESULTS,
    methods=ANY_RESULT,
)
def cacheable_results_carry_ttl_and_scope(message: Message, ctx: Context) -> Finding | None:
    """Complete discover, list and read results carry both ttlMs and cacheScope."""
    result = _result(message)
    method = _method_of(message, ctx)
    if result is None or method not in cacheable_methods(ctx, message) or result.get("resultType") != "complete":
        return None
    missing = [field for field in ("ttlMs", "cacheScope") if field not in result]
    if missing:
        return failed(message, f"the {method} result lacks {' and '.join(missing)}")
    return passed(message)


def _describe_number(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, float):
        return f"{value!r}, not an integer"
    if isinstance(value, str):
        return f"the string {value!r}"
    if value is None:
        return "null"
    return repr(value)


@message_check(
    requirements="RES-07",
    level=Level.MUST,
    subject="results with ttlMs",
    features={"cache_hints"},
    **_RESULTS,
    methods=ANY_RESULT,
)
def ttl_is_a_non_negative_integer(message: Message, ctx: Context) -> Finding | None:
    """ttlMs, when present, is an integer number of milliseconds >= 0."""
    result = _result(message)
    if result is None or "ttlMs" not in result:
        return None
    ttl = result["ttlMs"]
    if not is_int(ttl):
        return failed(message, f"ttlMs is {_describe_number(ttl)}")
    if ttl < 0:
        return failed(message, f"ttlMs is {ttl}")
    return passed(message)


@message_check(
    requirements="RES-08",
    level=Level.MUST,
    subject="results with cacheScope",
    features={"cache_hints"},
    **_RESULTS,
    methods=ANY_RESULT,
)
def cache_scope_is_public_or_private(message: Message, ctx: Context) -> Finding | None:
    """cacheScope, when present, is exactly "public" or "private"."""
    result = _result(message)
    if result is None or "cacheScope" not in result:
        return None
    scope = result["cacheScope"]
    if scope in SCOPES:
        return passed(message)
    return failed(message, f'cacheScope is {canonical(scope)}; expected "public" or "private"')


@message_check(
    requirements="RES-09",
    level=Level.SHOULD_NOT,
    subject="input_required results",
    features={"input_required"},
    **_RESULTS,
    methods=ANY_RESULT,
)
def interim_results_carry_no_cache_hints(message: Message, ctx: Context) -> Finding | None:
    """input_required results carry neither ttlMs nor cacheScope."""
    result = _result(message)
    if result is None or result.get("resultType") != "input_required":
        return None
    hints = [field for field in ("ttlMs", "cacheScope") if field in result]
    if hints:
        return failed(
            message, f"an input_required result carries {' and '.join(hints)}; interim results are not cacheable"
        )
    return passed(message)


# -- RES-10 .. RES-12: across results -------------------------------------------------------------
def _list_walks(ctx: Context) -> list[list[Message]]:
    """Results of list requests grouped into walks: a page requested with another page's nextCursor joins its walk."""
    walks: list[list[Message]] = []
    walk_of_cursor: dict[tuple[str, str, str], int] = {}
    for request in ctx.log.messages():
        if request.kind is not Kind.REQUEST or request.sender is not Side.CLIENT or request.method is None:
            continue
        if not request.method.endswith("/list"):
            continue
        answer = answer_to(request, ctx)
        result = _result(answer) if answer is not None and answer.kind is Kind.RESULT else None
        if answer is None or result is None:
            continue
        place = place_of(request, ctx)
        params = request.params if isinstance(request.params, dict) else {}
        cursor = params.get("cursor")
        index = walk_of_cursor.get((place, request.method, cursor)) if isinstance(cursor, str) else None
        if index is None:
            index = len(walks)
            walks.append([])
        walks[index].append(answer)
        following = result.get("nextCursor")
        if isinstance(following, str):
            walk_of_cursor[(place, request.method, following)] = index
    return walks


@log_check(
    requirements="RES-10",
    level=Level.MUST,
    subject="multi-page list walks",
    features={"cache_hints"},
    follows=Every("a cursor may continue a list of any method, an extension's included"),
)
def pages_of_one_list_share_a_cache_scope(ctx: Context) -> Iterator[Finding]:
    """All pages of one paginated list walk (linked by nextCursor) carry the same cacheScope."""
    for walk in _list_walks(ctx):
        scoped = [(page, page.result.get("cacheScope")) for page in walk if isinstance(page.result, dict)]
        scoped = [(page, scope) for page, scope in scoped if isinstance(scope, str)]
        if len(scoped) < 2:
            continue
        first_scope = scoped[0][1]
        different = [(page, scope) for page, scope in scoped[1:] if scope != first_scope]
        if different:
            page, scope = different[0]
            yield failed(
                page, f"this page has cacheScope {scope!r}, but the first page of the walk had {first_scope!r}"
            )
        else:
            yield passed(scoped[-1][0])


def _authorization(message: Message, ctx: Context) -> str | None:
    exchange = ctx.log.get(message.exchange)
    return exchange.request.headers.get(HeaderKey.AUTHORIZATION) if isinstance(exchange, HttpExchange) else None


def _payload(result: dict[str, Any]) -> str:
    return canonical({key: value for key, value in result.items() if key not in ("_meta", "ttlMs", "cacheScope")})


def _without_meta(params: Any) -> str:
    if not isinstance(params, dict):
        return canonical(params)
    return canonical({key: value for key, value in params.items() if key != "_meta"})


@log_check(
    requirements="RES-11",
    level=Level.SHOULD,
    subject="requests repeated under two authorization contexts",
    transports={"http"},
    features={"cache_hints"},
    because=(
        "the same request under two authorization contexts is only seen over HTTP, where credentials travel per request"
    ),
    follows=Every("a result of any method may be marked public"),
)
def public_results_do_not_depend_on_the_caller(ctx: Context) -> Iterator[Finding]:
    """A result marked "public" is the same for every authorization context; caller-specific payloads are "private".

    Triggered when one request is seen under two different Authorization headers (the active
    suite does this when given two credentials)."""
    if len({None, *(value for _, value in request_headers(ctx, HeaderKey.AUTHORIZATION))}) < 2:
        return  # every request of the window went without Authorization: no request is seen under two
    groups: dict[tuple[str, str, str], list[tuple[str | None, Message]]] = defaultdict(list)
    for request in ctx.log.messages():
        if request.kind is not Kind.REQUEST or request.sender is not Side.CLIENT or request.method is None:
            continue
        answer = answer_to(request, ctx)
        if answer is None or answer.kind is not Kind.RESULT or _result(answer) is None:
            continue
        key = (place_of(request, ctx), request.method, _without_meta(request.params))
        groups[key].append((_authorization(request, ctx), answer))
    for (_place, method, _params), answers in groups.items():
        if len({context for context, _ in answers}) < 2:
            continue
        public = [
            answer
            for _, answer in answers
            if isinstance(answer.result, dict) and answer.result.get("cacheScope") == "public"
        ]
        if not public:
            continue
        payloads = {_payload(answer.result) for _, answer in answers if isinstance(answer.result, dict)}
        if len(payloads) > 1:
            yield failed(public[0], f'{method} returns caller-specific payloads but is marked cacheScope "public"')
        else:
            yield passed(public[-1])


POLL_TOLERANCE = 0.1
"""How regular a polling rhythm must be (relative spread of intervals) to count as a timer."""


@log_check(
    requirements="RES-12",
    level=Level.SHOULD_NOT,
    subject="repeated cacheable requests",
    features={"cache_hints"},
    follows=Every("a cacheable result of any method carries a ttlMs a client might poll on"),
)
def clients_do_not_poll_on_the_ttl(ctx: Context) -> Iterator[Finding]:
    """The client does not re-request a cacheable result on a fixed timer equal to its ttlMs (heuristic).

    Four or more identical requests at a near-constant interval close to the ttlMs of the previous
    answer, with no list-changed notification in between, look like a TTL-driven poll without
    jitter."""
    series: dict[tuple[str, str, str], list[Message]] = defaultdict(list)
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        if request.method is None or is_probe(request, ctx) or request.method not in cacheable_methods(ctx, request):
            continue
        series[(place_of(request, ctx), request.method, _without_meta(request.params))].append(request)
    changes = [m.time for m in ctx.log.messages() if m.method is not None and m.method.endswith("list_changed")]
    for (_place, method, _params), requests in series.items():
        if len(requests) < 2:
            continue
        if len(requests) < 4:
            yield passed(requests[-1])
            continue
        gaps = [b.time - a.time for a, b in zip(requests, requests[1:], strict=False)]
        mean = sum(gaps) / len(gaps)
        answer = answer_to(requests[0], ctx)
        ttl = answer.result.get("ttlMs") if answer is not None and isinstance(answer.result, dict) else None
        regular = mean > 0 and all(abs(gap - mean) <= POLL_TOLERANCE * mean for gap in gaps)
        on_ttl = (
            isinstance(ttl, int)
            and not isinstance(ttl, bool)
            and ttl > 0
            and abs(mean - ttl / 1000) <= 0.2 * (ttl / 1000)
        )
        triggered = any(requests[0].time < when < requests[-1].time for when in changes)
        if regular and on_ttl and not triggered:
            yield failed(
                requests[-1],
                f"the client re-sent {method} {len(requests)} times every {mean:.2f} s, its ttlMs, with no jitter",
            )
        else:
            yield passed(requests[-1])
