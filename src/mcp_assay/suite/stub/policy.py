"""What the stub's authorization server offers a client: one setting per case a client must cope with.

By default the stub is the authorization-code server it always was: dynamic registration open,
consent given at once, its own issuer in its metadata, and no machine grant. Testing an OAuth
client (mcp-assay's own sign-in included) needs the other cases too, each chosen in the ``stub``
section of the config file rather than built into a test:

```yaml
stub:
  grant_types: [authorization_code, client_credentials, refresh_token]   # what the metadata advertises
  registration: false                  # no registration_endpoint; /register answers 404
  public_registration: true            # every client registered is made public, for authorization_code only
  refused_grants: [client_credentials] # advertised and registered, but the token endpoint refuses it
  clients:                             # clients registered up front
    - client_id: ci-runner
      client_secret: ${CI_RUNNER_SECRET}   # confidential (client_credentials); omit it for a public client
    - client_id: desktop
      redirect_uris: [http://127.0.0.1/callback]   # a loopback redirect matches any port (RFC 8252 §7.3)
  consent: deny                        # the authorization endpoint redirects with error=access_denied
  metadata_issuer: https://somewhere-else.example   # a deliberately wrong issuer in the metadata
```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp_assay.vocabulary.errors import ConfigError

__all__ = ["CONSENTS", "DEFAULT_GRANTS", "GRANTS", "POLICY_KEYS", "PresetClient", "StubPolicy", "parse_policy"]

GRANTS = ("authorization_code", "client_credentials", "refresh_token")
"""Every grant the stub can run."""
DEFAULT_GRANTS = ("authorization_code", "refresh_token")
CONSENTS = ("grant", "deny")
POLICY_KEYS = frozenset(
    {"grant_types", "registration", "public_registration", "refused_grants", "clients", "consent", "metadata_issuer"}
)
"""Keys of the ``stub`` section this module reads."""


@dataclass(frozen=True)
class PresetClient:
    """A client the stub knows before any registration."""

    client_id: str
    secret: str | None = None
    """``None``: a public client (no client authentication)."""
    redirect_uris: tuple[str, ...] = ()


@dataclass(frozen=True)
class StubPolicy:
    """The grants, registration, clients, consent and metadata issuer the stub offers."""

    grant_types: tuple[str, ...] = DEFAULT_GRANTS
    registration: bool = True
    """Whether dynamic client registration (RFC 7591) is offered."""
    public_registration: bool = False
    """Every client registered dynamically is made a public ``authorization_code`` client
    (``token_endpoint_auth_method: none``, ``grant_types: [authorization_code]``) whatever it asked for,
    as authorization servers that register only public clients do (RFC 7591 §3.2.1 lets the answer differ)."""
    refused_grants: tuple[str, ...] = ()
    """Grants the metadata advertises and registration accepts, but the token endpoint refuses
    (``unauthorized_client``): a client must cope with a grant that is offered and then not given."""
    clients: tuple[PresetClient, ...] = field(default=())
    consent: str = "grant"
    """``grant``: every authorization request is approved at once; ``deny``: refused with ``access_denied``."""
    metadata_issuer: str | None = None
    """The ``issuer`` the metadata declares, when it should differ from the real one (``None``: the real one)."""

    def __post_init__(self) -> None:
        unknown = [grant for grant in self.grant_types if grant not in GRANTS]
        if unknown or not self.grant_types:
            raise ConfigError(f"grant_types: choose from {', '.join(GRANTS)}")
        if not set(self.refused_grants) <= set(self.grant_types):
            raise ConfigError("refused_grants: only grants that grant_types advertises can be refused")
        if self.consent not in CONSENTS:
            raise ConfigError(f"consent {self.consent!r}: choose from {', '.join(CONSENTS)}")


def parse_policy(raw: Mapping[str, Any], where: str, secret: Callable[[Any, str], str]) -> StubPolicy:
    """The policy keys of a ``stub`` section; ``secret`` reads a client secret (``${ENV}`` only)."""
    grants = raw.get("grant_types", list(DEFAULT_GRANTS))
    if not isinstance(grants, list) or not grants or not all(item in GRANTS for item in grants):
        raise ConfigError(f"{where}.grant_types: expected a non-empty list from {', '.join(GRANTS)}")
    registration = raw.get("registration", True)
    if not isinstance(registration, bool):
        raise ConfigError(f"{where}.registration: expected true or false")
    public = raw.get("public_registration", False)
    if not isinstance(public, bool):
        raise ConfigError(f"{where}.public_registration: expected true or false")
    refused = raw.get("refused_grants") or []
    if not isinstance(refused, list) or not all(item in grants for item in refused):
        raise ConfigError(f"{where}.refused_grants: expected a list of grants from grant_types")
    consent = raw.get("consent", "grant")
    if consent not in CONSENTS:
        raise ConfigError(f"{where}.consent: expected one of {', '.join(CONSENTS)}")
    issuer = raw.get("metadata_issuer")
    if issuer is not None and not (isinstance(issuer, str) and urlsplit(issuer).scheme in ("http", "https")):
        raise ConfigError(f"{where}.metadata_issuer: expected an http(s) URL")
    clients = raw.get("clients") or []
    if not isinstance(clients, list):
        raise ConfigError(f"{where}.clients: expected a list of clients (client_id, client_secret, redirect_uris)")
    return StubPolicy(
        grant_types=tuple(dict.fromkeys(grants)),
        registration=registration,
        public_registration=public,
        refused_grants=tuple(dict.fromkeys(refused)),
        clients=tuple(_client(item, f"{where}.clients[{index}]", secret) for index, item in enumerate(clients)),
        consent=str(consent),
        metadata_issuer=issuer,
    )


def _client(raw: Any, where: str, secret: Callable[[Any, str], str]) -> PresetClient:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a mapping with client_id, client_secret, redirect_uris")
    known = ("client_id", "client_secret", "redirect_uris")
    unknown = sorted(set(map(str, raw)) - set(known))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(known)})")
    client_id = raw.get("client_id")
    if not isinstance(client_id, str) or not client_id:
        raise ConfigError(f"{where}.client_id: required")
    uris = raw.get("redirect_uris") or []
    if not isinstance(uris, list) or not all(isinstance(uri, str) and urlsplit(uri).scheme for uri in uris):
        raise ConfigError(f"{where}.redirect_uris: expected a list of absolute URIs")
    value = raw.get("client_secret")
    return PresetClient(
        client_id=client_id,
        secret=secret(value, f"{where}.client_secret") if value is not None else None,
        redirect_uris=tuple(uris),
    )
