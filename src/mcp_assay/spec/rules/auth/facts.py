"""What the authorization rules and probes share: challenges, presented credentials, JWTs, metadata URLs.

* :func:`parse_challenges` reads ``WWW-Authenticate`` fields with the RFC 9110 grammar (several
  challenges per field and several fields, auth-params with quoted strings, escapes and commas
  inside quotes, the token68 form, case-insensitive schemes and parameter names);
* :func:`presented` says which credentials a request carried, without keeping more of a token
  than the rules need to compare it;
* :func:`jwt_claims` peeks at a JWT's claims *without verifying it* — evidence, never trust;
* :func:`prm_candidates` and :func:`canonical_uri` build the Protected Resource Metadata URLs of
  an endpoint and the canonical form RFC 8707 and RFC 9728 compare against.

Nothing here judges; the ``auth`` rule modules (:mod:`.auth`, :mod:`.auth_challenges`,
:mod:`.auth_credentials`, :mod:`.auth_clients`) do.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from mcp_assay.recording.redaction import SECRET_HEADERS
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.wire.model import Headers, HttpRequest

__all__ = [
    "AS_METADATA_MARKERS",
    "PRM_PATH",
    "TOKEN_PARAMS",
    "Challenge",
    "Challenges",
    "Presented",
    "canonical_uri",
    "challenges_of",
    "is_loopback_host",
    "jwt_claims",
    "jwt_shaped",
    "parse_challenges",
    "presented",
    "prm_candidates",
    "prm_kind",
    "unsigned_jwt",
]

PRM_PATH = "/.well-known/oauth-protected-resource"
AS_METADATA_MARKERS = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")
TOKEN_PARAMS = ("access_token", "token", "api_key", "key", "jwt", "auth")
"""Query parameters a client could put an access token in (AUTH-37)."""

_TCHAR = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]"
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_PARAM = re.compile(rf"^(?P<name>{_TCHAR}+)[ \t]*=[ \t]*(?P<value>{_TCHAR}+|{_QUOTED})$", re.DOTALL)
_TOKEN68 = re.compile(r"^[A-Za-z0-9\-._~+/]+=*$")
_SCHEME = re.compile(rf"^(?P<scheme>{_TCHAR}+)(?:[ ]+(?P<rest>.*))?$", re.DOTALL)
_JWT = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$")


# -- WWW-Authenticate -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Challenge:
    """One challenge: its scheme as sent, its auth-params (names lowercased) or its token68."""

    scheme: str
    params: Mapping[str, str] = field(default_factory=dict)
    token68: str | None = None

    @property
    def is_bearer(self) -> bool:
        return self.scheme.lower() == "bearer"

    def get(self, name: str) -> str | None:
        return self.params.get(name.lower())


@dataclass(frozen=True, slots=True)
class Challenges:
    """Every challenge of a response's ``WWW-Authenticate`` fields, and what could not be read."""

    items: tuple[Challenge, ...] = ()
    problems: tuple[str, ...] = ()
    fields: int = 0
    """How many ``WWW-Authenticate`` fields the response had."""

    @property
    def bearer(self) -> Challenge | None:
        """The first ``Bearer`` challenge."""
        return next((item for item in self.items if item.is_bearer), None)

    def schemes(self) -> list[str]:
        return [item.scheme for item in self.items]


def _split_elements(value: str) -> tuple[list[str], list[str]]:
    """Split a comma-separated list, leaving commas inside quoted strings alone."""
    elements: list[str] = []
    problems: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in value:
        if quoted:
            current.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
            current.append(char)
        elif char == ",":
            elements.append("".join(current))
            current = []
        else:
            current.append(char)
    if quoted:
        problems.append(f"unterminated quoted string in {value!r}")
    elements.append("".join(current))
    return [element.strip(" \t") for element in elements], problems


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1], flags=re.DOTALL)
    return value


def parse_challenges(values: Iterable[str]) -> Challenges:
    """All challenges in the given ``WWW-Authenticate`` field values (RFC 9110 §11.6.1)."""
    items: list[tuple[str, dict[str, str], str | None]] = []
    problems: list[str] = []
    count = 0
    for value in values:
        count += 1
        elements, split_problems = _split_elements(value)
        problems.extend(split_problems)
        current: tuple[str, dict[str, str], str | None] | None = None
        for element in elements:
            if not element:
                continue  # empty list elements are allowed
            param = _PARAM.match(element)
            if param and current is not None and current[2] is None:
                _add_param(current[1], param["name"], param["value"], problems)
                continue
            head = _SCHEME.match(element)
            if head is None:
                problems.append(f"cannot read {element!r} as a challenge or an auth-param")
                continue
            params: dict[str, str] = {}
            token68: str | None = None
            rest = (head["rest"] or "").strip(" \t")
            if rest:
                first = _PARAM.match(rest)
                if first:
                    _add_param(params, first["name"], first["value"], problems)
                elif _TOKEN68.match(rest):
                    token68 = rest
                else:
                    problems.append(f"cannot read {rest!r} after the scheme {head['scheme']}")
            current = (head["scheme"], params, token68)
            items.append(current)
    challenges = tuple(Challenge(scheme, dict(params), token68) for scheme, params, token68 in items)
    return Challenges(challenges, tuple(problems), count)


def _add_param(params: dict[str, str], name: str, value: str, problems: list[str]) -> None:
    key = name.lower()
    if key in params:
        problems.append(f"the parameter {key} appears more than once in one challenge")
        return
    params[key] = _unquote(value)


def challenges_of(headers: Headers) -> Challenges:
    return parse_challenges(headers.get_all(HeaderKey.WWW_AUTHENTICATE))


# -- credentials --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Presented:
    """The credentials one request carried."""

    authorization: str | None
    """The raw ``Authorization`` value, if any."""
    scheme: str = ""
    credential: str = ""
    query: tuple[tuple[str, str], ...] = ()
    """Query parameters that could carry a token (:data:`TOKEN_PARAMS`), with their values."""
    other: tuple[str, ...] = ()
    """Names of other credential-bearing headers (API keys, cookies)."""

    @property
    def anonymous(self) -> bool:
        """No credentials at all: no ``Authorization``, no token-like query parameter, no API key or cookie."""
        return self.authorization is None and not self.query and not self.other

    @property
    def bearer(self) -> str | None:
        """The bearer token (``""`` for a bare ``Bearer``), or ``None`` for another scheme or none."""
        if self.authorization is None or self.scheme.lower() != "bearer":
            return None
        return self.credential


def presented(request: HttpRequest) -> Presented:
    """The credentials ``request`` carried (worked out once per request: many authorization rules ask)."""
    known = _PRESENTED.get(id(request))
    if known is not None and known[0] is request:
        return known[1]
    found = _presented(request)
    if len(_PRESENTED) >= _KEPT:
        _PRESENTED.clear()
    _PRESENTED[id(request)] = (request, found)
    return found


_KEPT = 4096
_PRESENTED: dict[int, tuple[HttpRequest, Presented]] = {}
"""The latest requests asked about (held, so that an id stays its request's), at most :data:`_KEPT`."""


def _presented(request: HttpRequest) -> Presented:
    value = request.headers.get(HeaderKey.AUTHORIZATION)
    scheme, _, credential = (value or "").strip().partition(" ")
    query = tuple(
        (name, item)
        for name, item in parse_qsl(urlsplit(request.url).query, keep_blank_values=True)
        if name.lower() in TOKEN_PARAMS and item
    ) if "?" in request.url else ()  # fmt: skip
    names = tuple(request.headers.names())
    other = _OTHER.get(names)
    if other is None:
        other = tuple(
            name
            for name in names
            if name.lower() in SECRET_HEADERS and name.lower() not in (HeaderKey.AUTHORIZATION, "set-cookie")
        )
        if len(_OTHER) < 256:  # a client sends few distinct sets of header names, one per kind of request
            _OTHER[names] = other
    return Presented(value, scheme, credential.strip(), query, other)


_OTHER: dict[tuple[str, ...], tuple[str, ...]] = {}
"""The other credential-bearing headers of :class:`Presented`, by the header names a request carried in order."""


# -- JWTs ---------------------------------------------------------------------------------------------
def jwt_shaped(value: str) -> bool:
    """Three base64url segments, the first a JSON object (``eyJ``): what a JWS compact JWT looks like."""
    return value.startswith("eyJ") and bool(_JWT.match(value))


def _b64decode(segment: str) -> bytes:
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def jwt_claims(token: str) -> dict[str, Any] | None:
    """The claims of a JWT, read without verifying anything; ``None`` when the token is not a readable JWT."""
    if not jwt_shaped(token):
        return None
    try:
        claims = json.loads(_b64decode(token.split(".")[1]))
    except (ValueError, binascii.Error):
        return None
    return claims if isinstance(claims, dict) else None


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unsigned_jwt(claims: Mapping[str, Any], header: Mapping[str, Any], signature: bytes = b"") -> str:
    """A JWT built without any key: the given header and claims, and ``signature`` as its third segment."""
    parts = [json.dumps(dict(header), separators=(",", ":")), json.dumps(dict(claims), separators=(",", ":"))]
    return ".".join([*(_b64encode(part.encode()) for part in parts), _b64encode(signature)])


# -- URLs -----------------------------------------------------------------------------------------------
_DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_uri(url: str) -> str:
    """Lowercase scheme and host, no default port, no query, no fragment, no trailing slash."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def prm_candidates(endpoint: str) -> list[tuple[str, str]]:
    """``[("path", url), ("root", url)]``: the path-scoped (left out for a root endpoint) and root PRM URLs."""
    parts = urlsplit(endpoint)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    candidates = [("path", f"{origin}{PRM_PATH}{path}")] if path else []
    candidates.append(("root", f"{origin}{PRM_PATH}"))
    return candidates


def prm_kind(url: str) -> str | None:
    """``path`` for a path-scoped PRM URL, ``root`` for the root one, ``None`` for anything else."""
    path = urlsplit(url).path
    if path.rstrip("/") == PRM_PATH:
        return "root"
    if path.startswith(PRM_PATH + "/"):
        return "path"
    return None


def is_loopback_host(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
