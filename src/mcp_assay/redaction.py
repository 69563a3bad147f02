"""Keep credentials out of everything mcp-assay writes: reports, recordings and logs.

Secrets are recognised three ways: by where they sit (``Authorization``-like headers, cookies,
``?token=``-style query parameters), by value (every credential seen in a header, and every value
the user configured, is scrubbed wherever it reappears, bodies included), and by shape (JWTs).
Names are kept so a reader still knows a credential was there.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mcp_assay.protocol import HeaderKey

__all__ = ["REDACTED", "Redactor"]

REDACTED = "[REDACTED]"

SECRET_HEADERS = frozenset(
    {
        HeaderKey.AUTHORIZATION,
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "api-key",
        "apikey",
        "x-auth-token",
        "x-access-token",
        "x-hasmcp-key",
    }
)
SECRET_PARAMS = frozenset(
    {
        "token",
        "access_token",
        "id_token",
        "refresh_token",
        "api_key",
        "apikey",
        "api-key",
        "key",
        "jwt",
        "auth",
        "code",
        "secret",
        "client_secret",
        "password",
        "sig",
        "signature",
    }
)
SECRET_FIELDS = frozenset(
    {
        "access_token",
        "refresh_token",
        "id_token",
        "client_secret",
        "registration_access_token",
        "code",
        "code_verifier",
        "device_code",
        "assertion",
        "client_assertion",
        "password",
    }
)
"""Members of OAuth form bodies and JSON answers (token, registration) that hold a credential."""
_FIELD_HINT = re.compile("|".join(sorted(SECRET_FIELDS, key=len, reverse=True)))
AUTH_SCHEMES = frozenset({"bearer", "basic", "digest", "dpop", "negotiate", "token"})
"""HTTP authentication scheme names: a header holding nothing but one carries no secret (and must not make
the word itself a secret to scrub from every report)."""
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_MIN_SECRET = 6


def fingerprint(secret: str) -> str:
    """``sha256:<12 hex>`` of a secret: lets two reports be compared without revealing it."""
    return "sha256:" + hashlib.sha256(secret.encode()).hexdigest()[:12]


class Redactor:
    """Scrubs known and recognisable secrets; learns new ones from the traffic it sees."""

    def __init__(self, secrets: Iterable[str] = (), headers: Iterable[str] = (), params: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self._headers = SECRET_HEADERS | {name.lower() for name in headers}
        self._params = SECRET_PARAMS | {name.lower() for name in params}
        self._pattern: re.Pattern[str] | None = None
        for secret in secrets:
            self.add_secret(secret)

    def add_secret(self, secret: str) -> None:
        secret = secret.strip()
        if len(secret) >= _MIN_SECRET and secret not in self._secrets:
            self._secrets.add(secret)
            self._pattern = None

    @property
    def secrets(self) -> frozenset[str]:
        """Every value scrubbed by value (configured or learnt): another ``Redactor(secrets=...)`` scrubs the same."""
        return frozenset(self._secrets)

    def is_secret_header(self, name: str) -> bool:
        return name.lower() in self._headers

    def learn_header(self, name: str, value: str) -> None:
        """Remember the credential in a secret-bearing header so it is scrubbed everywhere else."""
        if not self.is_secret_header(name):
            return
        scheme, _, credential = value.partition(" ")
        if credential or scheme.strip().lower() not in AUTH_SCHEMES:
            self.add_secret(credential if credential else scheme)
        if name.lower() in ("cookie", "set-cookie"):
            for part in value.split(";"):
                _, _, cookie_value = part.partition("=")
                self.add_secret(cookie_value)

    def learn_location(self, value: str) -> None:
        """A redirect's ``Location`` (an authorization response carries its ``code`` there)."""
        self.learn_url(value)

    def learn_url(self, url: str) -> None:
        for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
            if name.lower() in self._params:
                self.add_secret(value)

    def learn_body(self, text: str) -> None:
        """Remember the credentials an OAuth body carries: a form's secret fields (``code``,
        ``code_verifier``, ``client_secret`` ...) or a JSON answer's (``access_token`` ...)."""
        if not _FIELD_HINT.search(text):
            return
        stripped = text.strip()
        if stripped.startswith("{"):
            try:
                payload = json.loads(stripped)
            except ValueError:
                return
            if isinstance(payload, dict):
                for name, value in payload.items():
                    if name in SECRET_FIELDS and isinstance(value, str):
                        self.add_secret(value)
            return
        if "=" in stripped and " " not in stripped:
            for name, value in parse_qsl(stripped, keep_blank_values=True):
                if name in SECRET_FIELDS or name.lower() in self._params:
                    self.add_secret(value)

    def body(self, text: str) -> str:
        """A message or HTTP body as it may be written: its own credentials learnt, then every secret scrubbed."""
        self.learn_body(text)
        return self.text(text)

    def text(self, text: str) -> str:
        """Scrub every known secret and every JWT-shaped string."""
        if not text:
            return text
        if self._secrets:
            if self._pattern is None:
                ordered = sorted(self._secrets, key=len, reverse=True)
                self._pattern = re.compile("|".join(re.escape(secret) for secret in ordered))
            text = self._pattern.sub(REDACTED, text)
        return _JWT.sub(REDACTED, text)

    def header(self, name: str, value: str) -> str:
        if name.lower() == "location":
            self.learn_location(value)
            return self.url(value)
        if self.is_secret_header(name):
            if name.lower() in ("cookie", "set-cookie"):
                return "; ".join(
                    f"{part.split('=', 1)[0].strip()}={REDACTED}" if "=" in part else part.strip()
                    for part in value.split(";")
                )
            scheme, sep, credential = value.partition(" ")
            if not credential.strip() and scheme.strip().lower() in AUTH_SCHEMES:
                return value  # a bare scheme name carries nothing to hide
            return f"{scheme} {REDACTED}" if sep and credential else REDACTED
        return self.text(value)

    def headers(self, pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(name, self.header(name, value)) for name, value in pairs]

    def url(self, url: str) -> str:
        parts = urlsplit(url)
        if parts.query:
            query = [
                (name, REDACTED if name.lower() in self._params else self.text(value))
                for name, value in parse_qsl(parts.query, keep_blank_values=True)
            ]
            parts = parts._replace(query=urlencode(query, safe="[]"))
        if parts.password:
            netloc = parts.netloc.replace(f":{parts.password}@", f":{REDACTED}@")
            parts = parts._replace(netloc=netloc)
        return self.text(urlunsplit(parts))
