"""The stub for the length of a run: served on ``stub.listen``, or found there, and its notes read back.

A run with a ``stub`` section opens it before the first request, because the target may fetch
the key set the moment it sees the first token, and the run's own token (when ``-t`` is not
given) is minted by the stub too. If the port is taken by a ``mcp-assay stub serve`` with the same
key, that one is used and its notes are read over HTTP; taken by anything else, the run stops
with one clear error before any request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from mcp_assay.suite.stub.config import StubConfig
from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.server import FETCHES_PATH, StubServer, served_key_ids
from mcp_assay.suite.stub.tokens import RUN_LIFETIME_S, control_token
from mcp_assay.vocabulary.errors import ConfigError

__all__ = ["StubSession"]

Notes = Callable[[], list[dict[str, Any]]]
"""Every request the stub answered so far: time, method, path, user agent."""


class StubSession:
    """An open stub: its configuration, this run's untrusted key, and what it was asked for."""

    def __init__(
        self,
        config: StubConfig,
        foreign: SigningKey,
        notes: Callable[[], list[dict[str, Any]]],
        close: Callable[[], None],
    ) -> None:
        self.config = config
        self.foreign = foreign
        self.notes = notes
        self._close = close
        self.minted: str | None = None
        """The audience of the run's own token, when the stub minted it (``-t`` not given)."""

    @classmethod
    def open(cls, config: StubConfig) -> StubSession:
        foreign = SigningKey.generate()
        try:
            server = StubServer(
                config.host, config.port, config.issuer, config.key, foreign, config.all_scopes, policy=config.policy
            )
        except OSError as exc:
            try:
                answer = httpx.get(config.jwks_uri, timeout=3.0)
                kids = served_key_ids(answer.json()) if answer.status_code == 200 else set()
            except (httpx.HTTPError, ValueError):
                kids = set()
            if config.key.kid not in kids:
                raise ConfigError(
                    f"stub.listen {config.host}:{config.port}: cannot listen there ({exc.strerror or exc}), and what "
                    f"does is not a stub serving the key in {config.key_file}"
                ) from None
            return cls(config, foreign, lambda: _remote_notes(config), lambda: None)
        return cls(config, foreign, server.notes, server.close)

    def run_token(self, audience: str) -> str:
        """The run's own credential when ``-t`` is not given: a valid stub token for the whole run."""
        return control_token(self.config.key, self.config.issuer, audience, self.config.all_scopes, RUN_LIFETIME_S)

    def close(self) -> None:
        self._close()


def _remote_notes(config: StubConfig) -> list[dict[str, Any]]:
    try:
        notes = httpx.get(f"{config.issuer}{FETCHES_PATH}", timeout=3.0).json()
    except (httpx.HTTPError, ValueError):
        return []
    return [item for item in notes if isinstance(item, dict)] if isinstance(notes, list) else []
