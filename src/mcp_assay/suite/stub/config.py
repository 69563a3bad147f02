"""The ``stub`` section of the config file: where the stand-in authorization server lives.

```yaml
stub:
  key_file: .mcp-assay/stub-key.pem   # `mcp-assay stub init` writes it (relative: to this file's folder)
  listen: 127.0.0.1:9411              # where the run serves the stub's metadata and JWKS
  issuer: http://127.0.0.1:9411       # the iss of every token (default: http://<listen>)
  audience: https://host/mcp          # the aud of the control token (default: the endpoint's canonical URI)
  scopes: [notes:read]                # scopes every valid stub token holds, besides those below
  tool_scopes:                        # scopes each tool needs (AUTH-22, AUTH-15); tools need --tool-args
    create_note: [notes:write]
  implies:                            # scope hierarchy (AUTH-23)
    notes:admin: [notes:read, notes:write]
  passthrough_tool: fetch_upstream    # calls an upstream API the target points at <issuer>/sink/ (AUTH-27)
```

What the stub offers an OAuth client (grants, registration, preset clients, consent, the issuer
its metadata declares) is set by the keys :mod:`~mcp_assay.suite.stub.policy` reads.

The key file is read here, so a missing or unusable key is one clear error before any request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_assay.suite.behaviour.config import config_secret
from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.policy import POLICY_KEYS, StubPolicy, parse_policy
from mcp_assay.userinput.values import HOST_PORT, URL, BadValue
from mcp_assay.vocabulary.errors import ConfigError

__all__ = ["DEFAULT_LISTEN", "StubConfig", "parse_stub"]

DEFAULT_LISTEN = "127.0.0.1:9411"
_KEYS = frozenset(
    {"key_file", "listen", "issuer", "audience", "scopes", "tool_scopes", "implies", "passthrough_tool", *POLICY_KEYS}
)


@dataclass(frozen=True)
class StubConfig:
    key: SigningKey
    key_file: str
    host: str
    port: int
    issuer: str
    audience: str | None
    scopes: tuple[str, ...]
    tool_scopes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Scopes each tool needs, from the config (the scope probes call only these tools)."""
    implies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Broad scope -> the narrower scopes it grants."""
    passthrough_tool: str | None = None
    """A tool that calls the target's upstream API, which is configured to be the stub's sink (AUTH-27)."""
    policy: StubPolicy = field(default_factory=StubPolicy)
    """What its authorization server offers a client: grants, registration, preset clients, consent."""

    @property
    def all_scopes(self) -> tuple[str, ...]:
        """Every scope the config names: what the scope probes' control token holds."""
        named = [*self.scopes, *(scope for needed in self.tool_scopes.values() for scope in needed)]
        return tuple(dict.fromkeys(named))

    @property
    def jwks_uri(self) -> str:
        return f"{self.issuer}/jwks.json"


def _listen(value: Any, where: str) -> tuple[str, int]:
    try:
        return HOST_PORT(value)
    except BadValue as exc:
        raise ConfigError(f"{where}.listen: {exc}") from None


def parse_stub(raw: Any, source: str, base: Path | None = None) -> StubConfig | None:
    """Read the section (``None`` when the file has none); every mistake is one :class:`ConfigError`.

    A relative ``key_file`` is read from ``base`` (the config file's folder), so a run from another
    directory finds the same key."""
    where = f"--config {source}: stub"
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a mapping with key_file, listen, issuer, audience, scopes")
    unknown = sorted(set(map(str, raw)) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})")
    key_file = raw.get("key_file")
    if not isinstance(key_file, str) or not key_file:
        raise ConfigError(f"{where}.key_file: required (`mcp-assay stub init --key-file PATH` creates one)")
    host, port = _listen(raw.get("listen", DEFAULT_LISTEN), where)
    for name in ("issuer", "audience"):
        if raw.get(name) is not None:
            try:
                URL(raw[name])
            except BadValue as exc:
                raise ConfigError(f"{where}.{name}: {exc}") from None
    scopes = raw.get("scopes") or []
    if not isinstance(scopes, list) or not all(isinstance(item, str) and item for item in scopes):
        raise ConfigError(f"{where}.scopes: expected a list of scope strings")
    tool_scopes = _scope_map(raw.get("tool_scopes"), f"{where}.tool_scopes")
    implies = _scope_map(raw.get("implies"), f"{where}.implies")
    issuer = str(raw.get("issuer") or f"http://{host}:{port}").rstrip("/")
    return StubConfig(
        key=SigningKey.load(base / Path(key_file).expanduser() if base is not None else key_file),
        key_file=key_file,
        host=host,
        port=port,
        issuer=issuer,
        audience=raw.get("audience"),
        scopes=tuple(scopes),
        tool_scopes=tool_scopes,
        implies=implies,
        passthrough_tool=_name(raw.get("passthrough_tool"), f"{where}.passthrough_tool"),
        policy=parse_policy(raw, where, lambda value, spot: config_secret(value, source, spot.split(": ", 1)[-1])),
    )


def _name(raw: Any, where: str) -> str | None:
    if raw is not None and (not isinstance(raw, str) or not raw):
        raise ConfigError(f"{where}: expected a tool name")
    return raw


def _scope_map(raw: Any, where: str) -> dict[str, tuple[str, ...]]:
    """A mapping of names to non-empty lists of scope strings."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a mapping of names to lists of scopes")
    out: dict[str, tuple[str, ...]] = {}
    for name, scopes in raw.items():
        if not isinstance(scopes, list) or not scopes or not all(isinstance(item, str) and item for item in scopes):
            raise ConfigError(f"{where}.{name}: expected a non-empty list of scope strings")
        out[str(name)] = tuple(scopes)
    return out
