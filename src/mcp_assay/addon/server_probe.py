"""Probes toward the server while a real client is connected (``--probe-server``).

A server behind OAuth, or one that only a configured client can reach, is hard to probe on its
own. Through the proxy a client that signed in shows both what the server accepts and how to
reach it: once a client's request shows it (a 2026 request the server served, or a 2025
``initialize`` it answered), :class:`ServerProbe` sends the active suite's probe families upstream
itself, on that revision and with the credentials that request carried: header/body mismatches,
an unsupported version, an unknown and a removed method, malformed JSON-RPC, an unknown tool,
pagination, and the cancellation of a tool call the suite may make (a tool named in the config's
``tool-args``, else one that needs no arguments and is not annotated destructive; no argument is
ever invented for a tool with side effects). In 2025 the handshake family's probes run on a
session of the probe's own, ended with ``DELETE`` afterwards.

The probes reuse the suite's families, clients and transport, go straight to the server (not
through the proxy, so no injection touches them), paced by ``--probe-rate``, and feed the same
session as the client's traffic: every exchange carries its probe tag, so the engine never holds
it against the client, and the report says ``active`` (probed) for what they established. Each
credential is a header of the client's request or a value in its URL; the session's redactor
learns it from the very records that carry it, before anything is printed or recorded.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from mcp_assay.addon.idle_hooks import offer_flow_hooks
from mcp_assay.cases.elsewhere import SERVER_PROBE_DISCOVER, SERVER_PROBE_INITIALIZE
from mcp_assay.recording.records import observation_record, records_of
from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec.revisions import Revision, SpecSet
from mcp_assay.suite.config import SuiteConfig, read_probe_config
from mcp_assay.suite.context import Router, SuiteContext
from mcp_assay.suite.credentials import Credentials
from mcp_assay.suite.era_clients import LegacyClient, ModernClient
from mcp_assay.suite.probes import FAMILIES
from mcp_assay.suite.probes.handshake import confirm, teardown
from mcp_assay.suite.ratelimit import RateLimiter
from mcp_assay.suite.transports.http import HttpTransport
from mcp_assay.vocabulary.errors import AssayError, CredentialsRefused, HarnessError, RateLimited, TransportFailure
from mcp_assay.vocabulary.protocol import Era, MetaKey
from mcp_assay.wire.model import Exchange, Probe
from mcp_assay.wire.traffic import ExchangeLog

__all__ = ["DEFAULT_RATE", "PROBE_FAMILIES", "Opening", "ServerProbe", "opening_of"]

log = logging.getLogger("mcp_assay.server_probe")

PROBE_FAMILIES = ("handshake", "versioning", "envelope", "methods", "tools", "pagination")
"""The suite's families the proxy sends (each where its era, transport and capability allow)."""
DEFAULT_RATE = 600
"""Requests per minute (``--probe-rate``): the probes are paced so a live server is not flooded."""
WAIT_S = 60.0
"""How long the end of a session waits for a probe run still going (it stops between families)."""


@dataclass(frozen=True, slots=True)
class Opening:
    """What a client's request showed: where the server is, which revision it served, with which credentials."""

    url: str
    era: Era
    revision: str
    headers: tuple[tuple[str, str], ...]
    """The request's credential-bearing headers (the URL keeps any credential in its query)."""


def opening_of(method: str, url: str, headers: Mapping[str, str], body: bytes, status: int) -> Opening | None:
    """The opening a served client request gives (a 2026 request, or a 2025 ``initialize``), or ``None``."""
    if method != "POST" or not 200 <= status < 300:
        return None
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    if not isinstance(payload, dict) or "id" not in payload or not isinstance(payload.get("method"), str):
        return None
    params = payload.get("params") if isinstance(payload.get("params"), dict) else {}
    meta = params.get("_meta") if isinstance(params, dict) and isinstance(params.get("_meta"), dict) else {}
    secret = Redactor()
    credentials = tuple((name, value) for name, value in headers.items() if secret.is_secret_header(name))
    declared = meta.get(MetaKey.PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if isinstance(declared, str):
        return Opening(url, Era.MODERN, declared, credentials)
    offered = params.get("protocolVersion") if isinstance(params, dict) else None
    if payload["method"] == "initialize" and isinstance(offered, str):
        return Opening(url, Era.HANDSHAKE, offered, credentials)
    return None


class _Feed(Router):
    """Routes the probes' exchanges into the live session as records (never into a log of their own)."""

    def __init__(self, feed: Callable[[Mapping[str, Any]], None]) -> None:
        super().__init__(ExchangeLog(), None, lambda event: None)
        self._feed = feed

    def _judge(self, item: Exchange) -> None:
        for record in records_of(item):
            self._feed(record)


class ServerProbe:
    """mitmproxy addon: probes the server once per era, on the revision and credentials a client showed."""

    def __init__(
        self,
        *,
        spec: Callable[[], SpecSet | None],
        notify: Callable[[Mapping[str, Any]], None],
    ) -> None:
        self.spec = spec
        self.notify = notify
        self.enabled = False
        self.rate = DEFAULT_RATE
        self.config_values: dict[str, Any] = {}
        self._started: set[str] = set()
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        offer_flow_hooks(self, ("response",), active=False)  # until asked to probe the server

    # -- options -------------------------------------------------------------------------------------
    def load(self, loader: Any) -> None:
        loader.add_option(
            "mcp_assay_probe_server", bool, False,
            f"While a real client is connected, send the suite's probe families ({', '.join(PROBE_FAMILIES)}) to the "
            "server on the client's revision and credentials (paced; the probes are marked and never held against "
            "the client).",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_probe_config", Optional[str], None,  # noqa: UP045 - mitmproxy compares the typespec
            "A `mcp-assay run` config file for the server probes (tool-args, failing-tool, page-limit, timeout ...).",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_probe_rate", int, DEFAULT_RATE, "Requests per minute the server probes send at most."
        )

    def configure(self, updated: set[str]) -> None:
        from mitmproxy import ctx
        from mitmproxy import exceptions as _exceptions

        exceptions: Any = _exceptions
        options = ctx.options
        self.enabled = bool(options.mcp_assay_probe_server)
        offer_flow_hooks(self, ("response",), active=self.enabled)
        if options.mcp_assay_probe_rate <= 0:
            raise exceptions.OptionsError("mcp_assay_probe_rate: must be positive")
        self.rate = int(options.mcp_assay_probe_rate)
        if "mcp_assay_probe_config" in updated:
            try:
                path = options.mcp_assay_probe_config
                self.config_values = read_probe_config(path, "mcp_assay_probe_config") if path else {}
            except AssayError as exc:
                raise exceptions.OptionsError(str(exc)) from exc

    # -- hooks ---------------------------------------------------------------------------------------
    def response(self, flow: Any) -> None:
        if not self.enabled or flow.response is None or flow.metadata.get("mcp_assay_injected"):
            return
        try:
            request = flow.request
            opening = opening_of(
                request.method, request.url, dict(request.headers.items()), request.raw_content or b"",
                int(flow.response.status_code),
            )  # fmt: skip
            if opening is not None:
                self._start(opening)
        except Exception:
            log.exception("mcp-assay: could not start the server probes")

    def done(self) -> None:
        self._stop.set()
        deadline = time.monotonic() + WAIT_S
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    # -- probing -------------------------------------------------------------------------------------
    def _start(self, opening: Opening) -> None:
        with self._lock:
            if opening.era in self._started or self._stop.is_set():
                return
            self._started.add(opening.era)
        thread = threading.Thread(
            target=self._run, args=(opening,), name=f"mcp-assay-probe-{opening.era.value}", daemon=True
        )
        self._threads.append(thread)
        thread.start()

    def _run(self, opening: Opening) -> None:
        try:
            asyncio.run(self._probe(opening))
        except Exception as exc:  # the client's traffic keeps flowing whatever happens here
            log.exception("mcp-assay: the server probes stopped")
            self._note(f"the server probes stopped: {type(exc).__name__}: {exc}")

    def _new_id(self, prefix: str) -> str:
        return f"probe-{prefix}{next(self._ids)}"

    async def _probe(self, opening: Opening) -> None:
        spec = self.spec()
        revision = spec.get(opening.revision) if spec is not None else None
        if spec is None or revision is None:
            self._note(f"the server was not probed: revision {opening.revision} is outside the window")
            return
        config = SuiteConfig.from_options({"url": opening.url}, self.config_values)
        credentials = Credentials(headers=opening.headers, auth_mode="none")
        router = _Feed(self.notify)
        limiter = RateLimiter(per_minute=self.rate, retry_budget_ms=config.retry_budget_ms)
        transports: list[HttpTransport] = []
        connections = itertools.count(1)

        def transport() -> HttpTransport:
            made = HttpTransport(
                opening.url, credentials=credentials, recorder=router.sink(), new_id=self._new_id, limiter=limiter,
                timeout=config.timeout, connection=f"probe-{opening.era.value}-{next(connections)}",
            )  # fmt: skip
            transports.append(made)
            return made

        self._note(f"server probes ({revision.name}): started, on the client's revision and credentials")
        try:
            ctx = await self._context(opening, spec, revision, config, router, transport)
            if ctx is not None:
                await self._families(ctx, opening.era)
        finally:
            for made in transports:
                await made.close()
        self._note(f"server probes ({revision.name}): done")

    async def _context(
        self,
        opening: Opening,
        spec: SpecSet,
        revision: Revision,
        config: SuiteConfig,
        router: Router,
        transport: Callable[[], HttpTransport],
    ) -> SuiteContext | None:
        client: ModernClient | LegacyClient
        try:
            if opening.era is Era.MODERN:
                client = ModernClient(transport(), revision)
                reply = await client.request(
                    "server/discover",
                    {},
                    probe=Probe.of(SERVER_PROBE_DISCOVER, "the server probes begin with discover"),
                )
                result = reply.result if reply.ok else None
            else:
                legacy = LegacyClient(transport(), revision)
                reply = await legacy.initialize(
                    revision.name, Probe.of(SERVER_PROBE_INITIALIZE, "a session of the server probes' own")
                )
                result = legacy.initialize_result
                client = legacy
        except (TransportFailure, CredentialsRefused, RateLimited, HarnessError) as exc:
            self._note(f"the server probes ({opening.era.value}) could not start: {exc}")
            return None
        capabilities = result.get("capabilities") if isinstance(result, dict) else None

        async def fresh() -> ModernClient | LegacyClient | None:
            if isinstance(client, ModernClient):
                other = ModernClient(transport(), revision)
                other.tools = client.tools
                return other
            return LegacyClient(transport(), revision)

        # handshake_offered: whether the server serves initialize is not asked here, so the case of a removed
        # initialize (which only a modern-only server must refuse, A21) is left out
        ctx = SuiteContext(
            config=config, spec=spec, revision=revision, client=client, router=router, new_id=self._new_id,
            capabilities=capabilities if isinstance(capabilities, dict) else None,
            capability_source="server/discover" if opening.era is Era.MODERN else "initialize",
            offered={}, fresh=fresh, handshake_offered=True,
        )  # fmt: skip
        ctx.discover_result = result if isinstance(result, dict) and opening.era is Era.MODERN else None
        return ctx

    async def _families(self, ctx: SuiteContext, era: Era) -> None:
        if era is Era.HANDSHAKE:
            await self._guarded(ctx, "handshake", confirm(ctx))
        for family in FAMILIES:
            if self._stop.is_set():
                self._note(f"the server probes ({era.value}) stopped with the session, before the {family.name} family")
                break
            if family.name not in PROBE_FAMILIES or era not in family.eras or "http" not in family.transports:
                continue
            if family.capability is not None and not ctx.advertises(family.capability):
                continue
            ctx.family = family.name
            await self._guarded(ctx, family.name, family.run(ctx))
        if era is Era.HANDSHAKE:
            await self._guarded(ctx, "handshake", teardown(ctx))

    async def _guarded(self, ctx: SuiteContext, name: str, work: Any) -> None:
        try:
            await work
        except (TransportFailure, CredentialsRefused, RateLimited, HarnessError) as exc:
            self._note(f"server probes, {name} family: {exc}")

    def _note(self, detail: str) -> None:
        self.notify(observation_record(self._new_id("o"), time.time(), "server-probe", {"detail": detail}))
