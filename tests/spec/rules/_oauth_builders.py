"""Hand-built OAuth flows of an MCP client, as a forward proxy captures them, one fault at a time.

``flow()`` builds a clean authorization-code flow against a 2026 (or 2025) server: the 401, the
PRM fetch, authorization server metadata, dynamic registration, the authorization request and
its redirect, the code exchange and the authorized MCP request. Each keyword bends one step the
way a faulty client (or authorization server) would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from mcp_assay.wire.model import HttpExchange
from tests.factories import LEGACY, MODERN, URL, http, legacy_call, legacy_session, modern_call, modern_headers
from tests.factories import request_body as rpc_request

ISSUER = "http://127.0.0.1:9411"
REDIRECT = "http://127.0.0.1:7777/callback"
PRM_PATH_URL = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"
PRM_ROOT_URL = "http://127.0.0.1:8000/.well-known/oauth-protected-resource"
TOOLS = {"tools": [], "ttlMs": 0, "cacheScope": "private"}


@dataclass
class Faults:
    """What to bend; the defaults make a clean flow."""

    revision: str = MODERN
    challenge_names_metadata: bool = True
    challenge_scope: str | None = "calc:use"
    prm_first: str = PRM_PATH_URL
    prm_also: list[str] = field(default_factory=list)
    metadata_paths: list[str] = field(default_factory=lambda: ["/.well-known/oauth-authorization-server"])
    served_issuer: str = ISSUER
    metadata_extra: Mapping[str, Any] = field(default_factory=dict)
    metadata_drop: tuple[str, ...] = ()
    registration: Mapping[str, Any] | None = None
    registration_drop: tuple[str, ...] = ()
    authorize: Mapping[str, str | None] = field(default_factory=dict)
    authorize_endpoint: str = f"{ISSUER}/authorize"
    redirect: Mapping[str, str | None] = field(default_factory=dict)
    redeem: bool = True
    token: Mapping[str, str | None] = field(default_factory=dict)
    token_endpoint: str = f"{ISSUER}/token"


def _json(url: str, body: Any, *, status: int = 200) -> HttpExchange:
    return http(None, body, method="GET", url=url, status=status, headers={"accept": "application/json"})


def _pruned(values: Mapping[str, str | None]) -> dict[str, str]:
    return {name: value for name, value in values.items() if value is not None}


def metadata(faults: Faults) -> dict[str, Any]:
    body = {
        "issuer": faults.served_issuer,
        "authorization_endpoint": f"{ISSUER}/authorize",
        "token_endpoint": f"{ISSUER}/token",
        "registration_endpoint": f"{ISSUER}/register",
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        **faults.metadata_extra,
    }
    return {name: value for name, value in body.items() if name not in faults.metadata_drop}


def challenge(faults: Faults) -> HttpExchange:
    params = []
    if faults.challenge_names_metadata:
        params.append(f'resource_metadata="{PRM_PATH_URL}"')
    if faults.challenge_scope:
        params.append(f'scope="{faults.challenge_scope}"')
    header = "Bearer " + ", ".join(params) if params else "Bearer"
    if faults.revision == MODERN:
        body = rpc_request("tools/list", 1, {})
        headers = modern_headers(body)
    else:
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    return http(
        body,
        {"error": "invalid_token"},
        status=401,
        headers=headers,
        response_headers={"content-type": "application/json", "www-authenticate": header},
    )


def flow(faults: Faults | None = None) -> list[HttpExchange]:
    """The whole flow, in capture order."""
    faults = faults or Faults()
    prm = {"resource": URL, "authorization_servers": [ISSUER], "scopes_supported": ["calc:use", "calc:admin"]}
    steps: list[HttpExchange] = [challenge(faults)]
    for url in [faults.prm_first, *faults.prm_also]:
        steps.append(_json(url, prm) if url == PRM_PATH_URL or url == PRM_ROOT_URL else _json(url, {}, status=404))
    for path in faults.metadata_paths:
        steps.append(_json(f"{ISSUER}{path}", metadata(faults)))
    registration = {
        "redirect_uris": [REDIRECT],
        "client_name": "fixture client",
        "application_type": "native",
        **(faults.registration or {}),
    }
    registration = {name: value for name, value in registration.items() if name not in faults.registration_drop}
    steps.append(
        http(
            registration,
            {"client_id": "cid-1", **registration},
            url=f"{ISSUER}/register",
            status=201,
            headers={"content-type": "application/json"},
        )
    )
    query = _pruned(
        {
            "response_type": "code",
            "client_id": "cid-1",
            "redirect_uri": REDIRECT,
            "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            "code_challenge_method": "S256",
            "state": "st4te",
            "resource": URL,
            "scope": "calc:use",
            **faults.authorize,
        }
    )
    answer = _pruned({"code": "c0de-123456", "state": query.get("state"), "iss": ISSUER, **faults.redirect})
    steps.append(
        http(
            None,
            None,
            method="GET",
            url=f"{faults.authorize_endpoint}?{urlencode(query)}",
            status=302,
            headers={},
            response_headers={"location": f"{REDIRECT}?{urlencode(answer)}"},
        )
    )
    if faults.redeem:
        form = _pruned(
            {
                "grant_type": "authorization_code",
                "code": "c0de-123456",
                "redirect_uri": REDIRECT,
                "client_id": "cid-1",
                "code_verifier": "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
                "resource": URL,
                **faults.token,
            }
        )
        steps.append(
            http(
                urlencode(form).encode(),
                {"access_token": "opaque-access-token", "token_type": "Bearer", "expires_in": 600},
                url=faults.token_endpoint,
                headers={"content-type": "application/x-www-form-urlencoded"},
            )
        )
    if faults.revision == MODERN:
        steps.append(modern_call("tools/list", {}, TOOLS, ident=2))
    else:
        steps.extend(legacy_session(version=LEGACY))
        steps.append(legacy_call("tools/list", {}, {"tools": []}, ident=2))
    return steps
