"""The ``auth`` cases (HTTP): no credentials, bad credentials and misplaced credentials.

Each group is bracketed by :data:`CONTROL`, the same request with the run's own credentials, so a
refusal is attributable; the Protected Resource Metadata is fetched at its candidate URLs without
credentials. Every case here is a credential case (:attr:`~mcp_assay.cases.model.Case.credential`):
the rules find them by that, never by their names.
"""

from __future__ import annotations

from mcp_assay.cases.model import Credential, Declare

__all__ = [
    "ALG_NONE",
    "BASIC",
    "CASES",
    "CONTROL",
    "EMPTY_BEARER",
    "EXPIRED_JWT",
    "GARBAGE_TOKEN",
    "NOT_A_JWT",
    "NO_TOKEN",
    "NO_TOKEN_DISCOVER",
    "PRM_FETCHES",
    "PRM_HEADER",
    "PRM_PATH",
    "PRM_ROOT",
    "QUERY_ACCESS_TOKEN",
    "QUERY_TOKEN",
    "QUERY_WITH_GARBAGE_HEADER",
]

declare = Declare("auth")
METADATA = "AUTH-01 AUTH-02 AUTH-03 AUTH-04 AUTH-06 AUTH-07 AUTH-08 AUTH-48"
REFUSED = "401 (400 accepted), never served"

CONTROL = declare(
    "auth-control", "AUTH-13 AUTH-20 AUTH-28",
    sends="the protected request with the run's own credentials, around every group", expects="served",
    credential=Credential.OWN,
)  # fmt: skip
PRM_PATH = declare(
    "auth-prm-path", METADATA,
    sends="GET of the path-scoped Protected Resource Metadata URL, without credentials",
    expects="200 and a JSON object", marker=("prm", "path"),
)  # fmt: skip
PRM_ROOT = declare(
    "auth-prm-root", METADATA,
    sends="GET of the root Protected Resource Metadata URL, without credentials",
    expects="200 and a JSON object", marker=("prm", "root"),
)  # fmt: skip
NO_TOKEN = declare(
    "auth-no-token", "AUTH-09 AUTH-10 AUTH-11 AUTH-12 AUTH-29 AUTH-32 AUTH-34",
    sends="the protected request without credentials (in 2025 inside the run's session)",
    expects="401 with a Bearer challenge", invalid=True, credential=Credential.NONE,
)  # fmt: skip
NO_TOKEN_DISCOVER = declare(
    "auth-no-token-discover", "AUTH-09",
    sends="server/discover without credentials (2026)", expects="401, or served (allowed before a token)",
    invalid=True, credential=Credential.NONE,
)  # fmt: skip
PRM_HEADER = declare(
    "auth-prm-header", f"{METADATA} AUTH-05",
    sends="GET of the resource_metadata URL the challenge names (when the suite may fetch it)",
    expects="200 and a JSON object", marker=("prm", "header"),
)  # fmt: skip
EMPTY_BEARER = declare(
    "auth-empty-bearer", "AUTH-13 AUTH-20",
    sends="a bare Bearer scheme without a token", expects=REFUSED, invalid=True, credential=Credential.MALFORMED,
)  # fmt: skip
NOT_A_JWT = declare(
    "auth-not-a-jwt", "AUTH-13 AUTH-20",
    sends="a bearer string that is no JWT", expects=REFUSED, invalid=True, credential=Credential.MALFORMED,
)  # fmt: skip
BASIC = declare(
    "auth-basic", "AUTH-13 AUTH-20",
    sends="Basic credentials", expects=REFUSED, invalid=True, credential=Credential.MALFORMED,
)  # fmt: skip
GARBAGE_TOKEN = declare(
    "auth-garbage-token", "AUTH-13 AUTH-20",
    sends="a garbage three-part bearer token", expects=REFUSED, invalid=True, credential=Credential.MALFORMED,
)  # fmt: skip
ALG_NONE = declare(
    "auth-alg-none", "AUTH-13 AUTH-20",
    sends="an unsigned alg:none JWT built locally", expects="401", invalid=True, credential=Credential.INVALID,
)  # fmt: skip
EXPIRED_JWT = declare(
    "auth-expired-jwt", "AUTH-13 AUTH-20",
    sends="an expired JWT with a garbage signature", expects="401", invalid=True, credential=Credential.INVALID,
)  # fmt: skip
QUERY_ACCESS_TOKEN = declare(
    "auth-query-access-token", "AUTH-28",
    sends="the run's token only in ?access_token=", expects="refused (401): MCP forbids query tokens",
    invalid=True, credential=Credential.QUERY,
)  # fmt: skip
QUERY_TOKEN = declare(
    "auth-query-token", "AUTH-28",
    sends="the run's token only in ?token=", expects="refused (401): MCP forbids query tokens",
    invalid=True, credential=Credential.QUERY,
)  # fmt: skip
QUERY_WITH_GARBAGE_HEADER = declare(
    "auth-query-with-garbage-header", "AUTH-28",
    sends="the run's token in ?access_token= next to a garbage bearer header",
    expects="refused (401), as the same header alone (auth-not-a-jwt) is",
    invalid=True, credential=Credential.QUERY, alone=NOT_A_JWT,
)  # fmt: skip

CASES = tuple(declare.cases)

PRM_FETCHES = {"path": PRM_PATH, "root": PRM_ROOT, "header": PRM_HEADER}
"""The metadata fetches by the kind of URL they go to."""
