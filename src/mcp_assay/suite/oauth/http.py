"""The sign-in's HTTP: JSON documents fetched and posted, redirects never followed, failures as reasons.

The sign-in talks to URLs the target and its authorization server hand it, so every address is
checked first (:func:`~mcp_assay.suite.probes.auth.may_fetch`: https, or http on loopback, and no
private address named by a public host), redirects are not followed, and a body is read only up to
a bound. An answer that is not what was asked for is returned as data; only a transport failure or a
refused address becomes :class:`~mcp_assay.suite.oauth.steps.SignInFailed` for the step at hand.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from mcp_assay.suite.addresses import may_fetch
from mcp_assay.suite.oauth.steps import SignInFailed, Step

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

    def __init__(self, *, timeout: float, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.timeout = timeout
        self._client = httpx.AsyncClient(
            transport=transport,
            timeout=httpx.Timeout(timeout),
            follow_redirects=False,
            headers={"user-agent": "mcp-assay"},
            trust_env=False,
        )

    async def close(self) -> None:
        await self._client.aclose()

    def check(self, url: str, named_by: str, step: Step) -> None:
        """Refuse an address handed over by ``named_by`` that the suite does not fetch."""
        refusal = may_fetch(url, named_by)
        if refusal is not None:
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
        return await self.send("GET", url, step, headers={"accept": "application/json"})
