"""A lane is one era of the target over the run's transport, with a client per principal.

Behaviour cases run once per era the server serves, so each lane opens its own connections: over
HTTP one per principal, carrying that principal's credentials (a 2025 lane initializes a session
for each); over stdio one server process per principal, started with that principal's ``env``
(stdio servers take credentials from their environment). A principal a case needs but the
transport cannot represent (no token for HTTP, no ``env`` for a second stdio identity) raises
:class:`Unavailable`, which the case turns into a *not verified* naming the missing key.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mcp_assay.cases import NO_FACTS, Case, Facts
from mcp_assay.cases import behaviour as cases
from mcp_assay.spec.revisions import Revision
from mcp_assay.suite.behaviour.config import BehaviourConfig, Principal
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.credentials import Credentials
from mcp_assay.suite.era_clients import LegacyClient, ModernClient
from mcp_assay.suite.transports import Transport
from mcp_assay.suite.transports.http import HttpTransport
from mcp_assay.suite.transports.stdio import StdioTransport
from mcp_assay.wire.model import Probe

__all__ = ["Client", "Connect", "Lane", "Unavailable", "refusable"]

Client = ModernClient | LegacyClient
Connect = Callable[..., Awaitable[Transport]]
"""``connect(credentials=..., env=..., label=...)``: a new transport to the target (see the runner)."""


def refusable(client: Client) -> dict[str, Any]:
    """Transport options that let a 401/403 come back as an answer (a refusal is what some cases expect)."""
    return {"allow_refusal": True} if client.transport.kind == "http" else {}


class Unavailable(Exception):
    """A case cannot run in this lane; the message names what is missing."""


@dataclass
class Lane:
    """One era over the run's transport."""

    revision: Revision
    transport: str
    """``http`` or ``stdio``."""
    config: SuiteConfig
    behaviour: BehaviourConfig
    connect: Connect
    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Tool definitions, for the ``Mcp-Param-*`` headers of 2026 HTTP calls."""
    main: Client | None = None
    """The run's own client, used as the default identity of its era over stdio (saves starting a server)."""
    _clients: dict[str | None, Client] = field(default_factory=dict)
    _locks: dict[str | None, asyncio.Lock] = field(default_factory=dict)
    _extra: list[Transport] = field(default_factory=list)

    @property
    def modern(self) -> bool:
        return self.revision.has("per_request_version")

    @property
    def revision_name(self) -> str:
        return self.revision.name

    @property
    def label(self) -> str:
        return f"{self.revision_name} over {self.transport}"

    def facts(self, step: Facts = NO_FACTS) -> Facts:
        """The facts of one step of a case in this lane: the step's own, with the lane's era and transport."""
        return replace(step, lane=self.revision_name, transport=self.transport)

    def probe(self, case: Case, intent: str, step: Facts = NO_FACTS) -> Probe:
        """The tag of one request of ``case`` in this lane."""
        return Probe.of(case, intent, facts=self.facts(step))

    # -- identities ------------------------------------------------------------------------------
    def _principal(self, name: str) -> Principal:
        return self.behaviour.principals[name]

    def identity(self, name: str | None, *, distinct: bool) -> str | None:
        """The key a principal's client is kept under; ``None`` is the run's own credentials or process.

        ``distinct`` asks for the principal's own identity (lists, scope refusals, handles); without
        it a stdio principal without ``env`` shares the default process (writes, witness reads)."""
        if name is None:
            return None
        principal = self._principal(name)
        if self.transport == "http":
            if not principal.http:
                raise Unavailable(f"principals.{name} has no token or headers, which HTTP needs")
            return name
        if principal.env:
            return name
        if distinct:
            raise Unavailable(
                f"principals.{name} has no env: over stdio a principal is the environment the server is started with"
            )
        return None

    def _credentials(self, principal: Principal) -> Credentials:
        config = self.config
        return Credentials(
            token=principal.token,
            auth_header=config.auth_header,
            auth_scheme=config.auth_scheme,
            auth_mode=config.auth_mode if config.auth_mode != "none" else "header",
            auth_query_param=config.auth_query_param,
            headers=principal.headers,
        )

    def credentials(self, name: str | None) -> Credentials:
        """What ``name`` presents over HTTP (``None``: the run's own credentials)."""
        return self._credentials(self._principal(name)) if name is not None else self.config.credentials()

    async def impostor(self, name: str | None, credentials: Credentials, label: str) -> Client:
        """A client presenting ``credentials`` in place of ``name``'s, on a connection of its own.

        It shares the principal's request ids and, in 2025, its session (no handshake of its own:
        the point is a call inside a session the credentials do not belong to)."""
        base = await self.client(name)
        transport = await self.connect(credentials=credentials, label=label)
        self.keep(transport)
        if isinstance(base, ModernClient):
            modern = ModernClient(transport, self.revision, ids=base.ids)
            modern.tools = dict(self.tools)
            return modern
        legacy = LegacyClient(transport, self.revision, ids=base.ids)
        legacy.session, legacy.negotiated = base.session, base.negotiated
        return legacy

    async def _transport(self, key: str | None, label: str) -> Transport:
        principal = self._principal(key) if key is not None else None
        if self.transport == "http":
            credentials = self._credentials(principal) if principal is not None else None
            return await self.connect(credentials=credentials, label=label)
        env = dict(principal.env) if principal is not None else None
        return await self.connect(env=env, label=label)

    async def client(self, name: str | None, *, distinct: bool = False) -> Client:
        """The lane's client for a principal (opened, and for 2025 initialized, on first use)."""
        key = self.identity(name, distinct=distinct)
        if key is None and self.main is not None and self.transport == "stdio":
            return self.main
        async with self._locks.setdefault(key, asyncio.Lock()):  # two cases asking at once share one server
            if key not in self._clients:
                self._clients[key] = await self.new_client(key)
            return self._clients[key]

    async def new_client(self, key: str | None, *, connection: str = "") -> Client:
        """A client on a connection of its own (a 2026 race closes it to cancel)."""
        who = key or "default"
        transport = await self._transport(key, connection or f"{self.revision_name[:4]}-{who}")
        if self.modern:
            modern = ModernClient(transport, self.revision)
            modern.tools = dict(self.tools)
            return modern
        legacy = LegacyClient(transport, self.revision)
        reply = await legacy.initialize(
            self.revision.name,
            self.probe(cases.INITIALIZE, f"initialize a {self.revision_name} session as {who}", Facts(principal=key)),
        )
        if not reply.ok:
            raise Unavailable(f"initialize as {who} answered {reply.describe()}")
        await legacy.initialized(self.probe(cases.INITIALIZED, "notifications/initialized", Facts(principal=key)))
        return legacy

    def keep(self, transport: Transport) -> None:
        self._extra.append(transport)

    async def close(self) -> None:
        """Close what the lane opened, all at once (stdio servers exit; 2025 HTTP sessions are left to expire)."""
        transports = [client.transport for client in self._clients.values()] + self._extra
        self._clients.clear()
        self._extra.clear()

        async def close(transport: Transport) -> None:
            if isinstance(transport, StdioTransport | HttpTransport):
                await transport.close()

        await asyncio.gather(*(close(transport) for transport in transports), return_exceptions=True)
