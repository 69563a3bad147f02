"""Building the suite's requests the way each protocol era expects them.

:class:`ModernClient` speaks 2026-07-28 style: every request names its revision and the client's
capabilities in ``params._meta``, and over HTTP carries ``MCP-Protocol-Version``, ``Mcp-Method``,
``Mcp-Name`` and ``Mcp-Param-*`` mirroring the body. :class:`LegacyClient` speaks the handshake era:
``initialize``, ``notifications/initialized``, then requests inside the session
(``Mcp-Session-Id`` and ``MCP-Protocol-Version`` on HTTP).

Every request goes through :func:`~mcp_assay.suite.outgoing.validate_outgoing` unless its probe is
marked invalid, and every one carries a probe tag, so every exchange has a reproduction.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from mcp_assay import __version__
from mcp_assay.spec.revisions import Revision
from mcp_assay.suite.outgoing import encode, validate_outgoing
from mcp_assay.suite.transports import Reply, StreamControl, Transport
from mcp_assay.vocabulary.protocol import ACCEPT_BOTH, Header, HeaderKey, MediaType, MetaKey
from mcp_assay.wire.jsonrpc import IdKey, id_key
from mcp_assay.wire.model import Probe

__all__ = [
    "CLIENT_INFO",
    "LegacyClient",
    "ModernClient",
    "encode_header_value",
    "mirrored_params",
]

CLIENT_INFO = {"name": "mcp-assay", "version": __version__}
_SENTINEL_PREFIX = "=?base64?"
_SENTINEL_SUFFIX = "?="


def _safe_header_text(value: str) -> bool:
    if value != value.strip():
        return False
    if not value.isascii():
        return False
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        return False
    return not (value.startswith(_SENTINEL_PREFIX) and value.endswith(_SENTINEL_SUFFIX))


def encode_header_value(value: str, *, force: bool = False) -> str:
    """A header value as 2026 HTTP wants it: plain when safe, else the ``=?base64?…?=`` sentinel."""
    if not force and _safe_header_text(value):
        return value
    return _SENTINEL_PREFIX + base64.b64encode(value.encode("utf-8")).decode("ascii") + _SENTINEL_SUFFIX


def _marked_properties(schema: Any, path: tuple[str, ...] = ()) -> Iterable[tuple[tuple[str, ...], str, Any]]:
    """``(path, header name, property schema)`` for each ``x-mcp-header`` reachable through ``properties``."""
    if not isinstance(schema, dict):
        return
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    for name, sub in properties.items():
        if not isinstance(sub, dict):
            continue
        header = sub.get("x-mcp-header")
        if isinstance(header, str) and header:
            yield (*path, name), header, sub
        yield from _marked_properties(sub, (*path, name))


def mirrored_params(tool: Mapping[str, Any] | None, arguments: Any) -> dict[str, str]:
    """``Mcp-Param-*`` headers for a ``tools/call`` of ``tool`` with ``arguments`` (HTTP-18)."""
    headers: dict[str, str] = {}
    if tool is None or not isinstance(arguments, dict):
        return headers
    for path, header, _schema in _marked_properties(tool.get("inputSchema")):
        value: Any = arguments
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int | float):
            text = str(value)
        elif isinstance(value, str):
            text = value
        else:
            continue
        headers[f"{Header.PARAM_PREFIX}{header}"] = encode_header_value(text)
    return headers


def _payload(revision: Revision, body: Any, raw: bytes | None, probe: Probe) -> bytes:
    """The bytes to send (``raw``, else ``body`` encoded), checked against ``revision`` unless ``probe`` is invalid."""
    data = raw if raw is not None else encode(body)
    validate_outgoing(revision, data, invalid=probe.invalid)
    return data


def _adjusted(
    standard: Mapping[str, str | bytes], changes: Mapping[str, str | bytes | None] | None
) -> dict[str, str | bytes]:
    """``standard`` with each header in ``changes`` replacing any of that name in any case (``None`` removes)."""
    wanted = dict(standard)
    for name, value in (changes or {}).items():
        for existing in [key for key in wanted if key.lower() == name.lower()]:
            del wanted[existing]
        if value is not None:
            wanted[name] = value
    return wanted


def _expected(body: Any) -> IdKey | None:
    """The id whose answer ends the wait for ``body``; ``None`` for a notification or a non-object."""
    return id_key(body.get("id")) if isinstance(body, dict) and "id" in body else None


class _Ids:
    def __init__(self) -> None:
        self._next = itertools.count(1)

    def __call__(self) -> int:
        return next(self._next)


class ModernClient:
    """Requests in the per-request-versioning era (2026-07-28)."""

    def __init__(
        self,
        transport: Transport,
        revision: Revision,
        *,
        capabilities: Mapping[str, Any] | None = None,
        client_info: Mapping[str, Any] | None = None,
        ids: _Ids | None = None,
    ) -> None:
        self.transport = transport
        self.revision = revision
        self.capabilities = dict(capabilities or {})
        self.client_info = dict(client_info or CLIENT_INFO)
        self.ids = ids or _Ids()
        self.tools: dict[str, Mapping[str, Any]] = {}
        """Tool definitions by name, for ``Mcp-Param-*`` mirroring."""

    def meta(self, *, drop: Iterable[str] = (), **extra: Any) -> dict[str, Any]:
        meta: dict[str, Any] = {
            MetaKey.PROTOCOL_VERSION: self.revision.name,
            MetaKey.CLIENT_CAPABILITIES: dict(self.capabilities),
            MetaKey.CLIENT_INFO: dict(self.client_info),
        }
        meta.update(extra)
        for key in drop:
            meta.pop(key, None)
        return meta

    def build(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        ident: Any = None,
        meta: Mapping[str, Any] | None = None,
        notification: bool = False,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"jsonrpc": "2.0"}
        if not notification:
            body["id"] = self.ids() if ident is None else ident
        body["method"] = method
        merged = dict(params or {})
        merged["_meta"] = dict(meta) if meta is not None else self.meta()
        body["params"] = merged
        return body

    def headers(self, body: Any, *, version: str | None = None) -> dict[str, str]:
        """The standard 2026 HTTP headers that mirror ``body``."""
        headers: dict[str, str] = {Header.CONTENT_TYPE: MediaType.JSON, Header.ACCEPT: ACCEPT_BOTH}
        if not isinstance(body, dict):
            headers[Header.PROTOCOL_VERSION] = version or self.revision.name
            return headers
        raw_params = body.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        raw_meta = params.get("_meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        declared = meta.get(MetaKey.PROTOCOL_VERSION)
        headers[Header.PROTOCOL_VERSION] = version or (declared if isinstance(declared, str) else self.revision.name)
        method = body.get("method")
        if isinstance(method, str) and "id" in body:
            headers[Header.METHOD] = method
            if method in ("tools/call", "prompts/get") and isinstance(params.get("name"), str):
                headers[Header.NAME] = encode_header_value(params["name"])
            if method == "resources/read" and isinstance(params.get("uri"), str):
                headers[Header.NAME] = encode_header_value(params["uri"])
            if method == "tools/call" and isinstance(params.get("name"), str):
                headers.update(mirrored_params(self.tools.get(params["name"]), params.get("arguments")))
        elif isinstance(method, str):
            headers[Header.METHOD] = method
        return headers

    async def send(
        self,
        body: Any,
        probe: Probe,
        *,
        raw: bytes | None = None,
        headers: Mapping[str, str | bytes | None] | None = None,
        replace_headers: bool = False,
        stream: StreamControl | None = None,
        timeout: float | None = None,
        **transport_options: Any,
    ) -> Reply:
        """Send ``body`` (or ``raw`` bytes) with standard headers, adjusted by ``headers`` (``None`` removes)."""
        data = _payload(self.revision, body, raw, probe)
        wanted = _adjusted({} if replace_headers else self.headers(body), headers)
        expect = _expected(body)
        if self.transport.kind != "http":
            wanted = {}
        return await self.transport.send(
            data, probe=probe.at(self.revision.name), expect=expect, headers=wanted, stream=stream, timeout=timeout,
            **transport_options,
        )  # fmt: skip

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        probe: Probe,
        ident: Any = None,
        meta: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Reply:
        return await self.send(self.build(method, params, ident=ident, meta=meta), probe, **options)

    async def notify(self, method: str, params: Mapping[str, Any] | None = None, *, probe: Probe) -> Reply:
        body = self.build(method, params, notification=True)
        if self.transport.kind == "stdio":
            data = _payload(self.revision, body, None, probe)
            return await self.transport.send(data, probe=probe.at(self.revision.name), expect=None, wait=False)
        return await self.send(body, probe)


class LegacyClient:
    """Requests in the handshake era (2025-11-25): initialize, then a session."""

    def __init__(self, transport: Transport, revision: Revision, *, ids: _Ids | None = None) -> None:
        self.transport = transport
        self.revision = revision
        self.ids = ids or _Ids()
        self.session: str | None = None
        self.negotiated: str | None = None
        self.initialize_result: dict[str, Any] | None = None
        self.capabilities: dict[str, Any] = {}

    def build(
        self, method: str, params: Mapping[str, Any] | None = None, *, ident: Any = None, notification: bool = False
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"jsonrpc": "2.0"}
        if not notification:
            body["id"] = self.ids() if ident is None else ident
        body["method"] = method
        if params is not None:
            body["params"] = dict(params)
        return body

    def headers(self, *, session: bool = True, version: bool = True) -> dict[str, str]:
        headers: dict[str, str] = {Header.CONTENT_TYPE: MediaType.JSON, Header.ACCEPT: ACCEPT_BOTH}
        if version and self.negotiated is not None:
            headers[Header.PROTOCOL_VERSION] = self.negotiated
        if session and self.session is not None:
            headers[Header.SESSION_ID] = self.session
        return headers

    async def send(
        self,
        body: Any,
        probe: Probe,
        *,
        raw: bytes | None = None,
        headers: Mapping[str, str | None] | None = None,
        session: bool = True,
        version: bool = True,
        stream: StreamControl | None = None,
        timeout: float | None = None,
        **transport_options: Any,
    ) -> Reply:
        data = _payload(self.revision, body, raw, probe)
        wanted = _adjusted(self.headers(session=session, version=version), headers)
        expect = _expected(body)
        if self.transport.kind != "http":
            if expect is None:
                return await self.transport.send(data, probe=probe.at(self.revision.name), expect=None, wait=False)
            wanted = {}
        return await self.transport.send(
            data, probe=probe.at(self.revision.name), expect=expect, headers=wanted, stream=stream, timeout=timeout,
            **transport_options,
        )  # fmt: skip

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, probe: Probe, ident: Any = None, **options: Any
    ) -> Reply:
        return await self.send(self.build(method, params, ident=ident), probe, **options)

    async def initialize(self, version: str, probe: Probe, *, adopt: bool = True) -> Reply:
        """Send ``initialize`` offering ``version``; remember the session and negotiated version if ``adopt``."""
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": dict(CLIENT_INFO)}
        body = self.build("initialize", params)
        reply = await self.send(body, probe, session=False, version=False)
        if adopt and reply.ok:
            result = reply.result
            negotiated = result.get("protocolVersion")
            self.negotiated = negotiated if isinstance(negotiated, str) else version
            self.initialize_result = result
            capabilities = result.get("capabilities")
            self.capabilities = capabilities if isinstance(capabilities, dict) else {}
            session = reply.headers.get(HeaderKey.SESSION_ID)
            if session:
                self.session = session
        return reply

    async def notify(self, method: str, params: Mapping[str, Any] | None = None, *, probe: Probe) -> Reply:
        return await self.send(self.build(method, params, notification=True), probe)

    async def initialized(self, probe: Probe) -> Reply:
        body = self.build("notifications/initialized", notification=True)
        return await self.send(body, probe)
