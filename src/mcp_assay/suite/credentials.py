"""The credentials a run presents, and keeping every one of them out of the output.

Whatever the user already has is used as given: a token (``-t``) sent in a header or a query
parameter (``--auth-mode``), extra headers (``-H "name: value"``), or a token already in the URL.
Every value is handed to the :class:`~mcp_assay.recording.redaction.Redactor` before the first request, so
reports, recordings, reproductions and progress output never show it.

A refused credential is not a finding about conformance: the run stops the affected cases and
reports them *not verified* with the server's own answer (:class:`~mcp_assay.vocabulary.errors.CredentialsRefused`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mcp_assay.recording.redaction import Redactor
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.protocol import HeaderKey

__all__ = ["AUTH_MODES", "Credentials", "parse_header"]

AUTH_MODES = ("header", "query", "none")
_SECRETISH = re.compile(r"(auth|token|key|secret|session|cookie|password|credential|signature)", re.IGNORECASE)
_TOKEN_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def parse_header(value: str) -> tuple[str, str]:
    """``"name: value"`` -> ``("name", "value")``; a :class:`ConfigError` for anything else."""
    name, sep, rest = value.partition(":")
    name = name.strip()
    if not sep or not name or not _TOKEN_NAME.match(name):
        raise ConfigError(f'-H {value!r}: expected "name: value"')
    return name, rest.strip()


@dataclass(frozen=True)
class Credentials:
    """How the run authenticates; :meth:`apply` puts it on a request."""

    token: str | None = None
    auth_header: str = HeaderKey.AUTHORIZATION
    auth_scheme: str = "Bearer"
    auth_mode: str = "header"
    auth_query_param: str = "token"
    headers: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        if self.auth_mode not in AUTH_MODES:
            raise ConfigError(f"--auth-mode {self.auth_mode}: choose from {', '.join(AUTH_MODES)}")
        if not _TOKEN_NAME.match(self.auth_header):
            raise ConfigError(f"--auth-header {self.auth_header!r} is not a valid header name")
        if self.auth_mode == "query" and not self.auth_query_param:
            raise ConfigError("--auth-mode query needs a query parameter name")

    @classmethod
    def build(
        cls,
        *,
        token: str | None = None,
        auth_header: str | None = None,
        auth_scheme: str | None = None,
        auth_mode: str | None = None,
        auth_query_param: str | None = None,
        headers: Iterable[str] | Sequence[tuple[str, str]] = (),
    ) -> Credentials:
        pairs = tuple(parse_header(item) if isinstance(item, str) else (item[0], item[1]) for item in headers)
        return cls(
            token=token or None,
            auth_header=auth_header or HeaderKey.AUTHORIZATION,
            auth_scheme="Bearer" if auth_scheme is None else auth_scheme,
            auth_mode=auth_mode or "header",
            auth_query_param=auth_query_param or "token",
            headers=pairs,
        )

    # -- applying --------------------------------------------------------------------------------
    def header_pairs(self) -> list[tuple[str, str]]:
        """Headers every request carries: ``-H`` values, then the token header."""
        pairs = list(self.headers)
        if self.token and self.auth_mode == "header":
            value = f"{self.auth_scheme} {self.token}" if self.auth_scheme else self.token
            pairs.append((self.auth_header, value))
        return pairs

    def url(self, url: str) -> str:
        """The endpoint with the token added as a query parameter in query mode."""
        if not self.token or self.auth_mode != "query":
            return url
        parts = urlsplit(url)
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != self.auth_query_param]
        query.append((self.auth_query_param, self.token))
        return urlunsplit(parts._replace(query=urlencode(query)))

    def apply(self, headers: Mapping[str, str | bytes]) -> dict[str, str | bytes]:
        """Merge the credential headers into a request's headers (names compared case-insensitively)."""
        merged: dict[str, str | bytes] = dict(headers)
        for name, value in self.header_pairs():
            for existing in [key for key in merged if key.lower() == name.lower()]:
                del merged[existing]
            merged[name] = value
        return merged

    @property
    def presented(self) -> bool:
        """Whether any credential is configured (a token, or a secret-looking header)."""
        return bool(self.token) or any(_SECRETISH.search(name) for name, _ in self.headers)

    def anonymous(self) -> Credentials:
        """The same run without any credential: the ``-H`` headers that carry none, nothing else."""
        redactor = self.redactor()
        kept = tuple(
            (name, value)
            for name, value in self.headers
            if not redactor.is_secret_header(name) and name.lower() != self.auth_header.lower()
        )
        return Credentials(headers=kept, auth_mode="none")

    def forged(self, value: str) -> Credentials | None:
        """The same credentials with every secret replaced by ``value`` (``None`` when none is presented)."""
        if not self.presented:
            return None
        redactor = self.redactor()
        headers = tuple((name, value if redactor.is_secret_header(name) else kept) for name, kept in self.headers)
        return replace(self, token=value if self.token else None, headers=headers)

    # -- redaction -------------------------------------------------------------------------------
    def redactor(self, url: str | None = None) -> Redactor:
        """A redactor that already knows every configured secret and where secrets sit."""
        secret_headers = {self.auth_header.lower()}
        secret_headers.update(name.lower() for name, _ in self.headers if _SECRETISH.search(name))
        redactor = Redactor(headers=secret_headers, params={self.auth_query_param.lower()})
        if self.token:
            redactor.add_secret(self.token)
        for name, value in self.headers:
            if name.lower() in secret_headers or redactor.is_secret_header(name):
                redactor.learn_header(name, value)
                redactor.add_secret(value)
        if url is not None:
            redactor.learn_url(url)
            parts = urlsplit(url)
            if parts.password:
                redactor.add_secret(parts.password)
        return redactor

    def describe(self) -> str:
        """What is presented, without the values (for the report header)."""
        parts = []
        if self.token:
            where = (
                f"query parameter {self.auth_query_param}"
                if self.auth_mode == "query"
                else f"header {self.auth_header}" + (f" ({self.auth_scheme})" if self.auth_scheme else "")
            )
            parts.append(f"token in {where}" if self.auth_mode != "none" else "token configured but not sent")
        if self.headers:
            parts.append("extra headers " + ", ".join(name for name, _ in self.headers))
        return "; ".join(parts) or "none"
