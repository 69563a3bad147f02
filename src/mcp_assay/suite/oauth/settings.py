"""What the user says about signing in: a client they already hold, the scope, and who may be asked.

Every value comes from a ``run`` flag, its ``MCP_ASSAY_*`` twin or the config file, and is checked
here before anything is sent: a redirect host that is not loopback, a port out of range, a secret
without the client it belongs to. ``interactive`` is three-valued: ``None`` lets the terminal
decide (see :func:`attended`), ``True`` always signs in through a browser, ``False`` never does.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from mcp_assay.spec.rules.auth.facts import is_loopback_host
from mcp_assay.vocabulary.errors import ConfigError

__all__ = ["DEFAULT_AUTH_TIMEOUT_MS", "DEFAULT_REDIRECT_HOST", "OAuthSettings", "attended"]

DEFAULT_REDIRECT_HOST = "127.0.0.1"
DEFAULT_AUTH_TIMEOUT_MS = 180_000


@dataclass(frozen=True)
class OAuthSettings:
    """How the run may sign in when the endpoint answers ``401`` and no credential was given."""

    client_id: str | None = None
    client_secret: str | None = None
    scope: str | None = None
    """The scope to request; unset: the challenge's ``scope``, else the metadata's ``scopes_supported``."""
    register: bool = True
    """Whether a client may be registered dynamically where the authorization server offers it."""
    interactive: bool | None = None
    browser: bool = True
    """Launch a browser for the authorization URL (it is printed either way)."""
    redirect_host: str = DEFAULT_REDIRECT_HOST
    redirect_port: int | None = None
    """``None``: an ephemeral port."""
    auth_timeout_ms: int = DEFAULT_AUTH_TIMEOUT_MS
    """How long to wait for the browser's redirect."""
    allow_insecure_http: bool = False
    """Send credentials over plain http to a host that is not loopback (the user asked for it)."""

    def __post_init__(self) -> None:
        if self.client_secret and not self.client_id:
            raise ConfigError("--client-secret needs the --client-id it belongs to")
        if not is_loopback_host(self.redirect_host) or self.redirect_host.endswith(".localhost"):
            raise ConfigError(
                f"--redirect-host {self.redirect_host}: the redirect must come back to this machine "
                "(127.0.0.1, ::1 or localhost)"
            )
        if self.redirect_port is not None and not 0 < self.redirect_port < 65536:
            raise ConfigError(f"--redirect-port {self.redirect_port}: expected a port from 1 to 65535")
        if self.auth_timeout_ms <= 0:
            raise ConfigError(f"--auth-timeout must be positive (got {self.auth_timeout_ms} ms)")


def attended(environ: Mapping[str, str] | None = None, stream: object | None = None) -> bool:
    """Whether somebody can answer a browser sign-in: a terminal on stderr and ``CI`` unset."""
    environ = os.environ if environ is None else environ
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(callable(isatty) and isatty()) and not environ.get("CI")
