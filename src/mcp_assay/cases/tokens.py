"""The ``tokens`` cases (HTTP, with a ``stub`` section): tokens the target would accept, changed in one property.

Every stub token case is the stand-in authorization server's valid control token with one
property changed, and feeds the one requirement its refusal establishes (AUTH-16..19; every one
is also an invalid token for AUTH-13, which judges the status). :data:`STUB_TOKENS` holds them in
the order they are sent, grouped by that requirement, with :data:`STUB_CONTROL` after each group.
With ``stub.tool_scopes`` each mapped tool is called between two :data:`SCOPE_CONTROL` calls.
"""

from __future__ import annotations

from mcp_assay.cases.model import Case, Credential, Declare, Judging

__all__ = [
    "CASES",
    "PASSTHROUGH",
    "SCOPE_BROAD",
    "SCOPE_CONTROL",
    "SCOPE_HEADER_ROUTED",
    "SCOPE_LACKING",
    "STUB_CONTROL",
    "STUB_PREFIX",
    "STUB_TOKENS",
    "stub_token",
]

declare = Declare("tokens")
STUB_PREFIX = "auth-stub-"
"""What a stub token case's name starts with, before the property it changes."""
NOT_SERVED = "not served (401 expected; any refusal between two served controls counts)"

STUB_CONTROL = declare(
    "auth-stub-control", "AUTH-16 AUTH-17 AUTH-18 AUTH-19",
    sends="the protected request with the stub's valid control token (its issuer, the target's audience, its key)",
    expects="served; not served, nothing else can be attributed", credential=Credential.STUB,
)  # fmt: skip


def _stub(variant: str, requirement: str, sends: str) -> Case:
    return declare(
        f"{STUB_PREFIX}{variant}", requirement, sends=f"the stub's control token, {sends}", expects=NOT_SERVED,
        invalid=True, judging=Judging.SELECTED, credential=Credential.INVALID, control=STUB_CONTROL,
        also_recorded=(("requirement", requirement),),
    )  # fmt: skip


STUB_TOKENS = (
    _stub("expired", "AUTH-19", "exp an hour in the past"),
    _stub("not-yet-valid", "AUTH-19", "nbf an hour in the future"),
    _stub("no-expiry", "AUTH-19", "without an exp claim (a token that never expires)"),
    _stub("foreign-audience", "AUTH-16", "aud another service"),
    _stub("no-audience", "AUTH-16", "without an aud claim"),
    _stub("look-alike-audience", "AUTH-16", "aud the target's URI plus -evil"),
    _stub("audience-list", "AUTH-16", "aud a list without the target"),
    _stub("foreign-issuer", "AUTH-17", "iss another issuer, signed by the trusted key"),
    _stub("no-issuer", "AUTH-17", "without an iss claim, signed by the trusted key"),
    _stub("foreign-key", "AUTH-18", "signed by an untrusted key under the trusted kid"),
    _stub("unknown-kid", "AUTH-18", "signed by an untrusted key with its own kid"),
    _stub("jku", "AUTH-18", "signed by an untrusted key announced in a jku header (a fetch of it fails AUTH-18)"),
    _stub("embedded-jwk", "AUTH-18", "signed by an untrusted key embedded as a jwk header"),
    _stub("alg-none", "AUTH-18", "unsigned, alg none"),
    _stub("alg-None", "AUTH-18", "unsigned, alg None"),
    _stub("alg-NONE", "AUTH-18", "unsigned, alg NONE"),
    _stub("hs256-confusion", "AUTH-18", "HS256 with the trusted public key (PEM) as the HMAC secret"),
)
SCOPE_CONTROL = declare(
    "auth-scope-control", "AUTH-22 AUTH-23",
    sends="tools/call of a mapped tool with a stub token holding every configured scope", expects="served",
    credential=Credential.STUB,
)  # fmt: skip
SCOPE_LACKING = declare(
    "auth-scope-lacking", "AUTH-22 AUTH-15",
    sends="tools/call of a mapped tool with every configured scope but its own",
    expects="not performed (403, an error or isError); for a tool needing several scopes one 403 whose challenge "
    "names all of them (AUTH-15, SHOULD)",
    judging=Judging.SELECTED, credential=Credential.STUB, control=SCOPE_CONTROL,
)  # fmt: skip
SCOPE_HEADER_ROUTED = declare(
    "auth-scope-header-routed", "AUTH-26",
    sends="the lacking token, with Mcp-Name naming a tool it may call (2026)",
    expects="refused (400 -32020, or a scope refusal)",
    invalid=True, judging=Judging.SELECTED, credential=Credential.STUB, control=SCOPE_CONTROL,
)  # fmt: skip
SCOPE_BROAD = declare(
    "auth-scope-broad", "AUTH-23",
    sends="tools/call of a mapped tool holding only a stub.implies scope that covers the tool's", expects="served",
    judging=Judging.SELECTED, credential=Credential.STUB, control=SCOPE_CONTROL,
)  # fmt: skip
PASSTHROUGH = declare(
    "auth-passthrough", "AUTH-27",
    sends="tools/call of stub.passthrough_tool with a fresh stub token",
    expects="no copy of the token in any request the target makes to the stub's /sink/",
    judging=Judging.SELECTED, credential=Credential.STUB,
)  # fmt: skip

CASES = tuple(declare.cases)

_BY_VARIANT = {case.name.removeprefix(STUB_PREFIX): case for case in STUB_TOKENS}


def stub_token(variant: str) -> Case:
    """The stub token case named ``variant`` (``expired``, ``jku`` ...)."""
    return _BY_VARIANT[variant]
