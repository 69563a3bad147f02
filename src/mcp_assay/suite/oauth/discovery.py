"""Finding where to sign in, in the order the MCP authorization specification gives.

1. The **challenge**: one request to the endpoint with whatever the user configured. Anything but
   ``401`` means there is nothing to negotiate. A ``401`` is read for its ``Bearer`` challenge.
2. **Protected Resource Metadata** (RFC 9728): the ``resource_metadata`` URL the challenge names,
   else the path-scoped well-known URI, then the root one. Its ``resource`` must be this server
   (or a path above it on the same origin), so a token is never requested for somebody else.
3. **Authorization server metadata** (RFC 8414, OpenID Connect Discovery): for each issuer the
   metadata names, the well-known URIs in the order MCP prescribes, and the document is refused
   unless its ``issuer`` is exactly the issuer the URL was built from (RFC 8414 §3.3) — a mismatch
   is reported, never worked around.

Two deviations seen in the wild are tolerated with a note: ``authorization_server`` (a string)
instead of the ``authorization_servers`` array, and a metadata document's URL where an issuer
belongs (then the document's ``issuer`` must share that URL's origin).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp_assay.spec.rules.auth.facts import canonical_uri, parse_challenges, prm_candidates
from mcp_assay.suite.addresses import may_fetch
from mcp_assay.suite.oauth.http import Answer, OAuthHttp
from mcp_assay.suite.oauth.steps import Line, Narrator, SignInFailed, Step
from mcp_assay.vocabulary.protocol import ACCEPT_BOTH, HeaderKey, MediaType, MetaKey

__all__ = ["Challenge", "Discovery", "challenge", "discover", "metadata_urls"]

_METADATA_SUFFIXES = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")


@dataclass(frozen=True)
class Challenge:
    """A ``401`` to a request without credentials, and what its ``Bearer`` challenge says."""

    resource_metadata: str | None = None
    scope: str | None = None


@dataclass(frozen=True)
class Discovery:
    """Everything discovery established: the resource, its metadata and its authorization server's."""

    resource: str
    """The canonical URI of the MCP server: the ``resource`` of every authorization and token request."""
    challenge: Challenge
    resource_metadata: Mapping[str, Any]
    issuer: str
    server_metadata: Mapping[str, Any] = field(default_factory=dict)


def _probe_body(version: str) -> bytes:
    """A ``tools/list`` any protected server should refuse without a token (``server/discover`` may be public)."""
    meta = {
        MetaKey.PROTOCOL_VERSION: version,
        MetaKey.CLIENT_CAPABILITIES: {},
        MetaKey.CLIENT_INFO: {"name": "mcp-assay", "version": "sign-in"},
    }
    message = {"jsonrpc": "2.0", "id": "mcp-assay-sign-in", "method": "tools/list", "params": {"_meta": meta}}
    return json.dumps(message).encode()


async def challenge(
    http: OAuthHttp, url: str, headers: Mapping[str, str], version: str, narrator: Narrator
) -> Challenge | None:
    """The one request that decides whether to sign in; ``None`` when the endpoint did not answer ``401``."""
    request_headers = {
        HeaderKey.CONTENT_TYPE: MediaType.JSON,
        HeaderKey.ACCEPT: ACCEPT_BOTH,
        HeaderKey.PROTOCOL_VERSION: version,
        HeaderKey.METHOD: "tools/list",
        **headers,
    }
    try:
        answer = await http.send("POST", url, Step.CHALLENGE, headers=request_headers, content=_probe_body(version),
                                 head_only=True)  # fmt: skip
    except SignInFailed:
        return None  # an endpoint that cannot be reached is the run's to report, not the sign-in's
    if answer.status != 401:
        return None
    narrator.tell(Line.START, "endpoint returned 401; discovering OAuth configuration")
    bearer = parse_challenges(answer.headers.get_list(HeaderKey.WWW_AUTHENTICATE)).bearer
    if bearer is None:
        narrator.note("the 401 carries no Bearer challenge; trying the well-known metadata URIs")
        return Challenge()
    return Challenge(resource_metadata=bearer.get("resource_metadata") or None, scope=bearer.get("scope") or None)


async def discover(http: OAuthHttp, endpoint: str, found: Challenge, narrator: Narrator) -> Discovery:
    """Steps 2 and 3: the resource's metadata, then its authorization server's."""
    resource = canonical_uri(endpoint)
    document = await _resource_metadata(http, endpoint, found, narrator)
    issuers = _issuers(document, narrator)
    reasons = []
    for value in issuers:
        try:
            issuer, metadata = await _server_metadata(http, value, endpoint, narrator)
        except SignInFailed as failure:
            if failure.why.startswith("refused:"):
                raise
            reasons.append(failure.why)
            continue
        return Discovery(resource, found, document, issuer, metadata)
    raise SignInFailed(Step.SERVER_METADATA, "; ".join(reasons))


async def _resource_metadata(http: OAuthHttp, endpoint: str, found: Challenge, narrator: Narrator) -> dict[str, Any]:
    candidates: list[str] = []
    if found.resource_metadata:
        refusal = may_fetch(found.resource_metadata, endpoint)
        if refusal is None:
            candidates.append(found.resource_metadata)
        else:
            narrator.note(f"the challenge's resource_metadata {found.resource_metadata} is not fetched ({refusal})")
    if not candidates:
        candidates = [url for _, url in prm_candidates(endpoint)]
    tried = []
    for url in candidates:
        answer = await http.get_json(url, Step.RESOURCE_METADATA)
        if answer.status == 200 and answer.json is not None:
            _check_resource(answer.json, endpoint, url, narrator)
            narrator.step(f"found protected-resource metadata at {url}")
            return answer.json
        tried.append(f"{url} ({_describe(answer)})")
    raise SignInFailed(Step.RESOURCE_METADATA, "no Protected Resource Metadata document at " + ", ".join(tried))


def _describe(answer: Answer) -> str:
    if answer.status == 200:
        return "HTTP 200, not a JSON object"
    return f"HTTP {answer.status}"


def _check_resource(document: Mapping[str, Any], endpoint: str, url: str, narrator: Narrator) -> None:
    """RFC 9728 §3.3: the metadata must describe this server, or a token would be asked for another one."""
    declared = document.get("resource")
    if not isinstance(declared, str) or not declared:
        narrator.note(f"{url} names no resource; RFC 9728 requires it (assuming it describes {endpoint})")
        return
    own, theirs = canonical_uri(endpoint), canonical_uri(declared)
    if own != theirs and not own.startswith(theirs + "/"):
        raise SignInFailed(
            Step.RESOURCE_METADATA, f"refused: {url} describes resource {declared!r}, not this server ({own})"
        )


def _issuers(document: Mapping[str, Any], narrator: Narrator) -> list[str]:
    servers = document.get("authorization_servers")
    if isinstance(servers, list) and servers and all(isinstance(item, str) and item for item in servers):
        return list(servers)
    single = document.get("authorization_server")
    if isinstance(single, str) and single:
        narrator.note(
            'the metadata uses "authorization_server" (a string); RFC 9728 defines "authorization_servers" as an '
            "array of issuer identifiers"
        )
        return [single]
    raise SignInFailed(Step.RESOURCE_METADATA, "the metadata names no authorization_servers")


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata is looked for, in the order MCP gives (RFC 8414 §3, OpenID Connect Discovery)."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [f"{origin}{suffix}" for suffix in _METADATA_SUFFIXES]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


async def _server_metadata(
    http: OAuthHttp, value: str, endpoint: str, narrator: Narrator
) -> tuple[str, dict[str, Any]]:
    """The issuer and its metadata, issuer-checked; ``value`` is an issuer, or tolerated, a metadata URL."""
    http.check(value, endpoint, Step.SERVER_METADATA)
    if any(marker in urlsplit(value).path for marker in _METADATA_SUFFIXES):
        narrator.note(f"{value} is a metadata document's URL, not an issuer identifier; fetching it directly")
        answer = await http.get_json(value, Step.SERVER_METADATA)
        if answer.status != 200 or answer.json is None:
            raise SignInFailed(Step.SERVER_METADATA, f"{value} ({_describe(answer)})")
        declared = answer.json.get("issuer")
        if not isinstance(declared, str) or urlsplit(declared)[:2] != urlsplit(value)[:2]:
            raise SignInFailed(
                Step.SERVER_METADATA, f"refused: {value} declares issuer {declared!r}, not one of its own origin"
            )
        narrator.step(f"found authorization server metadata at {value}")
        return declared, answer.json
    tried = []
    for url in metadata_urls(value):
        answer = await http.get_json(url, Step.SERVER_METADATA)
        if answer.status != 200 or answer.json is None:
            tried.append(f"{url} ({_describe(answer)})")
            continue
        declared = answer.json.get("issuer")
        if declared != value:
            raise SignInFailed(Step.SERVER_METADATA, f'refused: {url} declares issuer "{declared}", expected "{value}"')
        narrator.step(f"found authorization server metadata at {url}")
        return value, answer.json
    raise SignInFailed(Step.SERVER_METADATA, "no metadata for issuer " + value + " at " + ", ".join(tried))
