"""Authorization metadata documents in the traffic: Protected Resource Metadata and AS metadata.

A PRM document is found at its well-known paths or at the ``resource_metadata`` URL a Bearer
challenge names; authorization server metadata at the OAuth and OpenID well-known paths. Each
fetch is kept with what kind it is and, when it was served properly, its JSON object. The AUTH
rules all ask the same questions of the same log, so the answers are worked out once per log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth.facts import AS_METADATA_MARKERS, challenges_of, prm_kind
from mcp_assay.spec.rules.shared.headers import response_headers
from mcp_assay.vocabulary.protocol import HeaderKey, MediaType
from mcp_assay.wire.model import HttpExchange

__all__ = [
    "Document",
    "NOT_CAPTURED",
    "challenged_metadata_urls",
    "home_origin",
    "metadata_documents",
    "origin_of",
    "prm_documents",
]

NOT_CAPTURED = (
    "a client may have fetched it earlier or around the proxy: a reverse proxy sees only what is sent to the "
    "MCP server's origin, `mcp-assay proxy --mode regular` sees a client's other requests too"
)


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def _json_object(exchange: HttpExchange) -> dict[str, Any] | None:
    response = exchange.response
    if response is None or response.body is None:
        return None
    try:
        value = json.loads(response.body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class Document:
    """A metadata document fetch: the exchange, what kind it is, and the JSON object when one was served."""

    exchange: HttpExchange
    kind: str
    """``path``, ``root`` or ``header`` (PRM), ``oauth`` or ``openid`` (authorization server metadata)."""
    body: dict[str, Any] | None
    """The JSON object, when the answer was 200 with the JSON media type and an object body (else ``None``)."""

    @property
    def url(self) -> str:
        return self.exchange.request.url

    @property
    def status(self) -> int | None:
        return self.exchange.response.status if self.exchange.response is not None else None

    def problem(self) -> str | None:
        """Why this is not a served document (``None`` when it is)."""
        response = self.exchange.response
        if response is None:
            return "got no answer"
        if response.status != 200:
            return f"answered HTTP {response.status}"
        if response.content_type != MediaType.JSON:
            shown = response.headers.get(HeaderKey.CONTENT_TYPE) or "(none)"
            return f"answered with Content-Type {shown}, not application/json"
        if self.body is None:
            return "answered with a body that is not a JSON object"
        return None


def challenged_metadata_urls(ctx: Context) -> dict[str, HttpExchange]:
    """``resource_metadata`` URLs named by Bearer challenges, with the first exchange naming each."""
    return ctx.view(_find_challenged)


def _find_challenged(ctx: Context) -> dict[str, HttpExchange]:
    urls: dict[str, HttpExchange] = {}
    for exchange, challenge in response_headers(ctx, HeaderKey.WWW_AUTHENTICATE):
        if challenge is None or exchange.response is None:
            continue  # no answer, or one without a challenge
        bearer = challenges_of(exchange.response.headers).bearer
        url = bearer.get("resource_metadata") if bearer is not None else None
        if url:
            urls.setdefault(url, exchange)
    return urls


def metadata_documents(ctx: Context) -> list[Document]:
    """Every PRM and authorization server metadata fetch in the log (``GET``/``HEAD``)."""
    return ctx.view(_find_documents)


def _find_documents(ctx: Context) -> list[Document]:
    named = challenged_metadata_urls(ctx)
    documents = []
    for exchange in ctx.log.http_exchanges():
        request = exchange.request
        if request.method not in ("GET", "HEAD"):
            continue
        path = urlsplit(request.url).path
        kind = prm_kind(request.url)
        if kind is None and request.url in named:
            kind = "header"
        elif kind is None and AS_METADATA_MARKERS[0] in path:
            kind = "oauth"
        elif kind is None and AS_METADATA_MARKERS[1] in path:
            kind = "openid"
        if kind is not None:
            response = exchange.response
            shown = response is not None and response.status == 200 and response.content_type == MediaType.JSON
            documents.append(Document(exchange, kind, _json_object(exchange) if shown else None))
    return documents


def prm_documents(ctx: Context, *, served: bool = True) -> list[Document]:
    return [
        doc
        for doc in metadata_documents(ctx)
        if doc.kind in ("path", "root", "header") and (not served or doc.problem() is None)
    ]


def home_origin(doc: Document, ctx: Context) -> str:
    """The origin a PRM fetch speaks for: its own, or for a challenge's URL the challenging endpoint's."""
    challenge = challenged_metadata_urls(ctx).get(doc.url) if doc.kind == "header" else None
    return origin_of(challenge.request.url if challenge is not None else doc.url)
