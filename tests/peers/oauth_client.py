"""A real MCP client that completes OAuth: the official Python SDK's ``Client`` with its OAuth provider.

For client-side end-to-end tests: :func:`run_oauth_client` connects the SDK ``Client`` (``mode``
``"legacy"`` for the 2025-11-25 handshake, or the ``"2026-07-28"`` pin) over Streamable HTTP with
an ``httpx2.AsyncClient`` (the HTTP library the SDK uses) whose ``auth=`` is the SDK's
:class:`~mcp.client.auth.OAuthClientProvider`. On the server's ``401`` the provider discovers the
Protected Resource Metadata and the authorization server, registers dynamically, and hands the
authorization URL to the ``redirect_handler`` here, which plays the browser: it fetches the URL
(no redirects followed) and takes ``code``, ``state`` and ``iss`` from the ``Location`` it is sent
to; the ``callback_handler`` gives them back to the provider, which redeems the code with its PKCE
verifier. Nothing listens on the loopback redirect URI: the redirect is read, not followed.

With ``proxy=URL`` every request goes through that HTTP proxy: the MCP traffic, the provider's
discovery, registration and token requests (all sent by the same ``httpx2`` client), and the
"browser" fetch of the authorization URL. Without it, everything goes directly (environment proxy
settings are ignored either way). Every wait is bounded by ``timeout``. The proxy must pass
response headers on before the body (mitmproxy: ``flow.response.stream = True`` in
``responseheaders``, as the mcp-assay addon does): the SDK's OAuth provider holds one lock until
each response's headers arrive, so a legacy GET stream whose headers a proxy holds back stalls
every later request (a plain ``mitmdump`` does that, and the run ends in ``TimeoutError``).

``run_oauth_client`` is async (run it inside an ``anyio``/``asyncio`` loop); ``run_oauth_client_sync``
wraps it in ``anyio.run`` for plain test functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Literal
from urllib.parse import parse_qsl, urlsplit

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

from tests.peers.process import free_port

__all__ = ["MemoryTokenStorage", "Mode", "OAuthRun", "run_oauth_client", "run_oauth_client_sync"]

Mode = Literal["legacy", "2026-07-28"]


class MemoryTokenStorage:
    """The SDK's ``TokenStorage`` protocol, in memory: tokens and client registration for one run."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@dataclass
class OAuthRun:
    """What one run of the SDK client did."""

    mode: str
    redirect_uri: str
    protocol_version: str = ""
    tools: list[str] = field(default_factory=list)
    authorization_urls: list[str] = field(default_factory=list)
    """Every authorization URL the provider handed to the redirect handler (one per authorization)."""
    redirects: list[dict[str, str]] = field(default_factory=list)
    """The query of each ``Location`` the authorization endpoint answered with (``code``, ``state``, ``iss``)."""
    token: OAuthToken | None = None
    client_info: OAuthClientInformationFull | None = None

    @property
    def authorization_params(self) -> dict[str, str]:
        """The query of the first authorization URL (``client_id``, ``code_challenge``, ``resource``, ...)."""
        return dict(parse_qsl(urlsplit(self.authorization_urls[0]).query)) if self.authorization_urls else {}

    @property
    def access_token(self) -> str | None:
        return self.token.access_token if self.token is not None else None


class _Browser:
    """The user agent: fetches the authorization URL, reads the redirect, and hands its parameters back."""

    def __init__(self, run: OAuthRun, proxy: str | None, timeout: float) -> None:
        self.run = run
        self.proxy = proxy
        self.timeout = timeout
        self._pending: dict[str, str] | None = None

    async def redirect(self, authorization_url: str) -> None:
        self.run.authorization_urls.append(authorization_url)
        async with httpx2.AsyncClient(
            proxy=self.proxy, trust_env=False, follow_redirects=False, timeout=self.timeout
        ) as browser:
            answer = await browser.get(authorization_url)
        location = answer.headers.get("location")
        if answer.status_code not in (302, 303) or not location:
            raise RuntimeError(f"authorization endpoint answered {answer.status_code}, not a redirect: {answer.text}")
        params = dict(parse_qsl(urlsplit(location).query))
        self.run.redirects.append(params)
        if "error" in params or "code" not in params:
            raise RuntimeError(f"authorization refused: {params.get('error')} {params.get('error_description', '')}")
        self._pending = params

    async def callback(self) -> AuthorizationCodeResult:
        params, self._pending = self._pending, None
        if params is None:
            raise RuntimeError("the callback came before any authorization redirect")
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))


async def run_oauth_client(
    server_url: str,
    mode: Mode = "legacy",
    *,
    proxy: str | None = None,
    redirect_uri: str | None = None,
    client_name: str = "mcp-assay-oauth-peer",
    token_endpoint_auth_method: Literal["none", "client_secret_post", "client_secret_basic"] | None = None,
    timeout: float = 30.0,
) -> OAuthRun:
    """Connect the SDK client to ``server_url`` through OAuth, list the tools, and say what happened.

    ``redirect_uri`` defaults to ``http://127.0.0.1:<free port>/callback``; ``token_endpoint_auth_method``
    ``None`` registers the way the SDK does by default (naming no method). Raises whatever the SDK
    raises when OAuth or the MCP exchange fails, and :class:`TimeoutError` after ``timeout`` seconds."""
    run = OAuthRun(mode=mode, redirect_uri=redirect_uri or f"http://127.0.0.1:{free_port()}/callback")
    storage = MemoryTokenStorage()
    browser = _Browser(run, proxy, timeout)
    metadata = OAuthClientMetadata(
        redirect_uris=[AnyUrl(run.redirect_uri)], client_name=client_name,
        token_endpoint_auth_method=token_endpoint_auth_method,
    )  # fmt: skip
    provider = OAuthClientProvider(
        server_url, metadata, storage, redirect_handler=browser.redirect, callback_handler=browser.callback
    )
    with anyio.fail_after(timeout):
        async with httpx2.AsyncClient(auth=provider, proxy=proxy, trust_env=False, timeout=timeout) as http:
            async with Client(streamable_http_client(server_url, http_client=http), mode=mode) as client:
                listed = await client.list_tools()
                run.protocol_version = str(client.protocol_version)
                run.tools = [tool.name for tool in listed.tools]
    run.token = await storage.get_tokens()
    run.client_info = await storage.get_client_info()
    return run


def run_oauth_client_sync(server_url: str, mode: Mode = "legacy", **options: object) -> OAuthRun:
    """:func:`run_oauth_client` from synchronous code (its own event loop, via ``anyio.run``)."""
    return anyio.run(partial(run_oauth_client, server_url, mode, **options))  # type: ignore[arg-type]
