"""Declaring checks: the requirement a rule enforces, and when it applies at all.

A check is a pure function over traffic, declared against requirement IDs of the catalogue
(``requirements.yaml``). The catalogue already says whom a requirement binds and on which
transports it exists, so a declaration does not repeat it: the side and the transports come from
the cited entries. A check that judges only part of a requirement (the server's half of one that
binds both sides, the stdio case of one that holds on both transports) narrows them and says why
with ``because=``; restating the catalogue, or narrowing without a reason, fails at import. The
keyword ``level`` is restated on purpose (it is what a reader of the rule needs in front of them)
and must be one the catalogue gives.

Two shapes exist, and each declares what it reads (the decorators' keyword arguments are typed, so mypy checks
every declaration, and leaving it out fails at import):

* :func:`message_check` functions see one message at a time (schema validity, envelopes, error
  codes); the engine runs them as each exchange finishes, which is also what the proxy prints live.
  Besides the sender and the kinds of message it judges, one declares the ``methods`` it judges (a
  request's or notification's own, an answer's request's): the engine routes each message only to the
  checks that asked for it, and ``tests/spec/test_dispatch.py`` runs every body on every recorded
  message to prove that a declaration keeps nothing away that its body would have judged;
* :func:`log_check` functions see the exchange log (correlation, ordering, cancellation). One declares
  what it ``follows`` (the methods of the requests or notifications it reads, stdio lines, process
  exits, observations of a kind) and runs only over the windows that hold some of it.

A check that needs a message of any method, or every window, declares ``Every(reason)`` instead (the
common reasons are in :mod:`mcp_assay.spec.rules.shared.reads`); ``tests/spec/test_declarations.py``
holds every registered check to a declaration.

Either returns findings built with :func:`passed`, :func:`failed` and :func:`unverified` (and
:func:`not_applicable`, for a reason only the traffic shows, when nothing else was found); a rule
that passes many subjects at once hands them over with :func:`passed_each`, counted without a
finding each. The
engine (:mod:`mcp_assay.spec.engine`) applies the gates and turns findings into verdicts.

Where the catalogue's gate grades a requirement lower for some targets (AUTH-AND-BEHAVIOUR §0.3.3:
a server that protects itself with a scheme of its own, not MCP's OAuth profile, is given the
profile's items as recommendations), the entry names a :class:`Grading` in ``graded``; the rule
module that knows the condition registers it with :func:`grading`, and the engine grades each
failure the condition holds for. Where the catalogue marks one clause of an entry inferred
(:class:`~mcp_assay.spec.requirements.Clause`), a check declares the clauses it judges
(``clauses=``) and names the one a failure is about (``failed(..., clause=NAME)``); the engine
grades that failure at the clause's severity. No rule grades its own findings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from mcp_assay.spec.features import FEATURES
from mcp_assay.spec.requirements import Requirement, catalogue
from mcp_assay.spec.revisions import Revision
from mcp_assay.vocabulary.errors import CatalogueError
from mcp_assay.vocabulary.verdicts import Level, Outcome, Party, Severity, Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import Exchange, Observation, ProcessExit, StdioLine
from mcp_assay.wire.slots import slot_setters

__all__ = [
    "GRADINGS",
    "PROCESS_EXITS",
    "REGISTRY",
    "STDIO_LINES",
    "TRANSPORTS",
    "Check",
    "Declaration",
    "Every",
    "Finding",
    "Gate",
    "Grade",
    "Grading",
    "Passes",
    "Result",
    "accepts_method",
    "failed",
    "follows_any",
    "forget_passes",
    "grading",
    "log_check",
    "message_check",
    "not_applicable",
    "observed",
    "passed",
    "passed_each",
    "routed_method",
    "unverified",
    "window_follows",
]

TRANSPORTS = frozenset({"http", "stdio"})


# -- findings ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Grade:
    """The lower severity one failure counts at, and the condition of the catalogue's gate that allows it."""

    severity: Severity
    reason: str


@dataclass(frozen=True, slots=True, init=False)
class Finding:
    """What a check concluded about one subject (a long capture makes one per failure, so :meth:`__init__` is the
    dataclass's written out, each field set through its slot: see :mod:`~mcp_assay.wire.slots`)."""

    outcome: Outcome
    detail: str = ""
    subject: Message | Exchange | None = None
    blocked_by: str | None = None
    grade: Grade | None = None
    """Set by the engine on a failure a :class:`Grading` of the check's requirements holds for."""
    clause: str | None = None
    """The clause of the cited requirement a failure is about, when the catalogue qualifies it on its own."""
    related: tuple[Message | Exchange, ...] = ()
    """Other traffic the finding rests on, shown beside its subject (a gateway's rules name what crossed the
    other hop: the upstream's answer next to what the client got)."""
    party: Party | None = None
    """Set by the engine on a failure, when the judge was told who is at fault for what (a gateway's hops)."""

    def __init__(
        self,
        outcome: Outcome,
        detail: str = "",
        subject: Message | Exchange | None = None,
        blocked_by: str | None = None,
        grade: Grade | None = None,
        clause: str | None = None,
        related: tuple[Message | Exchange, ...] = (),
        party: Party | None = None,
    ) -> None:
        set_outcome, set_detail, set_subject, set_blocked_by, set_grade, set_clause, set_related, set_party = (
            _FINDING_FIELDS
        )
        set_outcome(self, outcome)
        set_detail(self, detail)
        set_subject(self, subject)
        set_blocked_by(self, blocked_by)
        set_grade(self, grade)
        set_clause(self, clause)
        set_related(self, related)
        set_party(self, party)


_FINDING_FIELDS = slot_setters(
    Finding, "outcome", "detail", "subject", "blocked_by", "grade", "clause", "related", "party"
)


@dataclass(frozen=True, slots=True)
class Passes:
    """Subjects that passed, handed over at once: the engine counts them and makes a :class:`Finding` only for
    the pass a verdict keeps (the latest), so a rule over a long log builds no object per pass."""

    subjects: tuple[Message | Exchange, ...]
    detail: str = ""
    outcome = Outcome.PASSED


def passed(
    subject: Message | Exchange | None = None, detail: str = "", *, related: Iterable[Message | Exchange] = ()
) -> Finding:
    if subject is not None and not detail and related == ():
        # a plain pass is the commonest finding by far, and a message passes a score of checks: one finding each
        last = _LAST_PASS[0]
        if last.subject is subject:  # the message checks pass one message after another
            return last
        kept = _PLAIN_PASSES.get(id(subject))  # the log checks, one window's subjects after another
        if kept is None or kept.subject is not subject:
            if len(_PLAIN_PASSES) >= _KEPT_PASSES:
                _PLAIN_PASSES.clear()
            kept = _PLAIN_PASSES[id(subject)] = Finding(Outcome.PASSED, "", subject)
        _LAST_PASS[0] = kept
        return kept
    return Finding(Outcome.PASSED, detail, subject, related=tuple(related))


_PLAIN_PASSES: dict[int, Finding] = {}
"""Plain passes (no detail, nothing related) of the subjects judged lately, each held with its subject (so an id
stays its subject's): findings are values, and every check that passes a subject may hand over the same one. Log
checks pass a window's messages one check after another, so the passes of a whole window are kept: the engine lets
go of them as the window ends (:func:`forget_passes`), and a bound holds them where nothing does."""
_KEPT_PASSES = 65_536


_NO_PASS = Finding(Outcome.PASSED)
_LAST_PASS: list[Finding] = [_NO_PASS]
"""The plain pass made or found last (a subject's checks ask one after another): looked at before the others."""


def forget_passes() -> None:
    """Let go of the plain passes kept (the engine calls it as a window ends, whose subjects go with it)."""
    _PLAIN_PASSES.clear()
    _LAST_PASS[0] = _NO_PASS


def passed_each(subjects: Iterable[Message | Exchange], detail: str = "") -> Passes:
    """Every one of ``subjects`` passed (in the order given): as many passes as ``passed`` for each, counted."""
    return Passes(tuple(subjects), detail)


def failed(
    subject: Message | Exchange | None,
    detail: str,
    *,
    clause: str | None = None,
    related: Iterable[Message | Exchange] = (),
) -> Finding:
    """A failure; ``clause`` names the part of the requirement it is about where the catalogue qualifies one,
    ``related`` other traffic it rests on (what crossed a gateway's other hop)."""
    return Finding(Outcome.FAILED, detail, subject, None, None, clause, related if related == () else tuple(related))


def unverified(reason: str, subject: Message | Exchange | None = None, blocked_by: str | None = None) -> Finding:
    return Finding(Outcome.NOT_VERIFIED, reason, subject, blocked_by)


def not_applicable(reason: str) -> Finding:
    """The requirement does not apply to this traffic for a reason only the traffic shows (e.g. the server
    uses no authorization at all); weaker than any other finding, and never evidence of anything."""
    return Finding(Outcome.NOT_APPLICABLE, reason)


Result = Finding | Passes | Iterable[Finding | Passes] | None


# -- gradings ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Grading:
    """A condition under which the catalogue grades its requirements lower, for the targets it holds for."""

    name: str
    severity: Severity
    """The most a failure counts at where the condition holds (a failure already lower stays lower)."""
    holds: Callable[[Any, Finding], str | None]
    """Why the condition holds for one failure (the reason the report gives), or ``None``; called with the
    :class:`~mcp_assay.spec.context.Context` (which imports this module, hence ``Any``) and the failure."""


GRADINGS: dict[str, Grading] = {}


def grading(name: str, severity: Severity) -> Callable[[Callable[[Any, Finding], str | None]], Any]:
    """Register the condition a catalogue entry's ``graded`` names (once, by the rule module that knows it)."""

    def register(func: Callable[[Any, Finding], str | None]) -> Callable[[Any, Finding], str | None]:
        if name in GRADINGS and GRADINGS[name].holds is not func:
            raise CatalogueError(f"two gradings are named {name}")
        GRADINGS[name] = Grading(name, severity, func)
        return func

    return register


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
    narrowed: str | None = None
    """Why the check's side or transports differ from what the catalogue gives its requirements."""
    graded: tuple[str, ...] = ()
    """The :class:`Grading` names every requirement the check cites carries: conditions under which a failure
    of it counts lower (a failure of a requirement that carries none counts in full)."""
    methods: frozenset[str] | None = None
    """The methods a message check judges (:func:`routed_method`): it is never called on a message of another
    method (``None``: any); a name ending in ``/*`` stands for a family (``notifications/*``)."""
    follows: frozenset[str] | None = None
    """What a log check follows (:func:`window_follows`): methods (requests of a method with their answers, or
    notifications; ``x/*`` a family), :data:`STDIO_LINES`, :data:`PROCESS_EXITS` or :func:`observed` kinds. It
    runs only over a window holding some of it (``None``: every window with anything in its scope)."""
    off_version: bool = False
    """The check judges version negotiation itself (how a server answers a version it does not serve, or none):
    the suite's off-version probes are its evidence. Any other check bound to a revision's features never sees
    them, since a server may serve such a request as another revision (:meth:`Context.off_version`)."""
    clauses: Mapping[str, Grade | None] = field(default_factory=dict)
    """The clauses of its requirement the check names in failures, with the grade a failure of each counts at
    (``None`` where that is the check's own severity)."""
    families: frozenset[str] | None = None
    """The case families whose traffic is all the check ever judges (one that picks its own cases out, e.g. the
    ``sdk`` observations); ``None``: any traffic. A run narrowed to some families asks it (``--only``)."""
    every: str | None = None
    """Why the check reads every message its sender and kinds allow (:attr:`methods` is ``None``), or every window
    with anything in its scope (:attr:`follows` is ``None``): the reason its declaration's :class:`Every` gave."""


@dataclass(frozen=True, slots=True)
class Every:
    """A declaration that a check reads everything of its kind, and why no narrower one holds: ``methods=Every(...)``
    for a message check that judges a message of any method (an envelope rule, a schema), ``follows=Every(...)``
    for a log check that needs every window with anything in its scope (an HTTP audit of every exchange). Nothing
    is implicit: a check that omits ``methods`` or ``follows`` fails at import, and ``tests/spec/test_declarations.py``
    holds every registered check to a declaration."""

    reason: str

    def __post_init__(self) -> None:
        if not self.reason.strip():
            raise CatalogueError("a check that reads everything says why (Every needs a reason)")


class Declaration(TypedDict, total=False):
    """What a check may declare beside its requirements, level, subject and what it reads (all checked by mypy: the
    rule modules' shared declarations, e.g. ``MODERN_HTTP``, are typed with it)."""

    side: Side | None
    transports: Iterable[str] | None
    because: str | None
    features: Iterable[str]
    capability: str | None
    sent_by: Side | None
    kinds: Iterable[Kind] | None
    area: str | None
    tags: Iterable[str]
    off_version: bool
    clauses: Iterable[str]
    families: Iterable[str] | None


CheckFunc = Callable[..., Result]
"""A message check is called as ``func(message, ctx)``, a log check as ``func(ctx)``."""


REGISTRY: dict[str, Check] = {}


def routed_method(message: Message, request_of: Callable[[Message], Message | None]) -> str | None:
    """The method a message is routed by: its own for a request or a notification, its request's for an answer
    (``request_of`` finds it in the log); ``None`` when unknown (an answer to no captured request, anything
    else), and a message of unknown method visits every check its kind and sender allow."""
    kind = message.kind
    if kind is Kind.REQUEST or kind is Kind.NOTIFICATION:
        return message.method
    if kind is Kind.RESULT or kind is Kind.ERROR:
        request = request_of(message)
        return request.method if request is not None else None
    return None


STDIO_LINES = "stdio lines"
PROCESS_EXITS = "process exits"


def observed(kind: str) -> str:
    """What a log check that reads observations of ``kind`` follows."""
    return f"observations of {kind}"


def window_follows(log: Iterable[Exchange], request_of: Callable[[Message], Message | None]) -> frozenset[str]:
    """Everything a log check may follow that a window holds: one pass over the window, shared by every check."""
    found: set[str] = set()
    for exchange in log:
        if isinstance(exchange, StdioLine):
            found.add(STDIO_LINES)
        elif isinstance(exchange, ProcessExit):
            found.add(PROCESS_EXITS)
        elif isinstance(exchange, Observation):
            found.add(observed(exchange.kind))
        for message in exchange.messages:
            method = routed_method(message, request_of)
            if method is not None:
                found.add(method)
    return frozenset(found)


def follows_any(follows: frozenset[str] | None, present: frozenset[str]) -> bool:
    """Whether a window holding ``present`` has anything a log check following ``follows`` reads."""
    if follows is None or not follows.isdisjoint(present):
        return True
    families = [name[:-1] for name in follows if name.endswith("/*")]
    return bool(families) and any(item.startswith(tuple(families)) for item in present)


def accepts_method(methods: frozenset[str] | None, method: str | None) -> bool:
    """Whether a check declaring ``methods`` is called on a message routed by ``method``."""
    if methods is None or method is None or method in methods:
        return True
    return any(name.endswith("/*") and method.startswith(name[:-1]) for name in methods)


def catalogue_side(entries: Iterable[Requirement]) -> Side:
    """Whom the cited requirements bind: their common side, or both when they differ."""
    sides = {entry.side for entry in entries}
    return sides.pop() if len(sides) == 1 else Side.BOTH


def catalogue_transports(entries: Iterable[Requirement]) -> frozenset[str]:
    """Where the cited requirements exist: the union of their transports."""
    return frozenset(transport for entry in entries for transport in entry.transports)


def _narrowing(
    ids: tuple[str, ...],
    entries: list[Requirement],
    side: Side | None,
    transports: Iterable[str] | None,
    because: str | None,
) -> tuple[Side, frozenset[str]]:
    """The side and transports of a check: the catalogue's, unless narrowed with a reason."""
    derived_side = catalogue_side(entries)
    derived_transports = catalogue_transports(entries)
    chosen_side = side if side is not None else derived_side
    chosen_transports = frozenset(transports) if transports is not None else derived_transports
    cited = ", ".join(ids)
    if side is not None and side is derived_side:
        raise CatalogueError(f"a check of {cited} restates the catalogue's side {side.value}; leave it out")
    if transports is not None and chosen_transports == derived_transports:
        raise CatalogueError(f"a check of {cited} restates the catalogue's transports; leave them out")
    unknown = chosen_transports - TRANSPORTS
    if unknown:
        raise CatalogueError(f"unknown transports {sorted(unknown)}")
    differs = chosen_side is not derived_side or chosen_transports != derived_transports
    if differs and not (because or "").strip():
        raise CatalogueError(f"a check of {cited} narrows the catalogue's side or transports without saying why")
    if not differs and because:
        raise CatalogueError(f"a check of {cited} gives a reason but narrows nothing")
    return chosen_side, chosen_transports


def _clause_grades(
    ids: tuple[str, ...], primary: Requirement, names: tuple[str, ...], severity: Severity
) -> dict[str, Grade | None]:
    """The grade of each clause a check names: the clause's severity, where it is below the check's."""
    if names and len(ids) > 1:
        raise CatalogueError(f"a check of {', '.join(ids)} names clauses; a clause belongs to one requirement")
    grades: dict[str, Grade | None] = {}
    for name in names:
        clause = (primary.clauses or {}).get(name)
        if clause is None:
            raise CatalogueError(f"a check of {primary.id} names clause {name!r}, which the catalogue does not give")
        why = f"the catalogue marks this part of {primary.id} {clause.qualifier}: {clause.text}"
        grades[name] = Grade(clause.severity, why) if clause.severity is not severity else None
    return grades


def _declare(
    scope: str,
    *,
    requirements: str | Iterable[str],
    level: Level,
    subject: str,
    side: Side | None = None,
    transports: Iterable[str] | None = None,
    because: str | None = None,
    features: Iterable[str] = (),
    capability: str | None = None,
    sent_by: Side | None = None,
    kinds: Iterable[Kind] | None = None,
    methods: Iterable[str] | Every | None = None,
    follows: Iterable[str] | Every | None = None,
    area: str | None = None,
    tags: Iterable[str] = (),
    off_version: bool = False,
    clauses: Iterable[str] = (),
    families: Iterable[str] | None = None,
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
    if methods is not None and scope != "message":
        raise CatalogueError("only a message check declares the methods it judges")
    if follows is not None and scope != "log":
        raise CatalogueError("only a log check declares what it follows")
    reads = methods if scope == "message" else follows
    if reads is None:
        what = "the methods it judges (methods=)" if scope == "message" else "what it follows (follows=)"
        raise CatalogueError(f"a check of {', '.join(ids)} does not declare {what}; Every(reason) if it is everything")
    every = reads.reason if isinstance(reads, Every) else None
    named = None if isinstance(reads, Every) else frozenset(reads)
    if named is not None and not named:
        raise CatalogueError(f"a check of {', '.join(ids)} declares it reads nothing")
    unknown_features = {name.lstrip("!") for name in features} - set(FEATURES)
    if unknown_features:
        raise CatalogueError(f"unknown revision features {sorted(unknown_features)}")
    chosen_side, chosen_transports = _narrowing(ids, entries, side, transports, because)
    severity = primary.severity if level is primary.level else level.severity
    graded = tuple(name for name in primary.graded if all(name in entry.graded for entry in entries))
    clause_grades = _clause_grades(ids, primary, tuple(clauses), severity)

    def register(func: Callable[..., Result]) -> Callable[..., Result]:
        name = func.__name__
        if name in REGISTRY and REGISTRY[name].func is not func:
            raise CatalogueError(f"two checks are named {name}")
        # the title is the docstring's first paragraph, whole: a sentence cut at its first line break reads
        # as unfinished ("... one the server does not")
        paragraph = (func.__doc__ or name.replace("_", " ")).strip().split("\n\n")[0]
        doc = " ".join(paragraph.split())
        REGISTRY[name] = Check(
            name=name,
            title=doc,
            func=func,
            scope=scope,
            requirements=ids,
            level=level,
            severity=severity,
            side=chosen_side,
            area=area or primary.area,
            gate=Gate(frozenset(features), chosen_transports, capability),
            subject=subject,
            sent_by=sent_by,
            kinds=frozenset(kinds) if kinds is not None else None,
            methods=named if scope == "message" else None,
            follows=named if scope == "log" else None,
            every=every,
            tags=tuple(tags),
            narrowed=because.strip() if because else None,
            graded=graded,
            off_version=off_version,
            clauses=clause_grades,
            families=frozenset(families) if families is not None else None,
        )
        return func

    return register


def message_check(
    *,
    requirements: str | Iterable[str],
    level: Level,
    subject: str,
    methods: Iterable[str] | Every,
    **declaration: Unpack[Declaration],
) -> Callable[[CheckFunc], CheckFunc]:
    """Declare a check called as ``func(message, ctx)`` for every message in scope of the ``methods`` it judges
    (:func:`routed_method`; ``Every(reason)``: a message of any method)."""
    return _declare("message", requirements=requirements, level=level, subject=subject, methods=methods, **declaration)


def log_check(
    *,
    requirements: str | Iterable[str],
    level: Level,
    subject: str,
    follows: Iterable[str] | Every,
    **declaration: Unpack[Declaration],
) -> Callable[[CheckFunc], CheckFunc]:
    """Declare a check called once as ``func(ctx)`` over each window of the exchange log holding some of what it
    ``follows`` (:func:`window_follows`; ``Every(reason)``: every window with anything in its scope)."""
    return _declare("log", requirements=requirements, level=level, subject=subject, follows=follows, **declaration)
