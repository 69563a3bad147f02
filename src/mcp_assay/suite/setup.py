"""The target made ready before the run speaks to it: its server started, the run's own token obtained.

``--serve`` starts the server the run is pointed at, and stops it when the run is over; one that
never comes up leaves the run with nothing to judge, and the one line says why. A run given no
credential takes one: minted by the stand-in authorization server when the config has a ``stub``
section, else by signing in when the endpoint answers ``401`` (:mod:`~mcp_assay.suite.signin`).
What was done is then handed to the run (:meth:`Ready.introduce`): the secrets its redactor must
hide, the notes its report carries, the addresses the started server listens on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace

import httpx

from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.spec.rules.auth.facts import canonical_uri
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.events import Event
from mcp_assay.suite.launch import LaunchedServer, launch
from mcp_assay.suite.oauth import SignIn
from mcp_assay.suite.signin import sign_in_for_run, wants_sign_in
from mcp_assay.suite.state import RunState
from mcp_assay.suite.stub.lifetime import StubSession
from mcp_assay.vocabulary.errors import Unreachable
from mcp_assay.wire.model import LISTENING

__all__ = ["Ready", "ready"]


@dataclass
class Ready:
    """What setting up left the run with."""

    config: SuiteConfig
    """The run's settings, with the token the stub minted or the sign-in obtained."""
    stub: StubSession | None = None
    signin: SignIn | None = None
    """How the run signed itself in, when it was given no credential."""
    launched: LaunchedServer | None = None
    unreachable: str | None = None
    """Why the server ``--serve`` started never came up: the run has nothing to judge."""

    @property
    def signed_out(self) -> SignIn | None:
        """The sign-in that failed, when the user did not ask to go on without a token (``--without-token``)."""
        signin = self.signin
        failed = signin is not None and signin.needed and signin.token is None and not self.config.without_token
        return signin if failed else None

    def introduce(self, state: RunState) -> None:
        """Hand the run what setting up did: its secrets, its notes, the addresses the started server listens on."""
        state.stub = stub = self.stub
        state.signin = signin = self.signin
        for secret in signin.secrets if signin is not None else ():
            state.redactor.add_secret(secret)
        if signin is not None and signin.needed:
            state.observe("note", {"detail": f"authorization: {state.redactor.text(signin.summary)}"})
        if stub is not None and stub.minted:
            state.notes.append(
                f"the run's own token was minted by the stub (issuer {stub.config.issuer}, keys at "
                f"{stub.config.jwks_uri}, audience {stub.minted}); if the target refuses it, it does not trust the stub"
            )
        if self.launched is not None:
            state.observe(LISTENING, self.launched.observation_data())


@asynccontextmanager
async def ready(
    config: SuiteConfig,
    spec: SpecSet,
    emit: Callable[[Event], None],
    *,
    mock: httpx.AsyncBaseTransport | None,
    redactor: Redactor,
) -> AsyncIterator[Ready]:
    """The target set up for the body of the ``async with``: its server stopped and the stub closed after.

    A run given no token takes the stub's, else the sign-in's (when the endpoint asks for one)."""
    stub = StubSession.open(config.stub) if config.stub is not None and config.url else None
    launched: LaunchedServer | None = None
    try:
        failed: str | None = None
        if config.serve and config.url:
            try:
                launched = await launch(config.serve, config.url, timeout=config.serve_timeout)
            except Unreachable as exc:  # no server came up: nothing to judge, and the report says why
                failed = str(exc)
        if failed is not None:
            yield Ready(config, unreachable=failed)
            return
        prepared = Ready(config, stub=stub, launched=launched)
        if stub is not None and not config.token:
            audience = stub.config.audience or canonical_uri(config.url or "")
            prepared.config = replace(config, token=stub.run_token(audience))
            stub.minted = audience
        elif wants_sign_in(config):
            prepared.signin = await sign_in_for_run(config, spec, emit, transport=mock, redactor=redactor)
            if prepared.signin.token is not None:
                prepared.config = replace(config, token=prepared.signin.token)
        yield prepared
    finally:
        if launched is not None:
            await launched.stop()
        if stub is not None:
            stub.close()
