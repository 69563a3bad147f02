"""From the server's answers to the revisions a run tests: the choice, what is left out, one context each.

:func:`~mcp_assay.suite.selection.select_revision` asks the server what it serves; :func:`choose`
makes that the run's choice. What selection opened for a revision the run does not test is
closed, and its traffic left out of the judged log. A server that refused a run holding no
credential it takes still gets the cases that need none, on an assumed revision. Each revision
tested then gets a :class:`~mcp_assay.suite.context.SuiteContext` of its own (its client, its
capabilities, its segment of the log), and :func:`marker` opens that segment.
"""

from __future__ import annotations

import logging
import time
import traceback
from functools import partial
from typing import Any

from mcp_assay.cases import handshake as cases
from mcp_assay.spec.revisions import Revision, SpecSet
from mcp_assay.suite.context import SuiteContext
from mcp_assay.suite.era_clients import LegacyClient, ModernClient
from mcp_assay.suite.judging import MODERN_ONLY, RUN_OBSERVATION
from mcp_assay.suite.selection import (
    CAPABILITY_SOURCES,
    Selection,
    handshake_revision,
    mark_unusable,
    modern_revision,
    select_revision,
)
from mcp_assay.suite.signin import assumed_revision, everything_else, why_tokenless
from mcp_assay.suite.state import RunState
from mcp_assay.suite.transports.http import HttpTransport
from mcp_assay.vocabulary.errors import CredentialsRefused, RateLimited, TransportFailure
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.wire.model import Observation, Probe

__all__ = ["choose", "context", "marker", "selection_buffers"]

log = logging.getLogger(__name__)


async def choose(state: RunState, forced: Revision | None) -> Selection:
    """The revisions the run tests (none, and why, when none can be), with the clients selection opened for them."""
    selection = await _select(state, forced)
    await _without_credentials(state, selection, forced)
    await _settle(state, selection)
    return selection


def selection_buffers(spec: SpecSet) -> list[str]:
    """The buffers selection's discover and initialize were held in (named by their revisions)."""
    return [rev.name for rev in (modern_revision(spec), handshake_revision(spec)) if rev is not None]


async def _select(state: RunState, forced: Revision | None) -> Selection:
    try:
        selection = await select_revision(
            state.spec,
            forced=forced,
            modern_only=state.config.modern_only,
            modern_factory=state.target.modern,
            legacy_factory=state.target.legacy,
        )
    except Exception as exc:  # noqa: BLE001 - whatever the server answered, the run reports
        trace = "".join(traceback.format_exception(exc))
        log.error("mcp-assay: choosing the revision stopped on an error of its own:\n%s", state.redactor.text(trace))
        detail = f"{type(exc).__name__}: {str(exc)[:200]} (a defect of mcp-assay, not of the server)"
        selection = Selection(note=f"could not choose a revision: {detail}", problem="harness", detail=detail)
    # a server that answered with nothing usable has its answers judged, whichever era they belong to
    mark_unusable(selection, answered=state.router.answered(*selection_buffers(state.spec)))
    return selection


async def _without_credentials(state: RunState, selection: Selection, forced: Revision | None) -> None:
    """A server that refused a run holding no credential it takes still gets its no-credential cases.

    The revision cannot be asked for, so one is assumed (:func:`~mcp_assay.suite.signin.assumed_revision`);
    every other case is skipped with the reason, which names the sign-in step that failed."""
    config, signin = state.config, state.signin
    user_given = state.credentials.presented and (signin is None or signin.token is None)
    if selection.problem != "refused" or not config.url or user_given:
        return
    revision, why = assumed_revision(state.spec, forced, config.default_version)
    state.tokenless = why_tokenless(signin, selection.detail)
    state.router.discard(revision.name)  # the refused selection traffic stays out, as for any refusal
    transport = await state.target.transport(revision.name, state.target.connection())
    if revision.has("per_request_version"):
        selection.modern = ModernClient(transport, revision)
    else:
        selection.legacy = LegacyClient(transport, revision)
    selection.tested = [revision]
    selection.note = (
        f"{revision.name}, {why} — the server could not be asked which revisions it offers, and "
        f"{state.tokenless}; only the cases that need no credential were run"
    )
    state.observe("skip", everything_else(f"not run: {state.tokenless}").data(), revision.name)


async def _settle(state: RunState, selection: Selection) -> None:
    """Leave out what selection opened for revisions the run does not test: their traffic, their clients.

    When the server's answers were unusable, nothing is tested but what it sent is kept to be judged."""
    tested = {revision.name for revision in selection.tested}
    for client in (selection.modern, selection.legacy):
        if client is None or client.revision.name in tested:
            continue
        if selection.problem != "unusable":
            state.router.drop(client.revision.name)
        if isinstance(client, LegacyClient):
            await _abandon(state, client)
        else:
            await state.target.close(client.transport)


async def _abandon(state: RunState, legacy: LegacyClient) -> None:
    """Close the handshake-era session selection opened but the run does not use (kept out of the log)."""
    transport = legacy.transport
    if isinstance(transport, HttpTransport) and legacy.session is not None:
        try:
            await transport.send(
                b"",
                probe=Probe.of(cases.CLOSE_SELECTION_SESSION, "cleanup"),
                expect=None,
                headers={k: v for k, v in legacy.headers().items() if k.lower() != HeaderKey.CONTENT_TYPE},
                method="DELETE",
                timeout=min(state.config.timeout, 3.0),
            )
        except (TransportFailure, CredentialsRefused, RateLimited):
            pass
    await state.target.close(transport)


def marker(state: RunState, selection: Selection, revision: Revision | None) -> Observation:
    """The ``suite-run`` observation opening a revision's segment: what the judging needs to know of it."""
    config = state.config
    forced = state.spec.get(config.spec_version)
    data: dict[str, Any] = {
        "revision": revision.name if revision is not None else None,
        "intended": assumed_revision(state.spec, forced, config.default_version)[0].name,
        "tested": [tested.name for tested in selection.tested],
        "transport": config.transport,
        "note": selection.note,
        "offered": dict(selection.offered),
    }
    if config.modern_only:
        data[MODERN_ONLY] = True
    return Observation(id=state.new_id("o"), time=time.time(), kind=RUN_OBSERVATION, data=data)


def context(state: RunState, selection: Selection, revision: Revision) -> SuiteContext:
    """The context one tested revision's families share: its client, its capabilities, its buffer."""
    result = selection.result_for(revision)
    capabilities = result.get("capabilities") if result is not None else None
    client = selection.client_for(revision)
    assert client is not None
    buffer = revision.name
    target = state.target

    async def fresh() -> ModernClient | LegacyClient | None:
        if isinstance(client, ModernClient):
            if state.config.url is None:
                return None
            transport = await target.transport(buffer, target.connection())
            fresh_client = ModernClient(transport, revision)
            fresh_client.tools = client.tools
            return fresh_client
        transport = await target.transport(buffer, target.connection())
        return LegacyClient(transport, revision)

    ctx = SuiteContext(
        config=state.config,
        spec=state.spec,
        revision=revision,
        client=client,
        router=state.router,
        new_id=state.new_id,
        capabilities=capabilities if isinstance(capabilities, dict) else None,
        capability_source=CAPABILITY_SOURCES[revision.era].method,
        offered=selection.offered,
        fresh=fresh,
        handshake_offered=selection.negotiated is not None,
        buffer=buffer,
    )
    ctx.stub = state.stub
    ctx.discover_result = result
    ctx.connect = partial(target.connect, buffer=buffer)
    ctx.tokenless = state.tokenless
    return ctx
