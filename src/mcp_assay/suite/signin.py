"""Where signing in meets the run: whether to try, and what a run that holds no credential still does.

A run given no credential asks the endpoint once; a ``401`` starts the sign-in of
:mod:`mcp_assay.suite.oauth`, and the token it obtains becomes the run's own (sent like ``-t``). A
sign-in that fails stops the run there: nothing is judged (exit 3), and the one line says at which
step. With ``--without-token`` (or ``--auth-mode none``, which never signs in) the run goes on
without a token instead: the server cannot be asked which revisions it offers, so the run assumes
one (``--spec-version``, else ``--default-version``, else the newest supported) and sends only the
probe families that need no credential: the challenge and the Protected Resource Metadata. Every
other case is *not verified*, naming the step that failed.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec.engine import registered_checks
from mcp_assay.spec.revisions import Revision, SpecSet
from mcp_assay.suite.blocking import Skip
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.events import Event, SignInStep
from mcp_assay.suite.oauth import Line, SignIn, sign_in
from mcp_assay.suite.probes import FAMILIES

__all__ = [
    "NO_CREDENTIAL_FAMILIES",
    "assumed_revision",
    "everything_else",
    "sign_in_for_run",
    "wants_sign_in",
    "why_tokenless",
]

NO_CREDENTIAL_FAMILIES = frozenset({"auth"})
"""Probe families whose cases need no credential of the run's own (the challenge, the metadata)."""


def wants_sign_in(config: SuiteConfig) -> bool:
    """A run over HTTP that was given no credential at all (``--auth-mode none`` says: do not sign in either)."""
    return bool(config.url) and config.auth_mode != "none" and not config.credentials().presented


async def sign_in_for_run(
    config: SuiteConfig,
    spec: SpecSet,
    emit: Callable[[Event], None],
    *,
    transport: httpx.AsyncBaseTransport | None,
    redactor: Redactor | None = None,
) -> SignIn:
    """Ask the endpoint once with what the user configured and sign in if it answers ``401``.

    ``redactor`` is the run's (else one made from ``config``); it learns every secret the sign-in handles."""
    assert config.url is not None
    credentials = config.credentials()

    def say(kind: Line, text: str) -> None:
        emit(SignInStep(kind, text))

    return await sign_in(
        config.url, config.oauth(), say, url=credentials.url(config.url), headers=dict(credentials.header_pairs()),
        version=spec.newest.name, timeout=config.timeout, transport=transport,
        redactor=redactor if redactor is not None else config.redactor(), going_on=config.without_token,
    )  # fmt: skip


def assumed_revision(spec: SpecSet, forced: Revision | None, default_version: str | None) -> tuple[Revision, str]:
    """The revision to assume when the server cannot be asked, and why that one."""
    if forced is not None:
        return forced, "as --spec-version asks"
    if default_version:
        return spec.require(default_version), "the revision --default-version says a client declaring none is served"
    return spec.newest, "the newest supported revision (pass --default-version to assume another)"


def why_tokenless(signin: SignIn | None, refusal: str) -> str:
    """Why the run holds no credential the server takes, naming the step that failed where there was one."""
    if signin is not None and signin.needed and signin.token is None:
        return f"the run has no token: {signin.summary}"
    if signin is not None and signin.token is not None:
        return f"the token the OAuth sign-in obtained was refused ({refusal})"
    return f"the run holds no credential ({refusal})"


def everything_else(reason: str) -> Skip:
    """One skip for every requirement a check cites but those the no-credential families feed."""
    kept = frozenset().union(*(family.requirements for family in FAMILIES if family.name in NO_CREDENTIAL_FAMILIES))
    cited = {requirement for check in registered_checks() for requirement in check.requirements}
    return Skip(family="sign-in", requirements=frozenset(cited) - kept, reason=reason)
