"""One check per kind of value a user hands mcp-assay: URLs, ports, bounded numbers, headers, commands.

A value reaches mcp-assay from a flag, its ``MCP_ASSAY_*`` environment twin or a config file key.
Each of those edges asks this module whether the value is usable and names where it came from,
so a port, a URL or a timeout is held to the same rule wherever it was written, and a value
that would fail half-way through a run (a NaN deadline, a header that smuggles a second header,
a URL the HTTP client cannot parse) is refused before any work. A kind is a callable: it returns
the value in its Python type, or raises :class:`BadValue` with one line saying what was wanted
and what was given, without naming the source (the caller does).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from mcp_assay.recording.redaction import Redactor

__all__ = [
    "COMMAND",
    "FLAG",
    "GATEWAY_BACK",
    "HEADER",
    "HEADERS",
    "HEADER_NAME",
    "HOST",
    "HOST_PORT",
    "JSON_OBJECT",
    "MAX_MS",
    "MAX_SECONDS",
    "NAMES",
    "REVISION",
    "SECONDS",
    "STRING",
    "STRINGS",
    "TEXT",
    "TOKEN",
    "URL",
    "BadValue",
    "Choice",
    "Kind",
    "Number",
    "port",
    "shown",
]

MAX_SECONDS = 86_400
"""The longest wait any option may ask for (a day): past it a wait is a mistake, not a setting."""
MAX_MS = MAX_SECONDS * 1000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_FIELD_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
"""Characters a header value may not hold (RFC 9110 field-value: tab is the one control allowed)."""
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HOST = re.compile(r"[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*")


class BadValue(ValueError):
    """A value of the wrong kind: the message says what was wanted and what was given (one line)."""


class Kind(Protocol):
    """What a value must be: :attr:`wanted` says it in words, calling it checks and converts one value."""

    @property
    def wanted(self) -> str: ...

    def __call__(self, value: Any) -> Any: ...


def shown(value: Any, limit: int = 60) -> str:
    """A value as the user would recognise it, on one line and short (control characters escaped)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _refuse(kind: Kind, value: Any) -> BadValue:
    return BadValue(f"expected {kind.wanted} (got {shown(value)})")


def _wrong(why: str, value: Any) -> BadValue:
    return BadValue(f"{why} (got {shown(value)})")


@dataclass(frozen=True, slots=True)
class Number:
    """A finite number within bounds; strings (from the environment or a flag) are parsed."""

    low: float
    high: float
    whole: bool = False
    above: bool = False
    """``low`` itself is excluded (``more than 0``)."""
    unit: str = ""
    label: str = ""
    """Words used instead of the generated ones (``a port from 1 to 65535``)."""

    @property
    def wanted(self) -> str:
        if self.label:
            return self.label
        noun = ("a whole number" if self.whole else "a number") + (f" of {self.unit}" if self.unit else "")
        low = _figure(self.low)
        if self.above:
            return f"{noun}, more than {low} and at most {_figure(self.high)}"
        return f"{noun} from {low} to {_figure(self.high)}"

    def __call__(self, value: Any) -> int | float:
        number: int | float
        if isinstance(value, bool):
            raise _refuse(self, value)
        if isinstance(value, str):
            if not value.isascii():  # int() and float() read other scripts' digits; a flag's number is ASCII
                raise _refuse(self, value)
            try:
                number = int(value.strip()) if self.whole else float(value.strip())
            except ValueError:
                raise _refuse(self, value) from None
        elif isinstance(value, int | float):
            number = value
        else:
            raise _refuse(self, value)
        if not math.isfinite(number):
            raise _refuse(self, value)
        if self.whole and isinstance(number, float):
            raise _refuse(self, value)
        if number < self.low or number > self.high or (self.above and number == self.low):
            raise _refuse(self, value)
        return number if self.whole else float(number)


def _figure(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


SECONDS = Number(0, MAX_SECONDS, above=True, unit="seconds")
"""A wait: more than nothing, at most :data:`MAX_SECONDS`."""


def port(low: int = 1) -> Number:
    """A TCP port; ``low=0`` lets the system pick a free one."""
    return Number(low, 65535, whole=True, label=f"a port from {low} to 65535")


@dataclass(frozen=True, slots=True)
class _URL:
    """An ``http://`` or ``https://`` URL with a host, that the HTTP client itself accepts."""

    wanted: str = "an http:// or https:// URL (e.g. http://127.0.0.1:8000/mcp)"

    def __call__(self, value: Any) -> str:
        if not isinstance(value, str):
            raise _refuse(self, value)
        shown = Redactor().prose(value)  # an error names the URL without the password of its user:password@
        if re.search(r"\s", value) or _CONTROL.search(value):
            raise _wrong("a URL holds no spaces or control characters", shown)
        try:
            parts = urlsplit(value)
            given_port = parts.port
        except ValueError as exc:
            raise _wrong(f"not a valid URL: {Redactor().prose(str(exc))}", shown) from None
        if parts.scheme.lower() not in ("http", "https"):
            raise _refuse(self, shown)
        if not parts.hostname:
            raise _wrong("the URL names no host", shown)
        if given_port == 0:
            raise _wrong("the port must be from 1 to 65535", shown)
        import httpx  # here, not at the top: most commands check no URL, and httpx is a large import

        try:
            httpx.URL(value).host  # noqa: B018 - decoding the host is what fails for a malformed A-label
        except (httpx.InvalidURL, ValueError) as exc:
            raise _wrong(f"not a valid URL: {Redactor().prose(str(exc))}", shown) from None
        return value


URL = _URL()


@dataclass(frozen=True, slots=True)
class _GatewayBack:
    """``PORT=URL``: where a gateway's back hop is listened for (the gateway's upstream address) and the real server
    it leads to. Returned as given, once both halves are checked."""

    wanted: str = "PORT=URL, the port the gateway is told its upstream is on and the real server's URL"

    def __call__(self, value: Any) -> str:
        if not isinstance(value, str) or "=" not in value:
            raise _refuse(self, value)
        listen, _, target = value.partition("=")
        try:
            port(1)(listen.strip())
            URL(target.strip())
        except BadValue as exc:
            raise BadValue(f"PORT=URL: {exc}") from None
        return f"{listen.strip()}={target.strip()}"


GATEWAY_BACK = _GatewayBack()


@dataclass(frozen=True, slots=True)
class _Text:
    """A string on one line, without control characters (a name, a revision, a pattern)."""

    wanted: str = "text without control characters"
    empty: bool = True
    controls: bool = False
    """Control characters are allowed (a secret that is never sent as text)."""
    dates: bool = False
    """YAML reads an unquoted ``2025-11-25`` as a date: take it back as the revision it names."""

    def __call__(self, value: Any) -> str:
        if self.dates and isinstance(value, _dt.date):
            value = value.isoformat()
        if not isinstance(value, str) or (not self.controls and _CONTROL.search(value)):
            raise _refuse(self, value)
        if not self.empty and not value.strip():
            raise _refuse(self, value)
        return value


TEXT = _Text()
STRING = _Text("a string", controls=True)
REVISION = _Text("a revision such as 2025-11-25", empty=False, dates=True)


@dataclass(frozen=True, slots=True)
class _Matching:
    """A string the whole of which ``pattern`` matches."""

    wanted: str
    pattern: re.Pattern[str]

    def __call__(self, value: Any) -> str:
        if not isinstance(value, str) or not self.pattern.fullmatch(value):
            raise _refuse(self, value)
        return value


TOKEN = _Matching("printable ASCII without spaces or control characters", re.compile(r"[!-~]*"))
"""A credential sent in a header."""


HEADER_NAME = _Matching("a header name (letters, digits and !#$%&'*+.^_`|~-)", _HEADER_NAME)


@dataclass(frozen=True, slots=True)
class _Header:
    """``"name: value"`` (or a name and a value already apart): ASCII, no CR, LF or other controls."""

    wanted: str = 'a header "name: value" in ASCII, without CR, LF or other control characters'

    def __call__(self, value: Any) -> tuple[str, str]:
        if isinstance(value, list | tuple) and len(value) == 2:
            name, text = value
        elif isinstance(value, str):
            name, sep, text = value.partition(":")
            if not sep:
                raise _refuse(self, value)
        else:
            raise _refuse(self, value)
        if not isinstance(name, str) or not isinstance(text, str):
            raise _refuse(self, value)
        name, text = name.strip(" \t"), text.strip(" \t")
        if not _HEADER_NAME.fullmatch(name) or _FIELD_CONTROL.search(text) or not text.isascii():
            raise _refuse(self, value)
        return name, text


HEADER = _Header()


@dataclass(frozen=True, slots=True)
class _Headers:
    """Several headers: a list of ``"name: value"`` strings, one such string, or a mapping."""

    wanted: str = 'a list of "name: value" headers or a mapping of names to values'

    def __call__(self, value: Any) -> tuple[tuple[str, str], ...]:
        if isinstance(value, str):
            value = [value]
        elif isinstance(value, Mapping):
            value = [(str(name), item) for name, item in value.items()]
        if not isinstance(value, list | tuple):
            raise _refuse(self, value)
        return tuple(HEADER(item) for item in value)


HEADERS = _Headers()


HOST = _Matching("a host name or an IP address", _HOST)
"""A host name or an IP address to listen on or come back to."""


@dataclass(frozen=True, slots=True)
class _HostPort:
    """``HOST:PORT`` to listen on."""

    wanted: str = "HOST:PORT (e.g. 127.0.0.1:9411), with a port from 1 to 65535"

    def __call__(self, value: Any) -> tuple[str, int]:
        host, sep, number = value.rpartition(":") if isinstance(value, str) else ("", "", "")
        try:
            if not sep:
                raise BadValue
            return HOST(host), int(port(1)(number))
        except BadValue:
            raise _refuse(self, value) from None


HOST_PORT = _HostPort()


@dataclass(frozen=True, slots=True)
class _Command:
    """A command: one shell-quoted string or a list of strings; never empty."""

    wanted: str = "a command: one shell-quoted string or a list of strings"

    def __call__(self, value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            try:
                argv = tuple(shlex.split(value))
            except ValueError as exc:
                raise _wrong(f"cannot split the command into words: {exc}", value) from None
        elif isinstance(value, list | tuple) and all(isinstance(part, str) for part in value):
            argv = tuple(value)
        else:
            raise _refuse(self, value)
        if not argv or not argv[0]:
            raise _wrong("the command names no program", value)
        if any("\x00" in part for part in argv):
            raise _wrong("a command holds no NUL characters", value)
        return argv


COMMAND = _Command()


@dataclass(frozen=True, slots=True)
class _Flag:
    wanted: str = "true or false"

    def __call__(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise _refuse(self, value)
        return value


FLAG = _Flag()


@dataclass(frozen=True, slots=True)
class _Strings:
    """A list of strings, or one string (empty strings are dropped)."""

    wanted: str = "a list of strings"

    def __call__(self, value: Any) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(item, str) for item in items):
            raise _refuse(self, value)
        return tuple(item for item in items if item)


STRINGS = _Strings()


@dataclass(frozen=True, slots=True)
class _Names:
    """Names: a list, or strings of names separated by commas or spaces (as an environment twin gives them)."""

    wanted: str = "a list of tool names (or one string of names separated by commas)"

    def __call__(self, value: Any) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(item, str) for item in items):
            raise _refuse(self, value)
        names = tuple(dict.fromkeys(name for item in items for name in re.split(r"[,\s]+", item) if name))
        for name in names:
            if _CONTROL.search(name):
                raise _refuse(self, value)
        return names


NAMES = _Names()


@dataclass(frozen=True, slots=True)
class _JSONObject:
    """Arguments to send: a mapping of names to plain JSON values (no NaN, infinity, dates or cycles)."""

    wanted: str = "a mapping of names to plain JSON values"

    def __call__(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
            raise _refuse(self, value)
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise _wrong(f"expected plain JSON values, no NaN, infinity, dates or cycles ({exc})", value) from None
        return dict(value)


JSON_OBJECT = _JSONObject()


@dataclass(frozen=True, slots=True)
class Choice:
    """One of a few words."""

    options: Sequence[str]

    @property
    def wanted(self) -> str:
        return "one of " + ", ".join(self.options)

    def __call__(self, value: Any) -> str:
        if not isinstance(value, str) or value not in self.options:
            raise _refuse(self, value)
        return value
