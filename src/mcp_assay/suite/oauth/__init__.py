"""mcp-assay's own OAuth 2.1 client: how a run without a token signs in to a server that asks for one.

``settings`` holds what the user says (a client, a scope, who may be asked), ``discovery`` finds
the resource's and the authorization server's metadata, ``grants`` registers a client and talks to
the token endpoint, ``loopback`` receives the browser's redirect, ``steps`` tells every step as it
happens with the secrets scrubbed, ``http`` fetches what the target names (and nothing it should
not), and ``flow`` runs them in order. Only the run calls it, and only when no credential was given.
"""

from __future__ import annotations

from mcp_assay.suite.oauth.flow import Opener, SignIn, sign_in
from mcp_assay.suite.oauth.settings import OAuthSettings, attended
from mcp_assay.suite.oauth.steps import Line, SignInFailed, Step

__all__ = ["Line", "OAuthSettings", "Opener", "SignIn", "SignInFailed", "Step", "attended", "sign_in"]
