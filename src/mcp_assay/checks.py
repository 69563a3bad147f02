"""Declaring checks, and judging an exchange log with them.

A check is a pure function over traffic, declared with the requirement IDs it enforces, the
keyword level (which must match the catalogue), the side it judges and its gates: the revision
features it needs, the transports it applies to and the server capability it concerns. Two
shapes exist:

* :func:`message_check` functions see one message at a time (schema validity, envelopes, error
  codes) and are also what the proxy runs live as each exchange finishes;
* :func:`log_check` functions see the whole log (correlation, ordering, cancellation).

Either returns findings built with :func:`passed`, :func:`failed` and :func:`unverified` (and
:func:`not_applicable`, for a reason only the traffic shows, when nothing else was found). The
engine applies the gates, aggregates findings into one :class:`~mcp_assay.verdicts.Verdict` per
check, and turns an exception inside a check into a not-verified verdict instead of a crash. The
same check judges traffic from the proxy, the stdio tap, the active suite or a recording.
"""

from __future__ import annotations

import json
import logging
import shlex
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_assay.errors import CatalogueError
from mcp_assay.jsonrpc import Kind, Message, parser_limit
from mcp_assay.redaction import Redactor
from mcp_assay.spec.features import FEATURES
from mcp_assay.spec.requirements import catalogue
from mcp_assay.spec.revisions import Revision, SpecSet
from mcp_assay.spec.validator import Validation
from mcp_assay.traffic import ExchangeLog, message_key
from mcp_assay.verdicts import Evidence, Level, Outcome, Severity, Side, Source, Verdict
from mcp_assay.wire import EVENTS_LOST, Exchange, HttpExchange, StdioLine, body_text, compact_json

__all__ = [
    "REGISTRY",
    "Check",
    "Context",
    "Finding",
    "Gate",
    "evaluate",
    "failed",
    "log_check",
    "message_check",
    "not_applicable",
    "passed",
    "unverified",
]

log = logging.getLogger(__name__)

TRANSPORTS = frozenset({"http", "stdio"})
MAX_EVIDENCE = 8


# -- findings ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Finding:
    """What a check concluded about one subject."""

    outcome: Outcome
    detail: str = ""
    subject: Message | Exchange | None = None
    blocked_by: str | None = None


def passed(subject: Message | Exchange | None = None, detail: str = "") -> Finding:
    return Finding(Outcome.PASSED, detail, subject)


def failed(subject: Message | Exchange | None, detail: str) -> Finding:
    return Finding(Outcome.FAILED, detail, subject)


def unverified(reason: str, subject: Message | Exchange | None = None, blocked_by: str | None = None) -> Finding:
    return Finding(Outcome.NOT_VERIFIED, reason, subject, blocked_by)


def not_applicable(reason: str) -> Finding:
    """The requirement does not apply to this traffic for a reason only the traffic shows (e.g. the server
    uses no authorization at all); weaker than any other finding, and never evidence of anything."""
    return Finding(Outcome.NOT_APPLICABLE, reason)


Result = Finding | Iterable[Finding] | None


# -- declarations --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Gate:
    """When a check applies at all. Failing a gate means *not applicable*, never *not verified*."""

    features: frozenset[str] = frozenset()
    """Revision features required; ``!name`` requires the feature to be absent."""
    transports: frozenset[str] = TRANSPORTS
    capability: str | None = None
    """A server capability (``tools``, ``prompts``, ``resources``, ``logging``, ``completions``)."""

    def admits(self, revision: Revision | None) -> tuple[bool, str]:
        """Whether messages of this revision are in scope, and if not, why."""
        if not self.features:
            return True, ""
        if revision is None:
            return False, "the traffic could not be attributed to a revision in the window"
        for feature in sorted(self.features):
            wanted = not feature.startswith("!")
            name = feature.lstrip("!")
            if revision.has(name) != wanted:
                what = FEATURES.get(name, name)
                verb = "does not define" if wanted else "defines"
                return False, f"{revision.name} {verb} {name} ({what})"
        return True, ""


@dataclass(frozen=True)
class Check:
    """A registered check."""

    name: str
    title: str
    func: Callable[..., Result]
    scope: str
    """``message`` or ``log``."""
    requirements: tuple[str, ...]
    level: Level
    severity: Severity
    side: Side
    area: str
    gate: Gate
    subject: str
    """What the check judges, in the plural, for "no ... observed" reasons."""
    sent_by: Side | None = None
    kinds: frozenset[Kind] | None = None
    tags: tuple[str, ...] = field(default=())


REGISTRY: dict[str, Check] = {}


def _declare(
    scope: str,
    *,
    requirements: str | Iterable[str],
    level: Level,
    side: Side,
    subject: str,
    features: Iterable[str] = (),
    transports: Iterable[str] = TRANSPORTS,
    capability: str | None = None,
    sent_by: Side | None = None,
    kinds: Iterable[Kind] | None = None,
    area: str | None = None,
    tags: Iterable[str] = (),
) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    ids = (requirements,) if isinstance(requirements, str) else tuple(requirements)
    if not ids:
        raise CatalogueError("a check must cite at least one requirement")
    cat = catalogue()
    entries = [cat[ident] for ident in ids]
    primary = entries[0]
    for entry in entries:
        if level not in entry.levels:
            given = ", ".join(x.value for x in entry.levels)
            raise CatalogueError(f"check cites {entry.id} as {level.value}, but the catalogue gives {given}")
    unknown_features = {name.lstrip("!") for name in features} - set(FEATURES)
    if unknown_features:
        raise CatalogueError(f"unknown revision features {sorted(unknown_features)}")
    unknown_transports = set(transports) - TRANSPORTS
    if unknown_transports:
        raise CatalogueError(f"unknown transports {sorted(unknown_transports)}")
    severity = primary.severity if level is primary.level else level.severity

    def register(func: Callable[..., Result]) -> Callable[..., Result]:
        name = func.__name__
        if name in REGISTRY and REGISTRY[name].func is not func:
            raise CatalogueError(f"two checks are named {name}")
        doc = (func.__doc__ or name.replace("_", " ")).strip().splitlines()[0].strip()
        REGISTRY[name] = Check(
            name=name,
            title=doc,
            func=func,
            scope=scope,
            requirements=ids,
            level=level,
            severity=severity,
            side=side,
            area=area or primary.area,
            gate=Gate(frozenset(features), frozenset(transports), capability),
            subject=subject,
            sent_by=sent_by,
            kinds=frozenset(kinds) if kinds is not None else None,
            tags=tuple(tags),
        )
        return func

    return register


def message_check(**declaration: Any) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Declare a check called as ``func(message, ctx)`` for every message in scope."""
    return _declare("message", **declaration)


def log_check(**declaration: Any) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Declare a check called once as ``func(ctx)`` over the whole log."""
    return _declare("log", **declaration)


# -- context -------------------------------------------------------------------------------------
class Context:
    """What a check may consult: the log, the revisions, settings, and cached validation."""

    def __init__(self, log: ExchangeLog, spec: SpecSet, settings: Mapping[str, Any] | None = None) -> None:
        self.log = log
        self.spec = spec
        self.settings: Mapping[str, Any] = settings or {}
        self._validations: dict[tuple[str, int], Validation] = {}
        self.check: Check | None = None

    def revision(self, message: Message) -> Revision | None:
        """The window revision the message belongs to (``None``: unknown or outside the window)."""
        return self.spec.get(self.log.revision(message))

    def exchange_revision(self, exchange: Exchange) -> Revision | None:
        return self.spec.get(self.log.exchange_revision(exchange.id))

    def validate(self, message: Message) -> Validation | None:
        """Schema validation of a message against its revision (cached); ``None`` if unattributed."""
        revision = self.revision(message)
        if revision is None:
            return None
        key = message_key(message)
        if key not in self._validations:
            self._validations[key] = revision.validator.validate(message, self.log.request_of(message))
        return self._validations[key]

    def in_scope(self, message: Message, check: Check | None = None) -> bool:
        check = check or self.check
        if check is None:
            return True
        return _admitted(check, message, self)[0]

    def messages(self, *, sent_by: Side | None = None, kinds: Iterable[Kind] | None = None) -> Iterator[Message]:
        """Messages that pass the running check's gates, optionally filtered further.

        Messages the active suite made malformed on purpose are left out for checks that judge
        the client side."""
        wanted = frozenset(kinds) if kinds is not None else None
        judging_client = self.check is not None and self.check.side is not Side.SERVER
        for message in self.log.messages():
            if sent_by is not None and message.sender is not sent_by:
                continue
            if wanted is not None and message.kind not in wanted:
                continue
            if judging_client and self.deliberately_invalid(message):
                continue
            if self.in_scope(message):
                yield message

    def exchanges(self) -> Iterator[Exchange]:
        """Exchanges (any kind) that pass the running check's revision and transport gates."""
        check = self.check
        for exchange in self.log:
            if check is not None:
                if exchange.transport and exchange.transport not in check.gate.transports:
                    continue
                if not check.gate.admits(self.exchange_revision(exchange))[0]:
                    continue
            yield exchange

    def deliberately_invalid(self, message: Message) -> bool:
        """True for a message the active suite sent malformed on purpose (never held against the client)."""
        if message.sender is not Side.CLIENT:
            return False
        exchange = self.log.get(message.exchange)
        probe = getattr(exchange, "probe", None)
        return bool(probe and probe.get("invalid"))

    def probe(self, message: Message | Exchange) -> Mapping[str, Any] | None:
        """The probe tag of the exchange that carried a message (``None`` for ordinary traffic)."""
        exchange = self.log.get(message.exchange) if isinstance(message, Message) else message
        probe = getattr(exchange, "probe", None)
        return probe if isinstance(probe, Mapping) else None

    def capabilities(self, message: Message) -> dict[str, Any] | None:
        advertised = self.log.server_capabilities(message)
        return advertised.value if advertised is not None else None


def _admitted(check: Check, message: Message, ctx: Context) -> tuple[bool, str]:
    if message.transport not in check.gate.transports:
        return False, f"{message.transport} has no such requirement"
    named = ctx.log.revision(message)
    revision = ctx.spec.get(named)
    if named is not None and revision is None:
        return False, f"revision {named} is outside the window ({ctx.spec.window_names()})"
    ok, why = check.gate.admits(revision)
    if not ok:
        return False, why
    if check.gate.capability:
        caps = ctx.capabilities(message)
        if caps is not None and check.gate.capability not in caps:
            listed = json.dumps(sorted(caps))
            return False, f"the server does not advertise the {check.gate.capability} capability: {listed}"
    return True, ""


# -- evidence ------------------------------------------------------------------------------------
def _http_label(exchange: HttpExchange) -> str:
    request = exchange.request
    head = f"{request.method} {request.path}"
    if exchange.response is not None:
        content_type = exchange.response.content_type or "no content type"
        head += f" → {exchange.response.status} {content_type}"
    elif exchange.ending is not None:
        head += f" → {exchange.ending.reason.value}"
    return head


def curl_command(exchange: HttpExchange, redactor: Redactor) -> str:
    request = exchange.request
    parts = ["curl", "-sS", "-i", "-X", request.method, redactor.url(request.url)]
    for name, value in request.headers:
        if name.lower() in ("host", "content-length", "connection", "accept-encoding", "user-agent"):
            continue
        parts += ["-H", f"{name}: {redactor.header(name, value)}"]
    if request.body:
        parts += ["--data-binary", redactor.text(body_text(request.body, limit=100_000))]
    return " ".join(shlex.quote(part) for part in parts)


def make_evidence(subject: Message | Exchange | None, detail: str, ctx: Context, redactor: Redactor) -> Evidence:
    message = subject if isinstance(subject, Message) else None
    exchange = ctx.log.get(message.exchange) if message is not None else subject
    revision = ctx.log.revision(message) if message is not None else None
    if isinstance(exchange, HttpExchange):
        revision = revision or ctx.log.exchange_revision(exchange.id)
    summary_parts = []
    reproduction = ""
    if isinstance(exchange, HttpExchange):
        summary_parts.append(_http_label(exchange))
        if exchange.probe is not None:
            reproduction = curl_command(exchange, redactor)
    elif isinstance(exchange, StdioLine):
        arrow = "client → server" if exchange.sender is Side.CLIENT else "server → client"
        summary_parts.append(f"stdio {arrow}")
        source = exchange
        if exchange.sender is not Side.CLIENT and message is not None:
            # an answer is reproduced by the request line it answers
            request = ctx.log.request_of(message)
            line = ctx.log.get(request.exchange) if request is not None else None
            source = line if isinstance(line, StdioLine) else exchange
        if source.probe is not None:
            reproduction = redactor.text(body_text(source.raw, limit=100_000)).rstrip("\n")
    elif exchange is not None:
        summary_parts.append(f"{type(exchange).__name__} {exchange.id}")
    if message is not None:
        summary_parts.append(message.describe())
        excerpt = (
            compact_json(message.payload)
            if message.payload is not None and message.kind is not Kind.UNPARSEABLE
            else body_text(message.raw, 600)
        )
    elif isinstance(exchange, HttpExchange) and exchange.response is not None:
        excerpt = body_text(exchange.response.body, 600)
    else:
        excerpt = ""
    return Evidence(
        summary=redactor.text(" · ".join(summary_parts)) or "the traffic as a whole",
        detail=redactor.text(detail),
        exchange=exchange.id if exchange is not None else None,
        message=message.index if message is not None else None,
        excerpt=redactor.text(excerpt),
        reproduction=reproduction,
        time=message.time if message is not None else getattr(exchange, "time", None),
        revision=revision,
    )


# -- evaluation ----------------------------------------------------------------------------------
def _normalise(result: Result) -> list[Finding]:
    if result is None:
        return []
    if isinstance(result, Finding):
        return [result]
    return [item for item in result if item is not None]


def _source_of(findings: list[Finding], ctx: Context, default: Source) -> Source:
    for finding in findings:
        subject = finding.subject
        exchange = ctx.log.get(subject.exchange) if isinstance(subject, Message) else subject
        if exchange is not None and getattr(exchange, "probe", None) is not None:
            return Source.ACTIVE
    return default


def _verdict(check: Check, outcome: Outcome, source: Source, reason: str, **extra: Any) -> Verdict:
    return Verdict(
        check=check.name,
        title=check.title,
        requirements=check.requirements,
        level=check.level,
        severity=check.severity,
        side=check.side,
        area=check.area,
        outcome=outcome,
        source=source,
        reason=reason,
        tags=check.tags,
        **extra,
    )


def _judge(check: Check, ctx: Context, redactor: Redactor, default_source: Source) -> Verdict:
    messages = ctx.log.messages()
    gated: Counter[str] = Counter()
    in_scope = 0
    findings: list[Finding] = []
    for message in messages:
        ok, why = _admitted(check, message, ctx)
        if not ok:
            gated[why] += 1
            continue
        in_scope += 1
        if check.scope != "message":
            continue
        if check.sent_by is not None and message.sender is not check.sent_by:
            continue
        if check.kinds is not None and message.kind not in check.kinds:
            continue
        if check.side is not Side.SERVER and ctx.deliberately_invalid(message):
            continue
        findings.extend(_normalise(check.func(message, ctx)))
    if check.scope == "log":
        # observations (audit lines, stderr text, witness reads) carry no traffic of their own, so
        # they never make a log check applicable to a capture that has no traffic in its scope
        # and a capability gate can only be judged on messages, so bare exchanges do not count then
        exchanges_in_scope = (
            0 if check.gate.capability else sum(1 for exchange in ctx.exchanges() if exchange.transport)
        )
        if in_scope or exchanges_in_scope:
            findings.extend(_normalise(check.func(ctx)))
        in_scope = in_scope or exchanges_in_scope
    if not messages and not len(ctx.log):
        return _verdict(check, Outcome.NOT_VERIFIED, default_source, "no MCP traffic was captured")
    if in_scope == 0:
        reason = gated.most_common(1)[0][0] if gated else "nothing in the traffic falls under this requirement"
        return _verdict(check, Outcome.NOT_APPLICABLE, default_source, reason)
    return _aggregate(check, findings, ctx, redactor, default_source)


def _capture_gaps(findings: list[Finding], ctx: Context) -> list[Finding]:
    """A failure about an exchange whose event stream the capture did not keep is not verified instead:
    what the stream carried is unknown, and a reader of another tool's capture must not guess it. So is
    one about an exchange holding a message mcp-assay's parser could not read (a limit of the tool)."""
    kept = []
    unread: dict[str, str | None] = {}
    for finding in findings:
        subject = finding.subject
        exchange = ctx.log.get(subject.exchange) if isinstance(subject, Message) else subject
        if finding.outcome is Outcome.FAILED and isinstance(exchange, HttpExchange) and exchange.events_lost:
            finding = unverified(f"{finding.detail}; but {EVENTS_LOST}, so this cannot be judged", subject)
        if finding.outcome is Outcome.FAILED and exchange is not None:
            if exchange.id not in unread:
                unread[exchange.id] = _unread(exchange)
            limit = unread[exchange.id]
            if limit is not None:
                detail = f"{finding.detail}; but mcp-assay could not read a message there ({limit})"
                finding = unverified(detail, subject)
        kept.append(finding)
    return kept


def _unread(exchange: Exchange) -> str | None:
    """Why a message of ``exchange`` could not be read by mcp-assay's parser, if one could not."""
    for message in exchange.messages:
        limit = parser_limit(message)
        if limit is not None:
            return limit
    return None


def _aggregate(check: Check, findings: list[Finding], ctx: Context, redactor: Redactor, default: Source) -> Verdict:
    findings = _capture_gaps(findings, ctx)
    source = _source_of(findings, ctx, default)
    failures = [finding for finding in findings if finding.outcome is Outcome.FAILED]
    passes = [finding for finding in findings if finding.outcome is Outcome.PASSED]
    pending = [finding for finding in findings if finding.outcome is Outcome.NOT_VERIFIED]
    judged = len(failures) + len(passes)
    revisions = sorted(
        {
            ctx.log.revision(finding.subject) or ""
            for finding in findings
            if isinstance(finding.subject, Message) and ctx.log.revision(finding.subject)
        }
    )
    common: dict[str, Any] = {"judged": judged, "revisions": tuple(revisions)}
    if failures:
        first = redactor.text(failures[0].detail)
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        evidence = tuple(make_evidence(f.subject, f.detail, ctx, redactor) for f in failures[:MAX_EVIDENCE])
        return _verdict(
            check, Outcome.FAILED, _source_of(failures, ctx, default), first + more,
            evidence=evidence, violations=len(failures), **common,
        )  # fmt: skip
    if passes:
        sample = passes[-1]
        reason = f"{len(passes)} {check.subject} judged" if not sample.detail else sample.detail
        evidence = (make_evidence(sample.subject, sample.detail, ctx, redactor),) if sample.subject is not None else ()
        return _verdict(check, Outcome.PASSED, source, redactor.text(reason), evidence=evidence, **common)
    if pending:
        first_pending = pending[0]
        evidence = (
            (make_evidence(first_pending.subject, first_pending.detail, ctx, redactor),)
            if first_pending.subject is not None
            else ()
        )
        return _verdict(
            check, Outcome.NOT_VERIFIED, source, redactor.text(first_pending.detail),
            evidence=evidence, blocked_by=first_pending.blocked_by, **common,
        )  # fmt: skip
    inapplicable = [finding for finding in findings if finding.outcome is Outcome.NOT_APPLICABLE]
    if inapplicable:
        return _verdict(check, Outcome.NOT_APPLICABLE, source, redactor.text(inapplicable[0].detail), **common)
    return _verdict(check, Outcome.NOT_VERIFIED, source, f"no {check.subject} observed in the traffic", **common)


def evaluate(
    log: ExchangeLog,
    spec: SpecSet,
    *,
    checks: Iterable[Check] | None = None,
    settings: Mapping[str, Any] | None = None,
    redactor: Redactor | None = None,
    source: Source = Source.PASSIVE,
) -> list[Verdict]:
    """Judge ``log`` with every registered check (or the ones given); one verdict per check."""
    from mcp_assay.spec import rules  # noqa: F401 - importing registers the rule modules

    redactor = redactor or Redactor()
    for exchange in log.http_exchanges():
        for name, value in exchange.request.headers:
            redactor.learn_header(name, value)
        redactor.learn_url(exchange.request.url)
    ctx = Context(log, spec, settings)
    verdicts = []
    for check in checks if checks is not None else list(REGISTRY.values()):
        ctx.check = check
        try:
            verdicts.append(_judge(check, ctx, redactor, source))
        except Exception as exc:  # a defect in a check must never stop the report
            log_name = f"{type(exc).__name__}: {exc}"
            logging.getLogger(__name__).exception("check %s raised", check.name)
            verdicts.append(
                _verdict(
                    check,
                    Outcome.NOT_VERIFIED,
                    source,
                    f"the check itself failed ({redactor.text(log_name)})",
                )
            )
        finally:
            ctx.check = None
    return verdicts
