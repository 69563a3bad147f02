"""Discovery (VER-06..09, 16): ``server/discover`` is served, says who the server is and what it supports.

A DiscoverResult lists the supported versions, the capabilities and cache hints; what it lists
must agree with what the server then accepts and refuses, and must not change within its ttl: the
same discover asked again on the same connection, after other requests, must name the same
capabilities, or the server took something from those requests (VER-16).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from typing import Any

from mcp_assay.spec.checks import Finding, Passes, failed, log_check, message_check, passed, passed_each
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import error_code, http_exchange
from mcp_assay.spec.rules.shared.envelopes import (
    answer_to,
    canonical,
    http_status,
    meta_version,
    place_of,
    request_meta,
)
from mcp_assay.spec.rules.shared.reads import ANY_VERSION
from mcp_assay.spec.rules.versions._eras import (
    MODERN,
    advertised_discover,
    code_text,
    discover_results,
    modern_requests,
    refused_supported,
    server_capabilities,
    supported_versions,
    well_formed_requests,
)
from mcp_assay.vocabulary.protocol import ErrorCode, HeaderKey, MetaKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message


@log_check(
    requirements="VER-06",
    level=Level.MUST,
    subject="discover requests",
    **MODERN,
    off_version=True,
    follows={"server/discover"},
)
def discover_is_implemented(ctx: Context) -> Iterator[Finding]:
    """A well-formed server/discover gets a DiscoverResult (or -32022 for an unsupported version, A20), never -32601."""
    for request in well_formed_requests(ctx):
        if request.method != "server/discover":
            continue
        answer = answer_to(request, ctx)
        if answer is None:
            continue
        status = http_status(answer, ctx)
        if answer.kind is Kind.RESULT:
            yield passed(answer)
        elif error_code(answer) == ErrorCode.METHOD_NOT_FOUND or status == 404:
            yield failed(answer, f"server/discover was refused as unknown ({code_text(answer)}, HTTP {status})")
        elif error_code(answer) == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
            yield passed(answer)  # refusing an unsupported version is allowed too (A20)
        else:
            yield failed(answer, f"a well-formed server/discover got {code_text(answer)} instead of a DiscoverResult")


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def version_identifier(value: str) -> bool:
    """A protocol revision is named by the date of its last backwards-incompatible change: a real YYYY-MM-DD date."""
    if not _DATE.fullmatch(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


_DISCOVER_RESULTS: dict[str, Any] = {"sent_by": Side.SERVER, "kinds": {Kind.RESULT}, "features": {"discover"}}


@message_check(
    requirements="VER-07",
    level=Level.MUST,
    subject="discover results",
    **_DISCOVER_RESULTS,
    methods={"server/discover"},
)
def discover_results_carry_versions_capabilities_and_cache_hints(message: Message, ctx: Context) -> Finding | None:
    """A DiscoverResult has resultType complete, supportedVersions, capabilities, ttlMs and cacheScope."""
    request = ctx.log.request_of(message)
    if request is None or request.method != "server/discover" or not isinstance(message.result, dict):
        return None
    result = message.result
    problems = []
    if result.get("resultType") != "complete":
        problems.append(f"resultType is {result.get('resultType')!r}, expected 'complete'")
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or not all(isinstance(item, str) for item in versions):
        problems.append("supportedVersions is missing or not an array of strings")
    elif not versions:
        problems.append("supportedVersions is empty: it names no revision the server serves, though it answered")
    else:
        undated = [item for item in versions if not version_identifier(item)]
        if undated:
            shown = ", ".join(repr(item[:40]) for item in undated[:3])
            problems.append(f"supportedVersions lists {shown}, not a revision identifier (a YYYY-MM-DD date)")
    if not isinstance(result.get("capabilities"), dict):
        problems.append("capabilities is missing or not an object")
    ttl = result.get("ttlMs")
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
        problems.append(f"ttlMs is {ttl!r}, expected an integer >= 0" if "ttlMs" in result else "ttlMs is missing")
    if result.get("cacheScope") not in ("public", "private"):
        scope = result.get("cacheScope")
        problems.append(
            f"cacheScope is {scope!r}, expected 'public' or 'private'"
            if "cacheScope" in result
            else "cacheScope is missing"
        )
    if "instructions" in result and not isinstance(result["instructions"], str):
        problems.append("instructions is not a string")
    if problems:
        return failed(message, "; ".join(problems))
    return passed(message)


@message_check(
    requirements="VER-08",
    level=Level.SHOULD,
    subject="discover results",
    **_DISCOVER_RESULTS,
    methods={"server/discover"},
)
def discover_results_identify_the_server(message: Message, ctx: Context) -> Finding | None:
    """A DiscoverResult names the server in _meta serverInfo, with string name and version."""
    request = ctx.log.request_of(message)
    if request is None or request.method != "server/discover" or not isinstance(message.result, dict):
        return None
    meta = message.result.get("_meta")
    info = meta.get(MetaKey.SERVER_INFO) if isinstance(meta, dict) else None
    if not isinstance(info, dict):
        return failed(message, f"the DiscoverResult has no {MetaKey.SERVER_INFO} object in _meta")
    missing = [field for field in ("name", "version") if not isinstance(info.get(field), str)]
    if missing:
        return failed(message, f"{MetaKey.SERVER_INFO} lacks a string {' and '.join(missing)}")
    return passed(message)


@log_check(
    requirements="VER-09",
    level=Level.MUST,
    subject="requests naming a version",
    **MODERN,
    off_version=True,
    follows=ANY_VERSION,
)
def accepted_versions_match_supported_versions(ctx: Context) -> Iterator[Finding | Passes]:
    """Versions the server serves are in its supportedVersions; versions it refuses with -32022 are not.

    The refusal's own ``data.supported`` is what the server says it supports as well: a -32022 that lists
    the very version it refuses contradicts itself, discover or no discover."""
    passes: list[Message] = []
    for request in modern_requests(ctx):
        if request.method == "server/discover":
            continue  # discover may answer any version (A20)
        version = meta_version(request) or ""
        answer = answer_to(request, ctx)
        if answer is None:
            continue
        if error_code(answer) == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and version in (
            refused_supported(answer) or ()
        ):
            yield failed(answer, f"the server refused {version} with -32022, but the error's data.supported lists it")
            continue
        discover = advertised_discover(ctx, request)
        supported = supported_versions(discover)
        if supported is None:
            continue
        if answer.kind is Kind.RESULT:
            if version in supported:
                passes.append(answer)
            else:
                yield failed(
                    answer, f"the server served a request naming {version}, but supportedVersions is {supported}"
                )
        elif error_code(answer) == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
            if version in supported:
                yield failed(answer, f"the server refused {version} with -32022, but supportedVersions lists it")
            else:
                passes.append(answer)
    yield passed_each(passes)


@log_check(
    requirements="VER-09", level=Level.MUST, subject="repeated discover results", **MODERN, follows={"server/discover"}
)
def discover_versions_hold_for_their_ttl(ctx: Context) -> Iterator[Finding]:
    """Two discover answers within the first one's ttlMs list the same supportedVersions.

    Each answer is compared with the answers still valid when it came (at its place): one per
    distinct list of versions, so a session that asks again and again costs as much as it has answers."""
    valid: dict[str, dict[frozenset[str], tuple[float, int, list[str]]]] = {}
    for second in discover_results(ctx):
        place = place_of(second, ctx)
        again = supported_versions(second)
        windows = valid.setdefault(place, {})
        if again is not None:
            for versions, (until, ttl, listed) in list(windows.items()):
                if until < second.time:
                    del windows[versions]
                elif versions != frozenset(again):
                    yield failed(
                        second,
                        f"supportedVersions changed from {listed} to {again} within the {ttl} ms"
                        " the first answer was valid for",
                    )
                    break
            else:
                if windows:
                    yield passed(second)
        lifetime = second.result.get("ttlMs") if isinstance(second.result, dict) else None
        if isinstance(lifetime, int) and not isinstance(lifetime, bool) and lifetime > 0 and again is not None:
            key = frozenset(again)
            until = second.time + lifetime / 1000
            if key not in windows or windows[key][0] < until:
                windows[key] = (until, lifetime, list(again))


def _asked_alike(result: Message, ctx: Context) -> str:
    """What makes two discover requests the same question: where, with which credentials and _meta."""
    request = ctx.log.request_of(result)
    meta = dict(request_meta(request) or {}) if request is not None else {}
    meta.pop(MetaKey.CLIENT_INFO, None)
    exchange = http_exchange(result, ctx)
    credential = exchange.request.headers.get(HeaderKey.AUTHORIZATION) if exchange is not None else None
    return canonical([place_of(result, ctx), credential, meta])


@log_check(
    requirements="VER-16",
    level=Level.MUST_NOT,
    subject="repeated discover results",
    **MODERN,
    follows={"server/discover"},
)
def discover_capabilities_hold_for_their_ttl(ctx: Context) -> Iterator[Finding]:
    """The same discover asked again within the first answer's ttlMs names the same capabilities.

    Triggered by two discover results for the same question (place, credentials, ``_meta`` but
    ``clientInfo``) within the first one's ``ttlMs``; the active suite asks once more at the start
    and once after every other family, so whatever the requests between them did is in view. Each
    answer is compared with the answers to its question still valid when it came, one per distinct
    set of capabilities, so asking again and again costs as much as there are answers."""
    valid: dict[str, dict[str, tuple[float, int, dict[str, Any]]]] = {}
    for second in discover_results(ctx):
        capabilities = server_capabilities(second)
        if capabilities is None:
            continue
        windows = valid.setdefault(_asked_alike(second, ctx), {})
        named = canonical(capabilities)
        for seen, (until, ttl, earlier) in list(windows.items()):
            if until < second.time:
                del windows[seen]
            elif seen != named:
                changed = sorted(
                    key
                    for key in set(capabilities) | set(earlier)
                    if canonical(capabilities.get(key)) != canonical(earlier.get(key))
                )
                yield failed(
                    second,
                    f"the same server/discover named other capabilities ({', '.join(changed)} changed) within the "
                    f"{ttl} ms the first answer was valid for: the answer depends on earlier requests",
                )
                break
        else:
            if windows:
                yield passed(second)
        lifetime = second.result.get("ttlMs") if isinstance(second.result, dict) else None
        if isinstance(lifetime, int) and not isinstance(lifetime, bool) and lifetime > 0:
            until = second.time + lifetime / 1000
            if named not in windows or windows[named][0] < until:
                windows[named] = (until, lifetime, capabilities)
