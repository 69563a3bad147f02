"""The sign-in's HTTP: JSON documents fetched and posted, redirects never followed, failures as reasons.

The sign-in talks to URLs the target and its authorization server hand it, so every address is
checked first (:func:`~mcp_assay.suite.probes.auth.may_fetch`: https, or http on loopback, and no
private address named by a public host), redirects are not followed, and a body is read only up to
a bound. An answer that is not what was asked for is returned as data; only a transport failure or a
refused address becomes :class:`~mcp_assay.suite.oauth.steps.SignInFailed` for the step at hand.

Plain http to a host that is not loopback is refused before anything is sent there, even on the
target's own origin: the sign-in would put a client secret, a code or the token it obtains on the
network in clear text. That is the user's to allow (``--allow-insecure-http``), so the refusal is
:class:`~mcp_assay.vocabulary.errors.InsecureTransport` (one line, exit 2) rather than a failed step.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from mcp_assay.spec.rules.auth.facts import is_loopback_host
from mcp_assay.suite.addresses import PLAIN_HTTP, may_fetch
from mcp_assay.suite.oauth.steps import SignInFailed, Step
from mcp_assay.vocabulary.errors import InsecureTransport
from mcp_assay.vocabulary.protocol import HeaderKey, MediaType

__all__ = ["Answer", "OAuthHttp"]

_BODY_LIMIT = 1 << 20


@dataclass(frozen=True)
class Answer:
    """A response's status, headers and body, with the body's JSON object when it is one."""

    status: int
    headers: httpx.Headers
    text: str
    json: dict[str, Any] | None

    def oauth_error(self) -> str:
        """``HTTP 400 invalid_client: <description>``: the RFC 6749 §5.2 error when there is one."""
        if self.json is not None and isinstance(self.json.get("error"), str):
            description = self.json.get("error_description")
            detail = f": {description}" if isinstance(description, str) and description else ""
            return f"HTTP {self.status} {self.json['error']}{detail}"
        snippet = " ".join(self.text.split())[:160]
        return f"HTTP {self.status}" + (f": {snippet}" if snippet else "")


class OAuthHttp:
    """One HTTP client for the whole sign-in."""

    def __init__(
        self,
        *,
        timeout: float,
        transport: httpx.AsyncBaseTransport | None = None,
        allow_insecure_http: bool = False,
        note: Callable[[str], None] | None = None,
    ) -> None:
        self.timeout = timeout
        self.allow_insecure_http = allow_insecure_http
        self._note = note
        self._allowed: set[str] = set()
        self._client = httpx.AsyncClient(
            transport=transport,
            timeout=httpx.Timeout(timeout),
            follow_redirects=False,
            headers={"user-agent": "mcp-assay"},
            trust_env=False,
        )

    async def close(self) -> None:
        await self._client.aclose()

    def secure(self, url: str, what: str) -> None:
        """Refuse ``url`` (``what`` it is) when it is plain http to a host that is not loopback, unless allowed."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.scheme != "http" or is_loopback_host(host):
            return
        origin = f"http://{host}" + (f":{parts.port}" if parts.port else "")
        if not self.allow_insecure_http:
            raise InsecureTransport(
                f"refused: signing in would send credentials in clear text to {what} at {origin} (plain http to a "
                "host that is not loopback); use https, or pass --allow-insecure-http to allow it"
            )
        if origin not in self._allowed and self._note is not None:
            self._allowed.add(origin)
            self._note(f"credentials go in clear text to {what} at {origin}, as --allow-insecure-http allows")

    def check(self, url: str, named_by: str, step: Step, what: str = "the authorization server") -> None:
        """Refuse an address handed over by ``named_by`` that the suite does not fetch."""
        self.secure(url, what)
        refusal = may_fetch(url, named_by)
        if refusal is not None and not (refusal == PLAIN_HTTP and self.allow_insecure_http):
            raise SignInFailed(step, f"{url} is not fetched ({refusal})")

    async def send(
        self,
        method: str,
        url: str,
        step: Step,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        head_only: bool = False,
    ) -> Answer:
        """One request; ``head_only`` reads no body unless the answer is a 401 (an MCP answer may be a stream)."""
        try:
            async with asyncio.timeout(self.timeout):  # the whole exchange, whatever the transport
                async with self._client.stream(method, url, headers=dict(headers or {}), content=content) as response:
                    body = b""
                    if not head_only or response.status_code == 401:
                        async for chunk in response.aiter_bytes():
                            body += chunk
                            if len(body) >= _BODY_LIMIT:
                                break
        except TimeoutError:
            raise SignInFailed(step, f"{method} {url} got no answer within {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise SignInFailed(step, f"{method} {url} failed: {type(exc).__name__} {exc}".rstrip()) from None
        text = body.decode("utf-8", "replace")
        parsed: Any = None
        if text.strip().startswith("{"):
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
        return Answer(response.status_code, response.headers, text, parsed if isinstance(parsed, dict) else None)

    async def get_json(self, url: str, step: Step) -> Answer:
        return await self.send("GET", url, step, headers={HeaderKey.ACCEPT: MediaType.JSON})
