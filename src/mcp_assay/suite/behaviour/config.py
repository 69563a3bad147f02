"""The behaviour part of the suite's YAML config: principals, witnesses, write tools, handles.

These keys sit next to the ordinary ``run`` settings in the one ``--config`` file::

    principals:                      # a token or a header set each, always from the environment
      reader: {token: ${READER_TOKEN}}
      writer: {token: ${WRITER_TOKEN}}
    expect:
      tools_by_principal: {reader: [list_drafts], writer: [list_drafts, create_draft]}
    witnesses:                       # reads whose answer changes when a write lands
      drafts: {mcp: {principal: reader, tool: list_drafts}, extract: structuredContent.count}
    write_tools:
      create_draft:
        principal: writer
        arguments: {title: probe, body: x}
        witness: drafts
        refusals: {extra_arguments: {publish: true}, principal_without_scope: reader}
        cancellation: {delay_argument: {delay_ms: 400}, timeout_ms: 100, settle_ms: 1200}
        changes: [drafts://index]      # resources a call changes (a listen stream watches them)
    handles: ...
    read_tools: ...

Everything is checked when the file is read, before any request: an unknown key, a reference to a
principal or witness that is not defined, a value of the wrong shape, an environment variable
that is not set, and a secret written inline (a token, or a credential-looking header, that is not
a ``${NAME}`` reference) are :class:`~mcp_assay.vocabulary.errors.ConfigError`. Inputs a case needs but the
file leaves out (no witness for a write tool, no cancellation block) are not errors: the case is
reported *not verified*, naming the missing key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_assay.userinput.values import COMMAND, HEADER, HEADER_NAME, JSON_OBJECT, URL, BadValue, Kind
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.protocol import REVISIONS

__all__ = [
    "config_secret",
    "BEHAVIOUR_KEYS",
    "BehaviourConfig",
    "Call",
    "Cancellation",
    "Handle",
    "Principal",
    "ReadTool",
    "Refusals",
    "Witness",
    "WriteTool",
    "parse_behaviour",
]

BEHAVIOUR_KEYS = ("principals", "expect", "witnesses", "write_tools", "read_tools", "handles")
"""Top-level keys of the config file this module owns."""

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRETISH = re.compile(r"(auth|token|key|secret|session|cookie|password|credential|signature)", re.IGNORECASE)
_ERAS = REVISIONS
DEFAULT_SETTLE_MS = 500
DEFAULT_WITNESS_TIMEOUT_MS = 5_000
DEFAULT_STABILITY_MS = 200


@dataclass(frozen=True)
class Principal:
    """A caller identity: credentials for HTTP, an environment for a spawned stdio server."""

    name: str
    token: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def http(self) -> bool:
        return self.token is not None or bool(self.headers)

    def secrets(self) -> list[str]:
        values = [self.token] if self.token else []
        values += [value for name, value in self.headers if _SECRETISH.search(name)]
        values += [value for name, value in self.env.items() if _SECRETISH.search(name)]
        return values


@dataclass(frozen=True)
class Witness:
    """A read that reflects the writes under test, reduced to a comparable value by ``extract``."""

    name: str
    kind: str
    """``mcp``, ``http`` or ``command``."""
    extract: str | None = None
    timeout_ms: int = DEFAULT_WITNESS_TIMEOUT_MS
    stability_ms: int = DEFAULT_STABILITY_MS
    principal: str | None = None
    tool: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    url: str | None = None
    method: str = "GET"
    headers: tuple[tuple[str, str], ...] = ()
    argv: tuple[str, ...] = ()

    def secrets(self) -> list[str]:
        return [value for name, value in self.headers if _SECRETISH.search(name)]


@dataclass(frozen=True)
class Refusals:
    extra_arguments: Mapping[str, Any] | None = None
    """Arguments added to the write tool's own, which its strict ``inputSchema`` forbids."""
    principal_without_scope: str | None = None
    """A principal that must not be able to use the write tool."""


@dataclass(frozen=True)
class Cancellation:
    delay_argument: Mapping[str, Any] = field(default_factory=dict)
    """Arguments that make the call slow enough to cancel (a test build's knob)."""
    timeout_ms: int | None = None
    """The client timeout; unset: a third of the calibrated call's duration."""
    settle_ms: int | None = None
    """How long to wait after giving up before reading the witness; unset: max(1000, 3 × duration)."""
    eras: tuple[str, ...] | None = None
    """Revisions to race in; unset: every era the server serves."""
    repeat: int = 1
    """Races per era, each with its own witness reads (a server that loses the race only sometimes shows it)."""


@dataclass(frozen=True)
class WriteTool:
    name: str
    principal: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    witness: str | None = None
    settle_ms: int = DEFAULT_SETTLE_MS
    refusals: Refusals = field(default_factory=Refusals)
    cancellation: Cancellation | None = None
    changes: tuple[str, ...] = ()
    """URIs of the resources a call changes: a listen stream subscribed to them watches the call (SUB-08)."""


@dataclass(frozen=True)
class ReadTool:
    name: str
    principal: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    witness: str | None = None
    settle_ms: int = DEFAULT_SETTLE_MS


@dataclass(frozen=True)
class Call:
    principal: str
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Handle:
    """A tool that mints a handle and a tool that uses one; the user of another principal must be refused."""

    name: str
    create: Call
    use: Call
    handle: str
    """Where the handle sits in the create call's result (the ``extract`` path language)."""
    canary_argument: str | None = None
    """A string argument of ``create`` that gets a unique canary, looked for in the other principal's answer."""


@dataclass(frozen=True)
class BehaviourConfig:
    """The behaviour cases a run may send, as the config file describes them."""

    principals: Mapping[str, Principal] = field(default_factory=dict)
    tools_by_principal: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    witnesses: Mapping[str, Witness] = field(default_factory=dict)
    write_tools: Mapping[str, WriteTool] = field(default_factory=dict)
    read_tools: Mapping[str, ReadTool] = field(default_factory=dict)
    handles: Mapping[str, Handle] = field(default_factory=dict)

    def secrets(self) -> list[str]:
        """Every credential value the file resolved (handed to the redactor before any request)."""
        values = [secret for principal in self.principals.values() for secret in principal.secrets()]
        values += [secret for witness in self.witnesses.values() for secret in witness.secrets()]
        return values


# -- parsing -------------------------------------------------------------------------------------
class _Reader:
    """Validates one file's behaviour sections, naming the path of whatever is wrong."""

    def __init__(self, source: str, environ: Mapping[str, str]) -> None:
        self.source = source
        self.environ = environ

    def error(self, where: str, problem: str) -> ConfigError:
        return ConfigError(f"--config {self.source}: {where}: {problem}")

    def mapping(self, value: Any, where: str, known: tuple[str, ...] | None = None) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(where, f"expected a mapping (got {type(value).__name__})")
        result = {str(key): item for key, item in value.items()}
        if known is not None:
            unknown = sorted(set(result) - set(known))
            if unknown:
                raise self.error(where, f"unknown key {', '.join(unknown)} (known: {', '.join(known)})")
        return result

    def string(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.error(where, f"expected a non-empty string (got {value!r})")
        return value

    def optional_string(self, value: Any, where: str) -> str | None:
        return None if value is None else self.string(value, where)

    def integer(self, value: Any, where: str, *, low: int = 0, high: int = 600_000) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(where, f"expected a whole number (got {value!r})")
        if not low <= value <= high:
            raise self.error(where, f"must be between {low} and {high} (got {value})")
        return value

    def optional_integer(self, value: Any, where: str, default: int | None, **bounds: int) -> int | None:
        return default if value is None else self.integer(value, where, **bounds)

    def arguments(self, value: Any, where: str) -> dict[str, Any]:
        try:
            return JSON_OBJECT(self.mapping(value, where))
        except BadValue as exc:
            raise self.error(where, str(exc)) from None

    def checked(self, kind: Kind, value: Any, where: str) -> Any:
        try:
            return kind(value)
        except BadValue as exc:
            raise self.error(where, str(exc)) from None

    def names(self, value: Any, where: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.error(where, "expected a list of tool names")
        return tuple(value)

    def uris(self, value: Any, where: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(item, str) and ":" in item for item in value):
            raise self.error(where, "expected a list of resource URIs")
        return tuple(value)

    def expand(self, value: str, where: str) -> str:
        """``${NAME}`` references replaced by the environment; an unset variable is an error."""

        def resolve(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in self.environ:
                raise self.error(where, f"environment variable {name} is not set")
            return self.environ[name]

        return _REFERENCE.sub(resolve, value)

    def secret(self, value: Any, where: str) -> str:
        """A credential: it must be written as a ``${NAME}`` reference, never inline."""
        text = self.string(value, where)
        if not _REFERENCE.search(text):
            raise self.error(
                where, "inline secrets are refused; write ${ENV_VAR} and export the value in the environment"
            )
        resolved = self.expand(text, where)
        if not resolved.strip():
            raise self.error(where, "the environment variable it names is empty")
        return resolved

    def header_set(self, value: Any, where: str, *, http: bool = True) -> tuple[tuple[str, str], ...]:
        """Headers (``http``) or environment variables: names to values, secret-looking ones from ``${ENV}``."""
        headers = self.mapping(value, where)
        pairs = []
        for name, item in headers.items():
            spot = f"{where}.{name}"
            text = self.secret(item, spot) if _SECRETISH.search(name) else self.expand(self.string(item, spot), spot)
            if http:
                name, text = self.checked(HEADER, (name, text), spot)
            elif not name or "=" in name or "\x00" in name + text:
                raise self.error(spot, "an environment variable has a name without '=' and no NUL characters")
            pairs.append((name, text))
        return tuple(pairs)


def _principals(reader: _Reader, raw: Any) -> dict[str, Principal]:
    result = {}
    for name, value in reader.mapping(raw, "principals").items():
        where = f"principals.{name}"
        entry = reader.mapping(value, where, ("token", "headers", "env"))
        token = reader.secret(entry["token"], f"{where}.token") if entry.get("token") is not None else None
        headers = reader.header_set(entry.get("headers"), f"{where}.headers")
        env = dict(reader.header_set(entry.get("env"), f"{where}.env", http=False))
        if token is None and not headers and not env:
            raise reader.error(where, "give a token, a headers set (HTTP) or an env set (stdio)")
        result[name] = Principal(name=name, token=token, headers=headers, env=env)
    return result


def _principal(reader: _Reader, value: Any, where: str, principals: Mapping[str, Principal]) -> str | None:
    if value is None:
        return None
    name = reader.string(value, where)
    if name not in principals:
        raise reader.error(where, f"no principal named {name!r} (defined: {', '.join(principals) or 'none'})")
    return name


def _witnesses(reader: _Reader, raw: Any, principals: Mapping[str, Principal]) -> dict[str, Witness]:
    result = {}
    for name, value in reader.mapping(raw, "witnesses").items():
        where = f"witnesses.{name}"
        entry = reader.mapping(value, where, ("mcp", "http", "command", "extract", "timeout_ms", "stability_ms"))
        kinds = [kind for kind in ("mcp", "http", "command") if entry.get(kind) is not None]
        if len(kinds) != 1:
            raise reader.error(where, "give exactly one of mcp, http or command")
        kind = kinds[0]
        common: dict[str, Any] = {
            "name": name,
            "kind": kind,
            "extract": reader.optional_string(entry.get("extract"), f"{where}.extract"),
            "timeout_ms": reader.integer(entry.get("timeout_ms", DEFAULT_WITNESS_TIMEOUT_MS), f"{where}.timeout_ms",
                                         low=100, high=120_000),
            "stability_ms": reader.integer(entry.get("stability_ms", DEFAULT_STABILITY_MS), f"{where}.stability_ms",
                                           high=10_000),
        }  # fmt: skip
        if common["extract"] is not None:
            _check_extract(reader, common["extract"], f"{where}.extract")
        if kind == "mcp":
            mcp = reader.mapping(entry["mcp"], f"{where}.mcp", ("principal", "tool", "arguments"))
            result[name] = Witness(
                **common,
                principal=_principal(reader, mcp.get("principal"), f"{where}.mcp.principal", principals),
                tool=reader.string(mcp.get("tool"), f"{where}.mcp.tool"),
                arguments=reader.arguments(mcp.get("arguments"), f"{where}.mcp.arguments"),
            )
        elif kind == "http":
            http = reader.mapping(entry["http"], f"{where}.http", ("url", "method", "headers"))
            url = reader.expand(reader.string(http.get("url"), f"{where}.http.url"), f"{where}.http.url")
            reader.checked(URL, url, f"{where}.http.url")
            result[name] = Witness(
                **common,
                url=url,
                method=reader.checked(HEADER_NAME, http.get("method", "GET"), f"{where}.http.method").upper(),
                headers=reader.header_set(http.get("headers"), f"{where}.http.headers"),
            )
        else:
            command = entry["command"]
            if not isinstance(command, list) or not command or not all(isinstance(part, str) for part in command):
                raise reader.error(f"{where}.command", "expected a list of strings (the program and its arguments)")
            argv = reader.checked(
                COMMAND, [reader.expand(part, f"{where}.command") for part in command], f"{where}.command"
            )
            result[name] = Witness(**common, argv=argv)
    return result


def _check_extract(reader: _Reader, path: str, where: str) -> None:
    from mcp_assay.suite.behaviour.extract import ExtractError, parse_extract

    try:
        parse_extract(path)
    except ExtractError as exc:
        raise reader.error(where, str(exc)) from None


def _witness_ref(reader: _Reader, value: Any, where: str, witnesses: Mapping[str, Witness]) -> str | None:
    if value is None:
        return None
    name = reader.string(value, where)
    if name not in witnesses:
        raise reader.error(where, f"no witness named {name!r} (defined: {', '.join(witnesses) or 'none'})")
    return name


def _cancellation(reader: _Reader, raw: Any, where: str) -> Cancellation | None:
    if raw is None:
        return None
    entry = reader.mapping(raw, where, ("delay_argument", "timeout_ms", "settle_ms", "eras", "repeat"))
    eras = entry.get("eras")
    if eras is not None:
        if not isinstance(eras, list) or not all(isinstance(era, str) and era in _ERAS for era in eras):
            raise reader.error(f"{where}.eras", f"expected a list of revisions among {', '.join(_ERAS)}")
        eras = tuple(eras)
    return Cancellation(
        delay_argument=reader.arguments(entry.get("delay_argument"), f"{where}.delay_argument"),
        timeout_ms=reader.optional_integer(entry.get("timeout_ms"), f"{where}.timeout_ms", None, low=1, high=60_000),
        settle_ms=reader.optional_integer(entry.get("settle_ms"), f"{where}.settle_ms", None, high=60_000),
        eras=eras,
        repeat=reader.integer(entry.get("repeat", 1), f"{where}.repeat", low=1, high=10),
    )


def _write_tools(
    reader: _Reader, raw: Any, principals: Mapping[str, Principal], witnesses: Mapping[str, Witness]
) -> dict[str, WriteTool]:
    result = {}
    known = ("principal", "arguments", "witness", "settle_ms", "refusals", "cancellation", "changes")
    for name, value in reader.mapping(raw, "write_tools").items():
        where = f"write_tools.{name}"
        entry = reader.mapping(value, where, known)
        refusals = reader.mapping(entry.get("refusals"), f"{where}.refusals",
                                  ("extra_arguments", "principal_without_scope"))  # fmt: skip
        extra = refusals.get("extra_arguments")
        result[name] = WriteTool(
            name=name,
            principal=_principal(reader, entry.get("principal"), f"{where}.principal", principals),
            arguments=reader.arguments(entry.get("arguments"), f"{where}.arguments"),
            witness=_witness_ref(reader, entry.get("witness"), f"{where}.witness", witnesses),
            settle_ms=reader.integer(entry.get("settle_ms", DEFAULT_SETTLE_MS), f"{where}.settle_ms", high=60_000),
            refusals=Refusals(
                extra_arguments=None if extra is None else reader.arguments(extra, f"{where}.refusals.extra_arguments"),
                principal_without_scope=_principal(
                    reader,
                    refusals.get("principal_without_scope"),
                    f"{where}.refusals.principal_without_scope",
                    principals,
                ),
            ),  # fmt: skip
            cancellation=_cancellation(reader, entry.get("cancellation"), f"{where}.cancellation"),
            changes=reader.uris(entry.get("changes", []), f"{where}.changes"),
        )
    return result


def _read_tools(
    reader: _Reader, raw: Any, principals: Mapping[str, Principal], witnesses: Mapping[str, Witness]
) -> dict[str, ReadTool]:
    result = {}
    for name, value in reader.mapping(raw, "read_tools").items():
        where = f"read_tools.{name}"
        entry = reader.mapping(value, where, ("principal", "arguments", "witness", "settle_ms"))
        result[name] = ReadTool(
            name=name,
            principal=_principal(reader, entry.get("principal"), f"{where}.principal", principals),
            arguments=reader.arguments(entry.get("arguments"), f"{where}.arguments"),
            witness=_witness_ref(reader, entry.get("witness"), f"{where}.witness", witnesses),
            settle_ms=reader.integer(entry.get("settle_ms", DEFAULT_SETTLE_MS), f"{where}.settle_ms", high=60_000),
        )
    return result


def _call(reader: _Reader, raw: Any, where: str, principals: Mapping[str, Principal]) -> Call:
    entry = reader.mapping(raw, where, ("principal", "tool", "arguments"))
    principal = _principal(reader, entry.get("principal"), f"{where}.principal", principals)
    if principal is None:
        raise reader.error(f"{where}.principal", "a handle case needs a principal for each call")
    return Call(
        principal=principal,
        tool=reader.string(entry.get("tool"), f"{where}.tool"),
        arguments=reader.arguments(entry.get("arguments"), f"{where}.arguments"),
    )


def _handles(reader: _Reader, raw: Any, principals: Mapping[str, Principal]) -> dict[str, Handle]:
    result = {}
    for name, value in reader.mapping(raw, "handles").items():
        where = f"handles.{name}"
        entry = reader.mapping(value, where, ("create", "use", "handle", "canary_argument"))
        handle = reader.string(entry.get("handle"), f"{where}.handle")
        _check_extract(reader, handle, f"{where}.handle")
        create = _call(reader, entry.get("create"), f"{where}.create", principals)
        use = _call(reader, entry.get("use"), f"{where}.use", principals)
        if create.principal == use.principal:
            raise reader.error(where, "create and use must name two different principals")
        if not any("{handle}" in str(item) for item in use.arguments.values()):
            raise reader.error(f"{where}.use.arguments", 'put "{handle}" where the handle goes')
        result[name] = Handle(
            name=name,
            create=create,
            use=use,
            handle=handle,
            canary_argument=reader.optional_string(entry.get("canary_argument"), f"{where}.canary_argument"),
        )
    return result


def config_secret(value: Any, source: str, where: str, environ: Mapping[str, str] | None = None) -> str:
    """A credential from a config file: a ``${ENV}`` reference, never an inline value."""
    return _Reader(source, os.environ if environ is None else environ).secret(value, where)


def parse_behaviour(
    data: Mapping[str, Any], source: str = "the config file", environ: Mapping[str, str] | None = None
) -> BehaviourConfig | None:
    """The behaviour sections of a config file (``None`` when it has none)."""
    if not any(data.get(key) is not None for key in BEHAVIOUR_KEYS):
        return None
    reader = _Reader(source, os.environ if environ is None else environ)
    principals = _principals(reader, data.get("principals"))
    expect = reader.mapping(data.get("expect"), "expect", ("tools_by_principal",))
    table = {}
    for name, tools in reader.mapping(expect.get("tools_by_principal"), "expect.tools_by_principal").items():
        where = f"expect.tools_by_principal.{name}"
        _principal(reader, name, where, principals)
        table[name] = reader.names(tools, where)
    witnesses = _witnesses(reader, data.get("witnesses"), principals)
    return BehaviourConfig(
        principals=principals,
        tools_by_principal=table,
        witnesses=witnesses,
        write_tools=_write_tools(reader, data.get("write_tools"), principals, witnesses),
        read_tools=_read_tools(reader, data.get("read_tools"), principals, witnesses),
        handles=_handles(reader, data.get("handles"), principals),
    )
