"""The server under test, as a source of connections: transports and clients, each recorded for one revision.

Every transport the run opens records into a buffer of the :class:`~mcp_assay.suite.context.Router`
named after the revision it serves, so the traffic of the revisions a run tests side by side ends
up in their own segments. The target remembers what it opened for each revision, so a revision's
connections (and stdio processes) are closed when its cases are done, before the next segment of
the log begins.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import httpx

from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.context import Router
from mcp_assay.suite.credentials import Credentials
from mcp_assay.suite.era_clients import LegacyClient, ModernClient
from mcp_assay.suite.events import Event, StderrLine
from mcp_assay.suite.ratelimit import RateLimiter
from mcp_assay.suite.selection import handshake_revision, modern_revision
from mcp_assay.suite.transports import Transport
from mcp_assay.suite.transports.http import HttpTransport
from mcp_assay.suite.transports.stdio import StdioTransport

__all__ = ["Target"]


@dataclass
class Target:
    """Makes transports and clients for the configured target, and closes them per revision or all at the end."""

    config: SuiteConfig
    spec: SpecSet
    credentials: Credentials
    router: Router
    new_id: Callable[[str], str]
    limiter: RateLimiter
    emit: Callable[[Event], None]
    mock: httpx.AsyncBaseTransport | None = None
    transports: list[tuple[str | None, Transport]] = field(default_factory=list)
    """Every transport opened, with the buffer (revision) it records into."""
    processes: list[StdioTransport] = field(default_factory=list)
    """Every server process started, closed or not (what one wrote on stderr says why a run judged nothing)."""
    _processes: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _connections: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def connection(self) -> str:
        """A fresh connection label: each HTTP client (and so each TCP connection) gets its own."""
        return f"c{next(self._connections)}"

    def _stderr(self) -> Callable[[str], None] | None:
        return (lambda text: self.emit(StderrLine(text))) if self.config.verbose else None

    async def transport(
        self,
        buffer: str | None,
        connection: str,
        *,
        credentials: Credentials | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Transport:
        """A new transport recording into ``buffer``: an HTTP client, or a new server process over stdio."""
        recorder = self.router.sink(buffer)
        transport: Transport
        if self.config.url:
            transport = HttpTransport(
                self.config.url,
                credentials=credentials or self.credentials,
                recorder=recorder,
                new_id=self.new_id,
                limiter=self.limiter,
                timeout=self.config.timeout,
                transport=self.mock,
                connection=connection,
            )
        else:
            stdio = StdioTransport(
                self.config.command,
                recorder=recorder,
                new_id=self.new_id,
                connection=f"p{next(self._processes)}",
                timeout=self.config.timeout,
                env=env,
                on_stderr=self._stderr(),
            )
            self.processes.append(stdio)
            await stdio.start()
            transport = stdio
        self.transports.append((buffer, transport))
        return transport

    async def connect(
        self,
        *,
        credentials: Credentials | None = None,
        env: Mapping[str, str] | None = None,
        label: str = "",
        buffer: str | None = None,
    ) -> Transport:
        """A transport of its own for the behaviour cases: another principal's credentials over HTTP, or a new
        server process with extra environment over stdio. Judged directly; closed with its revision's others."""
        connection = f"{self.connection()}-{label}" if label else self.connection()
        return await self.transport(buffer, connection, credentials=credentials, env=env)

    async def modern(self) -> tuple[Transport, ModernClient]:
        """Selection's client for the modern revision (recorded into that revision's buffer)."""
        revision = modern_revision(self.spec)
        assert revision is not None
        transport = await self.transport(revision.name, self.connection())
        return transport, ModernClient(transport, revision)

    async def legacy(self) -> tuple[Transport, LegacyClient]:
        """Selection's client for the handshake revision (recorded into that revision's buffer)."""
        revision = handshake_revision(self.spec)
        assert revision is not None
        transport = await self.transport(revision.name, self.connection())
        return transport, LegacyClient(transport, revision)

    def stderr(self) -> list[str]:
        """The last stderr lines of the first server process that wrote any."""
        return next((list(process.stderr) for process in self.processes if process.stderr), [])

    async def close(self, transport: Transport) -> None:
        """Close one transport (and forget it)."""
        self.transports = [(owner, item) for owner, item in self.transports if item is not transport]
        if isinstance(transport, StdioTransport | HttpTransport):
            await transport.close()

    async def close_revision(self, buffer: str) -> None:
        """Close every transport recording into ``buffer`` (a revision whose cases are done)."""
        mine = [transport for owner, transport in self.transports if owner == buffer]
        self.transports = [(owner, transport) for owner, transport in self.transports if owner != buffer]
        await self._close(mine)

    async def close_all(self) -> None:
        everything = [transport for _, transport in self.transports]
        self.transports = []
        await self._close(everything)

    @staticmethod
    async def _close(transports: list[Transport]) -> None:
        for transport in transports:
            try:
                if isinstance(transport, StdioTransport | HttpTransport):
                    await transport.close()
            except Exception:  # noqa: BLE001 - closing must never hide the report
                continue
