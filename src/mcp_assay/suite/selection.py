"""Which revisions to test: every one in the window that the server actually serves.

``server/discover`` is asked first, carrying the newest window revision in ``_meta`` as the
schema requires (a discover without ``_meta`` is not spec-legal, and judging a server by its answer
to one files false failures). Its ``supportedVersions`` — or ``error.data.supported`` of a
``-32022`` — lists the modern revisions served. The ``initialize`` handshake is probed separately
and at the same time, on its own session or process, because a discover answer may list only
modern revisions. Both official SDKs serve both eras on one endpoint, so a run usually tests two
revisions, each on its own (newest first); the discover answer and the initialized session become
the clients those runs start from.

When discover does not list the newest modern revision (it answered 404, its result lacks
``supportedVersions``, or the list leaves that revision out), one request of that revision is sent
anyway: a server that serves it is tested on it, and the discover exchanges are judged with the
rest, so a broken discover is reported instead of hidden behind the handshake era.

A target that cannot be reached, or is rate-limited past the budget, or refuses the credentials,
resolves to *neither*: the run says so instead of guessing, since a throttled discover is not a
missing one. A target that answered, but with nothing a revision can be read from (ids of another
JSON type, bodies that are not JSON), resolves to neither too, as ``unusable``: what it sent is
judged. ``--spec-version`` narrows the run to one revision (a revision outside the window is
refused, with the supported list, before anything is sent). ``--modern-only`` says the server is
meant to serve no handshake revision: only modern revisions are tested, and an ``initialize`` it
answers anyway is reported by the modern run's own legacy probes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_assay.cases import discover, handshake
from mcp_assay.spec.revisions import Revision, SpecSet
from mcp_assay.suite.era_clients import LegacyClient, ModernClient
from mcp_assay.suite.transports import Reply, Transport
from mcp_assay.vocabulary.errors import (
    CredentialsRefused,
    HarnessError,
    NoAnswer,
    RateLimited,
    ServerExited,
    TransportFailure,
    Unreachable,
)
from mcp_assay.vocabulary.protocol import Era, ErrorCode
from mcp_assay.wire.model import Probe

__all__ = [
    "CAPABILITY_SOURCES",
    "CapabilitySource",
    "Selection",
    "handshake_revision",
    "mark_unusable",
    "modern_revision",
    "select_revision",
]


def modern_revision(spec: SpecSet) -> Revision | None:
    """The newest window revision with per-request versioning and ``server/discover``."""
    return next((rev for rev in spec.window if rev.has("discover") and rev.has("per_request_version")), None)


def handshake_revision(spec: SpecSet) -> Revision | None:
    """The newest window revision negotiated by ``initialize``."""
    return next((rev for rev in spec.window if rev.has("handshake")), None)


@dataclass(frozen=True, slots=True)
class CapabilitySource:
    """The answer selection reads a revision's capabilities from, and the requirement that it be given."""

    method: str
    requirement: str
    """What the cases that need the capabilities are blocked by when the answer gave none (the report names the
    check that failed it)."""


CAPABILITY_SOURCES = {
    Era.MODERN: CapabilitySource("server/discover", "VER-06"),
    Era.HANDSHAKE: CapabilitySource("initialize", "HS-04"),
}
"""Where each era's capabilities come from."""


@dataclass
class Selection:
    """The outcome of asking the server what it serves."""

    tested: list[Revision] = field(default_factory=list)
    """The revisions to test, newest first; empty when none could be established."""
    note: str = ""
    offered: dict[str, str] = field(default_factory=dict)
    """Revision -> how we learnt the server serves it."""
    problem: str | None = None
    """``unreachable``, ``rate-limited``, ``refused``, ``harness``, ``out-of-window`` or ``unusable`` when
    nothing was chosen."""
    detail: str = ""
    heard: str = ""
    """What discover and initialize were answered, for the note."""
    discover: Reply | None = None
    discover_versions: list[str] | None = None
    initialize: Reply | None = None
    negotiated: str | None = None
    modern: ModernClient | None = None
    legacy: LegacyClient | None = None
    exception: BaseException | None = None

    @property
    def revision(self) -> Revision | None:
        """The newest revision to test."""
        return self.tested[0] if self.tested else None

    def client_for(self, revision: Revision) -> ModernClient | LegacyClient | None:
        """The client selection opened for ``revision``'s era (its discover answer or its session)."""
        return self.modern if revision.era is Era.MODERN else self.legacy

    def result_for(self, revision: Revision) -> dict[str, Any] | None:
        """The result ``revision``'s capabilities are read from (:data:`CAPABILITY_SOURCES`): a discover answer's
        when it succeeded, an initialize answer's whatever else it carried."""
        reply = self.discover if revision.era is Era.MODERN else self.initialize
        result = reply.result if reply is not None and (reply.ok or revision.era is Era.HANDSHAKE) else None
        return result if isinstance(result, dict) else None


def _versions(value: Any) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    return None


def read_discover(reply: Reply) -> tuple[list[str] | None, str]:
    """Modern versions a discover answer names, and how to describe the answer."""
    if reply.ok:
        versions = _versions(reply.result.get("supportedVersions"))
        if versions is not None:
            return versions, f"server/discover lists {', '.join(versions) or 'no versions'}"
        return None, "server/discover answered without a usable supportedVersions list"
    if reply.error_code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
        data = reply.error.get("data") if reply.error else None
        versions = _versions(data.get("supported")) if isinstance(data, dict) else None
        if versions is not None:
            return versions, f"server/discover answered -32022 naming supported versions {', '.join(versions)}"
    return None, f"server/discover answered {reply.describe()}"


ModernFactory = Callable[[], Awaitable[tuple[Transport, ModernClient]]]
LegacyFactory = Callable[[], Awaitable[tuple[Transport, LegacyClient]]]


def _stop(exc: BaseException) -> tuple[str, str] | None:
    """For failures that must stop selection: (problem, detail)."""
    if isinstance(exc, CredentialsRefused):
        return "refused", str(exc)
    if isinstance(exc, RateLimited):
        return "rate-limited", f"rate-limited: {exc.detail}"
    if isinstance(exc, Unreachable):
        return "unreachable", str(exc)
    if isinstance(exc, HarnessError):
        return "harness", f"harness error: {exc}"
    return None


async def select_revision(
    spec: SpecSet,
    *,
    forced: Revision | None,
    modern_factory: ModernFactory,
    legacy_factory: LegacyFactory,
    modern_only: bool = False,
) -> Selection:
    """Ask the server (discover and initialize, side by side) and choose the revisions to test."""
    modern_rev = modern_revision(spec)
    handshake_rev = handshake_revision(spec)
    selection = Selection()
    want_modern = forced is None or forced is modern_rev
    want_handshake = forced is None or forced is handshake_rev
    # start both targets at once: a stdio server spends most of its first second importing
    started = await asyncio.gather(
        modern_factory() if want_modern and modern_rev is not None else _nothing(),
        legacy_factory() if want_handshake and handshake_rev is not None else _nothing(),
        return_exceptions=True,
    )
    modern_answer = ""
    silent: list[str] = []
    if want_modern and modern_rev is not None:
        try:
            client = _ready(started[0], ModernClient)
            selection.modern = client
            reply = await client.request(
                "server/discover",
                probe=Probe.of(discover.DISCOVER, f"server/discover declaring {modern_rev.name} in _meta"),
            )
        except (NoAnswer, ServerExited) as exc:
            modern_answer = f"server/discover got no answer ({exc})"
            silent.append(modern_answer)
        except (CredentialsRefused, RateLimited, Unreachable, HarnessError, TransportFailure) as exc:
            stop = _stop(exc) or ("unreachable", str(exc))
            selection.problem, selection.detail = stop
            selection.exception = exc
            selection.note = _neither(stop[1])
            return selection
        else:
            selection.discover = reply
            versions, modern_answer = read_discover(reply)
            selection.discover_versions = versions
            for version in versions or ():
                selection.offered.setdefault(version, "server/discover")
    handshake_answer = ""
    if want_handshake and handshake_rev is not None:
        try:
            legacy = _ready(started[1], LegacyClient)
            selection.legacy = legacy
            reply = await legacy.initialize(
                handshake_rev.name,
                Probe.of(handshake.INITIALIZE, f"initialize offering {handshake_rev.name}"),
            )
        except (NoAnswer, ServerExited) as exc:
            handshake_answer = f"initialize got no answer ({exc})"
            silent.append(handshake_answer)
        except (CredentialsRefused, RateLimited, Unreachable, HarnessError, TransportFailure) as exc:
            stop = _stop(exc) or ("unreachable", str(exc))
            if forced is not None or not selection.offered:
                selection.problem, selection.detail = stop
                selection.exception = exc
                selection.note = _neither(stop[1])
                return selection
            handshake_answer = stop[1]
        else:
            selection.initialize = reply
            if reply.ok and isinstance(reply.result.get("protocolVersion"), str):
                negotiated = str(reply.result["protocolVersion"])
                selection.negotiated = negotiated
                selection.offered.setdefault(negotiated, "initialize")
                handshake_answer = f"initialize negotiates {negotiated}"
            else:
                handshake_answer = f"initialize answered {reply.describe()}"
    if forced is None and modern_rev is not None and selection.discover is not None:
        if modern_rev.name not in selection.offered and selection.modern is not None:
            modern_answer = "; ".join(
                part for part in (modern_answer, await _try_modern(selection, selection.modern, modern_rev)) if part
            )
    selection.heard = "; ".join(part for part in (modern_answer, handshake_answer) if part)
    if forced is not None:
        selection.tested = [forced]
        answer = modern_answer if forced is modern_rev else handshake_answer
        selection.note = f"{forced.name}, as --spec-version asks" + (f"; {answer}" if answer else "")
        return selection
    served = [rev for rev in spec.window if rev.name in selection.offered]
    attempted = int(want_modern and modern_rev is not None) + int(want_handshake and handshake_rev is not None)
    if not served and silent and len(silent) == attempted:
        selection.problem = "unreachable"
        selection.detail = "; ".join(silent)
        selection.note = _neither(selection.detail)
        return selection
    if modern_only:
        return _modern_only(selection, served, modern_rev, modern_answer, handshake_answer)
    tested, untestable = _testable(selection, served)
    if not tested:
        offered = ", ".join(selection.offered) or "no revision at all"
        selection.problem = "out-of-window"
        selection.detail = (
            f"the server offers {offered}; none is inside the supported window ({spec.window_names()}), "
            "so this tool cannot make a conformance statement about it"
        )
        selection.note = "; ".join(part for part in (modern_answer, handshake_answer, selection.detail) if part)
        return selection
    selection.tested = tested
    selection.note = _note(selection, modern_answer, handshake_answer, untestable)
    return selection


def _testable(selection: Selection, served: list[Revision]) -> tuple[list[Revision], list[str]]:
    """The served revisions selection opened a usable client for, and why any other could not be tested."""
    tested: list[Revision] = []
    untestable: list[str] = []
    for revision in served:
        if revision.era is Era.MODERN:
            usable = selection.modern is not None
            why = "no connection could be opened for it"
        else:
            usable = selection.legacy is not None and selection.initialize is not None
            why = "initialize got no answer"
            if usable and selection.negotiated not in (None, revision.name):
                usable, why = False, f"initialize negotiates {selection.negotiated} instead"
        if usable:
            tested.append(revision)
        else:
            untestable.append(f"{revision.name} is listed by {selection.offered[revision.name]} but {why}")
    return tested, untestable


def _note(selection: Selection, modern_answer: str, handshake_answer: str, untestable: list[str]) -> str:
    """What the revision line of the report says: which revisions are tested, and how the server said so."""
    tested = selection.tested
    sources = {rev.name: selection.offered[rev.name] for rev in tested}
    if len(tested) == 1:
        (only,) = tested
        parts = [f"{only.name} — the newest supported revision this server offers, per {sources[only.name]}"]
    else:
        each = " and ".join(f"{rev.name} (per {sources[rev.name]})" for rev in tested)
        parts = [f"{each} — every revision in the window this server serves, each tested on its own"]
    if "initialize" not in sources.values() and handshake_answer:
        parts.append(handshake_answer)
    if "server/discover" not in sources.values() and modern_answer:
        parts.append(modern_answer)
    parts += untestable
    return "; ".join(parts)


def _modern_only(
    selection: Selection,
    served: list[Revision],
    modern_rev: Revision | None,
    modern_answer: str,
    handshake_answer: str,
) -> Selection:
    """``--modern-only``: test the modern revisions served (the newest, if discover names none)."""
    modern = [rev for rev in served if rev.era is Era.MODERN]
    if not modern and modern_rev is not None:
        modern = [modern_rev]
    if not modern:
        selection.problem = "out-of-window"
        selection.detail = "--modern-only, but no revision of the window has per-request versioning"
        selection.note = selection.detail
        return selection
    selection.tested = modern
    names = " and ".join(rev.name for rev in modern)
    parts = [f"{names} — the server is declared modern-only (--modern-only)"]
    if modern_answer:
        parts.append(modern_answer)
    if selection.negotiated is not None:
        parts.append(
            f"initialize negotiates {selection.negotiated} although the server is declared modern-only; "
            "the handshake era is not tested, and the modern run's legacy initialize probes judge it (VER-15, VER-21)"
        )
    elif handshake_answer:
        parts.append(handshake_answer)
    selection.note = "; ".join(parts)
    return selection


async def _try_modern(selection: Selection, client: ModernClient, revision: Revision) -> str:
    """Discover did not list ``revision``: send one request of it anyway; record it as offered when served.

    A result counts when it carries ``resultType`` (which only modern results have) or when discover
    itself was answered with a result (the server speaks the modern era, whatever its list says)."""
    method = _try_method(selection)
    probe = Probe.of(discover.TRY_MODERN, f"{method} naming {revision.name}, which server/discover did not list")
    try:
        reply = await client.request(method, {}, probe=probe)
    except (CredentialsRefused, RateLimited, HarnessError, TransportFailure) as exc:
        return f"a {revision.name} {method} got no usable answer ({exc})"
    discovered = selection.discover is not None and selection.discover.ok
    if reply.ok and (isinstance(reply.result.get("resultType"), str) or discovered):
        selection.offered.setdefault(revision.name, f"a {revision.name} {method} it served")
        return ""
    return f"a {revision.name} {method} was answered {reply.describe()}"


_LISTS = (("tools", "tools/list"), ("prompts", "prompts/list"), ("resources", "resources/list"))


def _try_method(selection: Selection) -> str:
    """A list request for a capability the server declared (initialize first, then discover); tools/list else."""
    for reply in (selection.initialize, selection.discover):
        capabilities = reply.result.get("capabilities") if reply is not None and reply.ok else None
        if isinstance(capabilities, dict):
            for capability, method in _LISTS:
                if capability in capabilities:
                    return method
    return "tools/list"


def mark_unusable(selection: Selection, *, answered: bool) -> None:
    """The server answered, yet nothing it sent named a revision: the selection is ``unusable``, not
    "unreachable" or "offers nothing" (the run then judges what arrived and does not pass)."""
    if selection.tested or selection.offered or not answered:
        return
    if selection.problem not in ("unreachable", "out-of-window"):
        return
    selection.problem = "unusable"
    heard = selection.heard or selection.detail
    selection.detail = f"the server answered, but nothing it sent named a revision ({heard})"
    selection.note = (
        f"could not establish which revisions this server offers: {selection.detail}; what it sent is judged, "
        "nothing else was tested"
    )


async def _nothing() -> None:
    return None


def _ready[C](started: object, kind: type[C]) -> C:
    """The client a factory produced, or the exception it raised, re-raised here."""
    if isinstance(started, BaseException):
        raise started
    assert isinstance(started, tuple) and isinstance(started[1], kind)
    return started[1]


def _neither(detail: str) -> str:
    return (
        f"could not establish which revisions this server offers ({detail}); nothing was tested — "
        "pass --spec-version to be explicit once the target answers"
    )
