"""Signing the run in: from the endpoint's ``401`` to an access token, as a real OAuth 2.1 client.

Whatever the user already has is used; this runs only when no credential was given and the
endpoint answers ``401``. After discovery (:mod:`~mcp_assay.suite.oauth.discovery`) the grants
to try are planned from what the authorization server offers:

- ``client_credentials`` wherever it is advertised (it needs nobody present), with ``--client-id``
  and ``--client-secret`` or a client registered dynamically;
- then ``authorization_code`` with PKCE ``S256`` through a loopback redirect and a browser, but
  only where somebody can answer: a terminal on stderr and ``CI`` unset, or ``--interactive``
  (which asks for it alone). ``--no-interactive`` never waits for one.

A client registered dynamically is registered once, for every grant planned (with the loopback's
redirect where the browser may follow), and the authorization server's answer has the last word
before anything is asked: a client it registered as public (``token_endpoint_auth_method: none``),
or without ``client_credentials`` among its ``grant_types``, signs in with the authorization code.
The grant chosen is printed with its reason. A token endpoint that refuses the grant all the same
(``invalid_client``, ``unauthorized_client``, ``unsupported_grant_type``) makes the sign-in fall
back, once, to the next grant planned, saying so.

Every request carries ``resource`` (RFC 8707, the server's canonical URI), the scope is
``--scope``, else the challenge's, else the metadata's ``scopes_supported``, and the redirect's
``state`` (and ``iss``, where the server says it sends one, RFC 9207) must match. A flow that
cannot go on stops at the step it reached, with the reason (the run decides what follows).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import webbrowser
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

from mcp_assay.recording.redaction import Redactor
from mcp_assay.suite.oauth.discovery import Discovery, challenge, discover
from mcp_assay.suite.oauth.grants import Client, Refused, auth_method, pkce, register, request_token
from mcp_assay.suite.oauth.http import OAuthHttp
from mcp_assay.suite.oauth.loopback import LoopbackReceiver
from mcp_assay.suite.oauth.settings import OAuthSettings, attended
from mcp_assay.suite.oauth.steps import Line, Narrator, SignInFailed, Step

__all__ = ["Opener", "SignIn", "sign_in"]

CLIENT_CREDENTIALS = "client_credentials"
AUTHORIZATION_CODE = "authorization_code"
_LABELS = {CLIENT_CREDENTIALS: "client_credentials", AUTHORIZATION_CODE: "authorization_code + PKCE"}
GRANT_REFUSALS = frozenset({"invalid_client", "unauthorized_client", "unsupported_grant_type"})
"""Token endpoint errors (RFC 6749 §5.2) that refuse the grant, or this client's use of it: the next grant is tried."""

Opener = Callable[[str], Awaitable[None]]
"""Shows the authorization URL to the user (a browser by default; a test drives it itself)."""


@dataclass(frozen=True)
class SignIn:
    """What signing in came to."""

    needed: bool
    """The endpoint answered ``401`` to a request without credentials."""
    token: str | None = None
    failure: str | None = None
    """``<step>: <why>`` when no token was obtained."""
    summary: str = ""
    """One line for the report: how the token was obtained, or where the sign-in stopped."""
    secrets: tuple[str, ...] = ()
    """Every secret the flow handled, for the run's redactor."""


async def sign_in(
    endpoint: str,
    settings: OAuthSettings,
    say: Callable[[Line, str], None],
    *,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    version: str,
    timeout: float,
    transport: httpx.AsyncBaseTransport | None = None,
    opener: Opener | None = None,
    attended_now: bool | None = None,
    redactor: Redactor | None = None,
    going_on: bool = False,
) -> SignIn:
    """Sign in to ``endpoint`` if it asks for it; ``url`` is the endpoint as requested (``-H`` headers added).

    ``redactor``, when given, already knows the run's other secrets; it learns the flow's too. ``going_on``:
    the run goes on without a token when the sign-in fails (the failure line says so)."""
    narrator = Narrator(say, redactor)
    narrator.secret(settings.client_secret)
    http = OAuthHttp(timeout=timeout, transport=transport, allow_insecure_http=settings.allow_insecure_http,
                     note=narrator.note)  # fmt: skip
    try:
        found = await challenge(http, url or endpoint, headers or {}, version, narrator)
        if found is None:
            return SignIn(needed=False)
        http.secure(endpoint, "the MCP server")  # the token the sign-in obtains goes there
        try:
            discovery = await discover(http, endpoint, found, narrator)
            present = attended() if attended_now is None else attended_now
            token, how = await _Flow(http, discovery, settings, narrator, opener, present).run()
        except SignInFailed as failure:
            then = "; the run goes on without a token (--without-token)" if going_on else ""
            narrator.tell(Line.FAILED, f"sign-in failed at {failure}{then}")
            text = narrator.redactor.text(str(failure))
            return SignIn(needed=True, failure=text, summary=f"the OAuth sign-in failed at {text}",
                          secrets=tuple(narrator.secrets))  # fmt: skip
        narrator.tell(Line.DONE, f"obtained an access token for resource {discovery.resource}")
        return SignIn(needed=True, token=token, summary=narrator.redactor.text(how), secrets=tuple(narrator.secrets))
    finally:
        await http.close()


class _Flow:
    """One sign-in after discovery: the grants to try, the client, and the token."""

    def __init__(
        self, http: OAuthHttp, discovery: Discovery, settings: OAuthSettings, narrator: Narrator,
        opener: Opener | None, attended_now: bool,
    ) -> None:  # fmt: skip
        self.http = http
        self.found = discovery
        self.metadata = discovery.server_metadata
        self.settings = settings
        self.narrator = narrator
        self.opener = opener
        self.attended = attended_now
        self.not_machine: str | None = None
        """Why ``client_credentials`` is not the grant, once that is known (the choice line says it)."""
        self.blocked: str | None = None
        """Why a browser sign-in may not be asked for here (``None``: it may)."""
        self.receiver: LoopbackReceiver | None = None
        self.stack = contextlib.AsyncExitStack()

    # -- choosing ----------------------------------------------------------------------------------
    def _endpoint(self, name: str, step: Step) -> str | None:
        value = self.metadata.get(name)
        if not isinstance(value, str) or not value:
            return None
        self.http.check(value, self.found.issuer, step)
        return value

    def _grants(self) -> list[str]:
        grants = self.metadata.get("grant_types_supported")
        if isinstance(grants, list):
            return [item for item in grants if isinstance(item, str)]
        return [AUTHORIZATION_CODE, "implicit"]  # RFC 8414 §2: the default when the field is absent

    def _methods(self) -> list[str] | None:
        methods = self.metadata.get("token_endpoint_auth_methods_supported")
        return [item for item in methods if isinstance(item, str)] if isinstance(methods, list) else None

    def _registration(self) -> str | None:
        if not self.settings.register:
            return None
        return self._endpoint("registration_endpoint", Step.REGISTRATION)

    def plan(self) -> list[str]:
        """The grants to try, in order, from what the metadata offers and who can answer a browser.

        ``client_credentials`` first wherever it can run (it needs nobody present), then
        ``authorization_code`` where a browser sign-in may be asked for; ``--interactive``:
        ``authorization_code`` alone. No grant at all is a failure saying why."""
        settings = self.settings
        grants = self._grants()
        given = settings.client_id is not None
        registration = self._registration()
        machine = CLIENT_CREDENTIALS in grants and (
            (given and settings.client_secret is not None) or (not given and registration is not None)
        )
        browser = AUTHORIZATION_CODE in grants and (given or registration is not None)
        if settings.interactive is True:
            if not browser:
                raise SignInFailed(Step.GRANT, f"--interactive asks for a browser sign-in, but {self._why_not(grants)}")
            _raise(self._browser_unfit())
            return [AUTHORIZATION_CODE]
        if not machine and not browser:
            raise SignInFailed(Step.GRANT, self._why_not(grants))
        if CLIENT_CREDENTIALS not in grants:
            self.not_machine = f"the authorization server does not offer client_credentials (it offers " \
                               f"{', '.join(grants) or 'no grant'})"  # fmt: skip
        elif given and settings.client_secret is None:
            self.not_machine = "the client given with --client-id has no secret (a public client)"
        self.blocked = self._browser_blocked()
        unfit = self._browser_unfit() if browser else None
        plan = [CLIENT_CREDENTIALS] if machine else []
        if browser and self.blocked is None and unfit is None:
            plan.append(AUTHORIZATION_CODE)
        if not plan:
            if self.blocked is None:
                _raise(unfit)
            only = "only a browser sign-in (authorization_code) is possible"
            raise SignInFailed(Step.GRANT, f"{only}, and {self.blocked}")
        return plan

    def _browser_blocked(self) -> str | None:
        """Why nobody may be asked to sign in through a browser here, or ``None``."""
        if self.settings.interactive is False:
            return "--no-interactive forbids it"
        if not self.attended and self.settings.browser:  # --no-browser: someone asked to be shown the URL to open it
            return (
                "nobody is there to answer it (no terminal on stderr, or CI is set); pass --interactive to sign in "
                "anyway (--no-browser prints the URL to open and waits), or -t with a token"
            )
        return None

    def _browser_unfit(self) -> SignInFailed | None:
        """Why the authorization server's metadata rules a browser sign-in out, or ``None``."""
        authorize = self.metadata.get("authorization_endpoint")
        if not isinstance(authorize, str) or not authorize:
            return SignInFailed(Step.SERVER_METADATA, "the metadata names no authorization_endpoint")
        methods = self.metadata.get("code_challenge_methods_supported")
        if methods is not None and (not isinstance(methods, list) or "S256" not in methods):
            return SignInFailed(
                Step.SERVER_METADATA,
                f"the authorization server offers PKCE methods {methods!r}, not S256 (plain would put the verifier "
                "in the browser's address bar); refused",
            )
        return None

    def _why_not(self, grants: list[str]) -> str:
        settings = self.settings
        offered = ", ".join(grants) or "no grant"
        if CLIENT_CREDENTIALS not in grants and AUTHORIZATION_CODE not in grants:
            return f"the authorization server offers {offered}; mcp-assay signs in with client_credentials or " \
                   "authorization_code"  # fmt: skip
        if settings.client_id is None and not settings.register:
            return "no --client-id was given and --no-register forbids registering one"
        if settings.client_id is None:
            return "no --client-id was given and the authorization server offers no dynamic registration"
        return f"the authorization server offers {offered}, and client_credentials needs --client-secret"

    def fit(self, plan: list[str], client: Client, registered: bool) -> list[str]:
        """The grants of ``plan`` the client can use, as the authorization server registered it (before asking)."""
        kept = []
        for grant in plan:
            why = _unusable(grant, client, registered)
            if why is None:
                kept.append(grant)
            elif grant == CLIENT_CREDENTIALS:
                self.not_machine = why
        if kept:
            return kept
        first = _unusable(plan[0], client, registered)
        offered = AUTHORIZATION_CODE in self._grants() and self._browser_unfit() is None
        could_browse = offered and (client.grant_types is None or AUTHORIZATION_CODE in client.grant_types)
        if plan == [CLIENT_CREDENTIALS] and could_browse and self.blocked is not None:
            raise SignInFailed(
                Step.GRANT,
                f"{first}, so client_credentials cannot be used; only a browser sign-in (authorization_code) is left, "
                f"and {self.blocked}",
            )
        raise SignInFailed(Step.GRANT, f"{first}; mcp-assay has no grant this client can use")

    def _why(self, grant: str, client: Client, registered: bool) -> str:
        """Why ``grant`` is the one signed in with: the choice line's reason."""
        if grant == CLIENT_CREDENTIALS:
            who = "the registered client" if registered else "the client given with --client-id"
            return f"{who} has a secret ({client.method}), so nobody needs to answer a browser"
        if self.settings.interactive is True:
            return "--interactive asks for a browser sign-in"
        return self.not_machine or "client_credentials cannot be used"

    # -- running -----------------------------------------------------------------------------------
    async def run(self) -> tuple[str, str]:
        plan = self.plan()
        token_endpoint = self._endpoint("token_endpoint", Step.TOKEN)
        if token_endpoint is None:
            raise SignInFailed(Step.SERVER_METADATA, "the metadata names no token_endpoint")
        async with self.stack:  # the loopback receiver, where one is bound, is closed on every way out
            client, registered, plan = await self._client(plan)
            plan = self.fit(plan, client, registered)
            grant = plan[0]
            self.narrator.step(f"signing in with {_LABELS[grant]}: {self._why(grant, client, registered)}")
            after = ""
            try:
                token = await self._grant(grant, client, token_endpoint)
            except Refused as refusal:
                if refusal.error not in GRANT_REFUSALS or len(plan) < 2:
                    raise
                refused, grant = grant, plan[1]
                self.narrator.step(
                    f"falling back to {_LABELS[grant]}: the token endpoint refused {refused} ({refusal.answer})"
                )
                after = f", after the token endpoint refused {refused}"
                token = await self._grant(grant, client, token_endpoint)
        how = "registered dynamically" if registered else "given with --client-id"
        return token, (
            f"the run signed in by itself: {grant} grant at {self.found.issuer} (client {client.client_id}, {how})"
            f"{after}, token for resource {self.found.resource}"
        )

    async def _grant(self, grant: str, client: Client, token_endpoint: str) -> str:
        if grant == AUTHORIZATION_CODE:
            return await self._authorization_code(token_endpoint, client)
        form = {"grant_type": CLIENT_CREDENTIALS, "resource": self.found.resource}
        scope = self._scope()
        if scope:
            form["scope"] = scope
        self.narrator.step(f"requesting a token at {token_endpoint}")
        token, _ = await request_token(self.http, token_endpoint, form, client, self.narrator)
        return token

    def _scope(self) -> str | None:
        if self.settings.scope:
            return self.settings.scope
        if self.found.challenge.scope:
            return self.found.challenge.scope
        supported = self.found.resource_metadata.get("scopes_supported")
        if isinstance(supported, list) and all(isinstance(item, str) for item in supported) and supported:
            return " ".join(supported)
        return None

    async def _receiver(self) -> LoopbackReceiver:
        """The loopback receiver, bound on first use and kept until the sign-in ends (its port is registered)."""
        if self.receiver is None:
            receiver = LoopbackReceiver(self.settings.redirect_host, self.settings.redirect_port)
            self.receiver = await self.stack.enter_async_context(receiver)
        return self.receiver

    async def _client(self, plan: list[str]) -> tuple[Client, bool, list[str]]:
        """The client to act as: the one given, or one registered now for every grant of ``plan``; whether it was
        registered; and the plan (without ``client_credentials`` where no secret method is offered)."""
        settings = self.settings
        if settings.client_id is not None:
            secret = settings.client_secret
            method = auth_method(self._methods(), public=False) if secret is not None else "none"
            if method is None:
                raise SignInFailed(Step.GRANT, "the token endpoint offers no client_secret_basic or client_secret_post")
            self.narrator.step(f"using client_id {settings.client_id} (given with --client-id)")
            return Client(settings.client_id, secret, method), False, plan
        registration = self._registration()
        assert registration is not None  # plan() saw to it
        offered = ", ".join(self._methods() or [])
        method = auth_method(self._methods(), public=CLIENT_CREDENTIALS not in plan)
        if method is None and AUTHORIZATION_CODE in plan:
            self.not_machine = f"the token endpoint accepts only {offered}; client_credentials needs a client secret"
            plan = [AUTHORIZATION_CODE]
            method = auth_method(self._methods(), public=True)
        if method is None:
            raise SignInFailed(Step.REGISTRATION, f"the token endpoint accepts only {offered}; mcp-assay cannot")
        redirect_uris = ((await self._receiver()).redirect_uri,) if AUTHORIZATION_CODE in plan else ()
        where = f" for redirect {redirect_uris[0]}" if redirect_uris else ""
        self.narrator.step(
            f"no client credentials given; registering a client for {' and '.join(plan)} with {registration}{where}"
        )
        client = await register(
            self.http, registration, method=method, grant_types=plan, redirect_uris=redirect_uris,
            scope=self._scope(), narrator=self.narrator,
        )  # fmt: skip
        self.narrator.step(f"registered client_id {client.client_id} using {client.method}")
        return client, True, plan

    async def _authorization_code(self, token_endpoint: str, client: Client) -> str:
        authorize = self._endpoint("authorization_endpoint", Step.AUTHORIZATION)
        assert authorize is not None  # plan() saw to it
        if self.metadata.get("code_challenge_methods_supported") is None:
            self.narrator.note(
                "the authorization server advertises no code_challenge_methods_supported; attempting S256, which "
                "OAuth 2.1 requires of it"
            )
        receiver = await self._receiver()
        redirect = receiver.redirect_uri
        verifier, code_challenge = pkce()
        state = secrets.token_urlsafe(24)
        self.narrator.secret(verifier)
        receiver.expect(state, lambda: self.narrator.note(
            "a redirect whose state does not belong to this sign-in was answered 400; still waiting for the right "
            "one"))  # fmt: skip
        params = {
            "response_type": "code", "client_id": client.client_id, "redirect_uri": redirect, "state": state,
            "code_challenge": code_challenge, "code_challenge_method": "S256", "resource": self.found.resource,
        }  # fmt: skip
        scope = self._scope()
        if scope:
            params["scope"] = scope
        await self._show(_with_query(authorize, params))
        answer = await receiver.wait(self.settings.auth_timeout_ms / 1000)
        code = self._read_redirect(answer, state)
        self.narrator.secret(code)
        self.narrator.step("authorization code received; exchanging it for a token")
        form = {"grant_type": AUTHORIZATION_CODE, "code": code, "redirect_uri": redirect, "code_verifier": verifier,
                "resource": self.found.resource}  # fmt: skip
        token, _ = await request_token(self.http, token_endpoint, form, client, self.narrator)
        return token

    async def _show(self, address: str) -> None:
        if self.opener is not None:
            self.narrator.step("waiting for the authorization at:")
            self.narrator.tell(Line.URL, address)
            await self.opener(address)
            return
        if not self.settings.browser:
            self.narrator.step("open this URL in a browser on this machine to authorize the run:")
            self.narrator.tell(Line.URL, address)
            return
        self.narrator.step("waiting for you to authorize this run in a browser. If one did not open, visit:")
        self.narrator.tell(Line.URL, address)
        await asyncio.to_thread(webbrowser.open, address)

    def _read_redirect(self, answer: Mapping[str, str], state: str) -> str:
        """The code, once the redirect is known to answer this request (RFC 6749 §4.1.2, RFC 9207 §2.4)."""
        if answer.get("state") != state:
            raise SignInFailed(
                Step.AUTHORIZATION, "the redirect carried a state that does not belong to this request (refused)"
            )
        iss = answer.get("iss")
        if self.metadata.get("authorization_response_iss_parameter_supported") is True and iss is None:
            raise SignInFailed(Step.AUTHORIZATION, "the redirect carried no iss, which the server said it sends")
        if iss is not None and iss != self.found.issuer:
            raise SignInFailed(Step.AUTHORIZATION, f"the redirect came from issuer {iss!r}, not {self.found.issuer!r}")
        error = answer.get("error")
        if error is not None:
            description = answer.get("error_description")
            detail = f" ({description})" if description else ""
            raise SignInFailed(Step.AUTHORIZATION, f"the authorization server answered {error}{detail}")
        code = answer.get("code")
        if not code:
            raise SignInFailed(Step.AUTHORIZATION, "the redirect carried neither a code nor an error")
        return code


def _unusable(grant: str, client: Client, registered: bool) -> str | None:
    """Why ``client`` cannot use ``grant``, as the authorization server registered it; ``None``: it can."""
    granted = client.grant_types
    if grant == CLIENT_CREDENTIALS and client.secret is None:
        if registered:
            return f"the registered client is public (token_endpoint_auth_method {client.method})"
        return "the client given with --client-id has no secret (a public client)"
    if granted is not None and grant not in granted:
        return f"the authorization server registered the client for {', '.join(granted) or 'no grant'}, not {grant}"
    return None


def _raise(failure: SignInFailed | None) -> None:
    if failure is not None:
        raise failure


def _with_query(url: str, params: Mapping[str, Any]) -> str:
    """``url`` with ``params`` added to the query it already has."""
    parts = urlsplit(url)
    query = urlencode([*parse_qsl(parts.query, keep_blank_values=True), *params.items()])
    return urlunsplit(parts._replace(query=query))
