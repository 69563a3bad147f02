"""Keep credentials out of everything mcp-assay writes: reports, recordings and logs.

Secrets are recognised three ways: by where they sit (``Authorization``-like headers, cookies,
``?token=``-style query parameters, the password of a URL's ``user:password@``), by value (every
credential seen in a header or a URL, and every value the user configured, is scrubbed wherever it
reappears, bodies included), and by shape (JWTs, and the password of any URL written in a text).
Names are kept so a reader still knows a credential was there.

A value reappears in more than one spelling: inside a JSON string its ``"`` and ``\\`` are escaped
(twice when that JSON is itself quoted in a JSON string, as a tool result quoting a request is), in a
URL or a form it is percent-encoded, in an HTML page entity-escaped, and a body that is not UTF-8 is
written as base64. Every known secret is scrubbed in each of those spellings (:func:`spellings`), and a
binary body is scrubbed as bytes before it is encoded (:meth:`Redactor.binary`).

A redacted URL stays a URL: its password becomes ``REDACTED`` (``http://alice:REDACTED@host/``; a user
without a password, often a token, becomes ``REDACTED@host``), since the bracketed marker used elsewhere
would make the authority read as an IPv6 literal.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import html
import json
import re
import shlex
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlencode, urlsplit, urlunsplit

from mcp_assay.vocabulary.protocol import HeaderKey

__all__ = ["REDACTED", "REDACTED_PASSWORD", "Redactor", "command_secrets", "spellings"]

REDACTED = "[REDACTED]"
REDACTED_PASSWORD = "REDACTED"
"""What a URL's password becomes: ``[`` in the authority would make it read as an IPv6 literal."""

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
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/?#@:\"'<>\\]*:)([^\s/?#@\"'<>\\]+)@")
"""The password of a URL written in a text (``scheme://user:password@``), recognised by its shape."""
_URL = re.compile(r"""\bhttps?://[^\s"'<>()\[\]]+""")
"""A URL written in a line of text (a log line, a command, a note)."""
_MIN_SECRET = 6
_JSON_DEPTH = 3
"""How many times a value may be JSON-quoted inside JSON and still be recognised."""


def spellings(secret: str) -> set[str]:
    """Every spelling of ``secret`` mcp-assay may write or find in what it writes: as it is, JSON-escaped
    (ASCII-only or not, up to :data:`_JSON_DEPTH` times), percent-encoded (as URL and form encoders differ,
    hex digits in either case), and HTML-escaped."""
    forms = {secret}
    escaped = {secret}
    for _ in range(_JSON_DEPTH):
        escaped = {json.dumps(item, ensure_ascii=ascii_only)[1:-1] for item in escaped for ascii_only in (False, True)}
        forms |= escaped
    encoded = {quote(secret, safe=""), quote(secret, safe="/"), quote(secret, safe="!'()*~"), quote_plus(secret)}
    forms |= encoded | {re.sub(r"%[0-9A-F]{2}", lambda match: match.group().lower(), item) for item in encoded}
    forms |= {html.escape(secret, quote=True), html.escape(secret, quote=False)}
    return forms


_SECRET_WORDS = ("token", "secret", "password", "passwd", "apikey", "api-key", "credential")
"""A command-line option or variable whose name holds one of these carries a secret (``--auth-token``,
``--client-secret``, ``DB_PASSWORD=``)."""


def _names_a_secret(name: str) -> bool:
    name = name.lstrip("-").lower().replace("_", "-")
    return name in SECRET_PARAMS - {"code"} or any(word in name for word in _SECRET_WORDS)


def command_secrets(argv: Iterable[str]) -> list[str]:
    """The values a command line gives by a secret's name: ``--api-key VALUE``, ``--token=VALUE``,
    ``API_KEY=VALUE`` (an ``env`` assignment), so a server command shown in a header or a report is scrubbed
    without the user repeating them with ``--secret``. Recognised by where they sit, as headers are."""
    found: list[str] = []
    words = list(argv)
    for word in words:
        if " " in word:  # a shell snippet (``sh -c "server --token X"``): its own words, as far as they split
            try:
                found += command_secrets(shlex.split(word))
            except ValueError:
                pass
    for index, word in enumerate(words):
        name, equals, value = word.partition("=")
        if equals and (name.startswith("-") or name.isidentifier()) and _names_a_secret(name):
            found.append(value)
        elif word.startswith("-") and not equals and _names_a_secret(word) and index + 1 < len(words):
            if not words[index + 1].startswith("-"):
                found.append(words[index + 1])
    return [value for value in found if len(value.strip()) >= _MIN_SECRET]


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
        self._binary: re.Pattern[str] | None = None
        for secret in secrets:
            self.add_secret(secret)

    def add_secret(self, secret: str) -> None:
        secret = secret.strip()
        if len(secret) >= _MIN_SECRET and secret not in self._secrets:
            self._secrets.add(secret)
            self._pattern = self._binary = None

    def _spelled(self) -> list[str]:
        """Every spelling of every known secret, longest first (a longer one may hold a shorter)."""
        forms = {form for secret in self._secrets for form in spellings(secret)}
        return sorted(forms, key=len, reverse=True)

    @property
    def secrets(self) -> frozenset[str]:
        """Every value scrubbed by value (configured or learnt): another ``Redactor(secrets=...)`` scrubs the same."""
        return frozenset(self._secrets)

    def is_secret_header(self, name: str) -> bool:
        return name.lower() in self._headers

    def learn_header(self, name: str, value: str) -> None:
        """Remember the credential in a secret-bearing header so it is scrubbed everywhere else (of a
        ``Basic`` credential, the decoded ``user:password`` and the password too)."""
        if not self.is_secret_header(name):
            return
        scheme, _, credential = value.partition(" ")
        if credential or scheme.strip().lower() not in AUTH_SCHEMES:
            self.add_secret(credential if credential else scheme)
        if scheme.strip().lower() == "basic" and credential.strip():
            try:
                pair = base64.b64decode(credential.strip(), validate=True).decode("utf-8")
            except (binascii.Error, ValueError):
                pair = ""
            if ":" in pair:
                self.add_secret(pair)
                self.add_secret(pair.partition(":")[2])
        if name.lower() in ("cookie", "set-cookie"):
            for part in value.split(";"):
                _, _, cookie_value = part.partition("=")
                self.add_secret(cookie_value)

    def learn_location(self, value: str) -> None:
        """A redirect's ``Location`` (an authorization response carries its ``code`` there)."""
        self.learn_url(value)

    def learn_url(self, url: str) -> None:
        """Remember a URL's secret query values and the password of its ``user:password@`` (a user without a
        password is taken for a token, as ``https://TOKEN@host`` is)."""
        try:
            parts = urlsplit(url)
        except ValueError:
            return
        for name, value in parse_qsl(parts.query, keep_blank_values=True):
            if name.lower() in self._params:
                self.add_secret(value)
        userinfo, at, _ = parts.netloc.rpartition("@")
        user, colon, password = userinfo.partition(":")
        secret = password if colon else user
        if at and secret and secret != REDACTED_PASSWORD:
            self.add_secret(secret)
            self.add_secret(unquote(secret))

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
        """Scrub every known secret (in each of its spellings), every JWT-shaped string and the password of
        every URL written in the text."""
        if not text:
            return text
        if self._secrets:
            if self._pattern is None:
                self._pattern = re.compile("|".join(re.escape(form) for form in self._spelled()))
            text = self._pattern.sub(REDACTED, text)
        if "://" in text:
            text = _USERINFO.sub(lambda match: f"{match.group(1)}{REDACTED_PASSWORD}@", text)
        return _JWT.sub(REDACTED, text)

    def prose(self, text: str) -> str:
        """A line of text (a log line, a command, a note): every URL in it redacted as a URL (its secret query
        values, its password), then every known secret scrubbed."""
        return self.text(_URL.sub(lambda match: self.url(match.group()), text)) if text else text

    def data(self, value: Any, *, urls: bool = False) -> Any:
        """JSON data (an observation, a recording's header) with every string in it, keys included, scrubbed as
        :meth:`text`; with ``urls``, as :meth:`prose` (every URL's secret query values too, for text a user wrote,
        such as a command line: traffic keeps its URLs as they were)."""
        scrub = self.prose if urls else self.text
        if isinstance(value, str):
            return scrub(value)
        if isinstance(value, dict):
            return {scrub(str(key)): self.data(item, urls=urls) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(item, urls=urls) for item in value]
        return value

    def binary(self, data: bytes) -> bytes:
        """Scrub every known secret and JWT from bytes that are not UTF-8 text (a body written as base64):
        each spelling is looked for as its UTF-8 bytes."""
        if not data:
            return data
        text = data.decode("latin-1")  # one character per byte, so positions and lengths are the bytes'
        if self._secrets:
            if self._binary is None:
                forms = {form.encode("utf-8").decode("latin-1") for form in self._spelled()}
                ordered = sorted(forms, key=len, reverse=True)
                self._binary = re.compile("|".join(re.escape(form) for form in ordered))
            text = self._binary.sub(REDACTED, text)
        return _JWT.sub(REDACTED, text).encode("latin-1")

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
        """The URL with its secret query values and its password replaced; still a URL that parses (a text
        that does not parse as one is scrubbed as text)."""
        try:
            parts = urlsplit(url)
        except ValueError:
            return self.text(url)
        if parts.query:
            query = [
                (name, REDACTED if name.lower() in self._params else self.text(value))
                for name, value in parse_qsl(parts.query, keep_blank_values=True)
            ]
            parts = parts._replace(query=urlencode(query, safe="[]"))
        userinfo, at, host = parts.netloc.rpartition("@")
        if at:
            user, colon, _ = userinfo.partition(":")
            shown = f"{self.text(user)}:{REDACTED_PASSWORD}" if colon else REDACTED_PASSWORD
            parts = parts._replace(netloc=f"{shown}@{host}")
        return self.text(urlunsplit(parts))
