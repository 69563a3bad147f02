"""What a suite run is told: the target, the revision, credentials, arguments and limits.

Everything the ``run`` flags say can also live in a YAML file (``--config``); flags and their
``MCP_ASSAY_*`` twins win over the file, the file wins over defaults. Keys are the long flag names
(``tool-args`` or ``tool_args``); an unknown key, a value of the wrong type, or tool/prompt
arguments that are not JSON objects are reported before the run starts, never half-way through.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from mcp_assay.recording.redaction import REDACTED, Redactor, command_secrets
from mcp_assay.suite.behaviour.config import BEHAVIOUR_KEYS, BehaviourConfig, config_secret, parse_behaviour
from mcp_assay.suite.credentials import AUTH_MODES, Credentials
from mcp_assay.suite.oauth.settings import DEFAULT_AUTH_TIMEOUT_MS, DEFAULT_REDIRECT_HOST, OAuthSettings
from mcp_assay.suite.stub.config import StubConfig, parse_stub
from mcp_assay.userinput.files import UnreadableFile, read_text, read_yaml
from mcp_assay.userinput.values import (
    COMMAND,
    FLAG,
    GATEWAY_BACK,
    HEADER_NAME,
    HEADERS,
    HOST,
    JSON_OBJECT,
    MAX_MS,
    MAX_SECONDS,
    NAMES,
    REVISION,
    SECONDS,
    STRING,
    STRINGS,
    TEXT,
    TOKEN,
    URL,
    BadValue,
    Choice,
    Kind,
    Number,
    port,
    shown,
)
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.protocol import HeaderKey

__all__ = [
    "PROBE_URL",
    "SETTINGS",
    "RateLimitProbe",
    "SuiteConfig",
    "check_setting",
    "load_arguments",
    "parse_rate_limit_probe",
    "read_config_file",
    "read_probe_config",
]


@dataclass(frozen=True)
class RateLimitProbe:
    """``rate_limit_probe: {tool, arguments, burst, window_s}``: calls to one safe tool, as fast as asked."""

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    burst: int = 30
    window_s: float = 3.0


def parse_rate_limit_probe(value: Any, where: str) -> RateLimitProbe | None:
    """The config file's ``rate_limit_probe`` section, checked before the run starts."""
    if value is None:
        return None
    prefix = f"--config {where}: rate_limit_probe"
    if not isinstance(value, Mapping):
        raise ConfigError(f"{prefix}: expected a mapping with tool, arguments, burst and window_s")
    unknown = sorted(set(map(str, value)) - {"tool", "arguments", "burst", "window_s"})
    if unknown:
        raise ConfigError(f"{prefix}: unknown keys {', '.join(unknown)} (known: arguments, burst, tool, window_s)")
    tool, arguments = value.get("tool"), value.get("arguments", {})
    burst, window = value.get("burst", 30), value.get("window_s", 3.0)
    if not isinstance(tool, str) or not tool:
        raise ConfigError(f"{prefix}.tool: name the (read-only, cheap) tool to call")
    try:
        arguments = JSON_OBJECT(arguments)
    except BadValue as exc:
        raise ConfigError(f"{prefix}.arguments: {exc}") from None
    if not isinstance(burst, int) or isinstance(burst, bool) or not 2 <= burst <= 500:
        raise ConfigError(f"{prefix}.burst: expected a whole number of calls from 2 to 500 (got {burst!r})")
    if not isinstance(window, int | float) or isinstance(window, bool) or not 0 < window <= 60:
        raise ConfigError(f"{prefix}.window_s: expected seconds, more than 0 and at most 60 (got {window!r})")
    return RateLimitProbe(tool, dict(arguments), burst, float(window))


@dataclass(frozen=True)
class SuiteConfig:
    """One run of the active suite."""

    url: str | None = None
    command: tuple[str, ...] = ()
    spec_version: str | None = None
    """Test only this revision; ``None`` tests every revision of the window the server serves."""
    modern_only: bool = False
    """The server is meant to serve modern revisions only: the handshake era is not tested, and an
    ``initialize`` the server answers anyway is a finding (VER-15, VER-21)."""
    token: str | None = None
    auth_header: str = HeaderKey.AUTHORIZATION
    auth_scheme: str = "Bearer"
    auth_mode: str = "header"
    auth_query_param: str = "token"
    headers: tuple[tuple[str, str], ...] = ()
    tool_args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    prompt_args: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    failing_tool: str | None = None
    """A tool the user says fails; called once (arguments from ``tool_args``) to see its error channel."""
    generate_args: tuple[str, ...] = ()
    """Tools the suite may call with arguments drawn from their inputSchema (``--generate-args``)."""
    generate_args_read_only: bool = True
    """Also every tool the server annotates ``readOnlyHint: true`` and not ``destructiveHint: true``: on by
    default (a plain valid call is what any client makes of a read-only tool; ``docs/run.md`` says why),
    ``--no-generate-args-read-only`` turns it off."""
    resource_sample: int = 5
    page_limit: int = 10
    only: str | None = None
    verbose: bool = False
    rate_limit: float | None = None
    """Requests per minute; ``None`` means unpaced."""
    retry_budget_ms: int = 60_000
    timeout: float = 10.0
    """Seconds to wait for any one answer."""
    stream_budget_ms: int = 1_500
    """How long listen-stream cases keep a stream open waiting for what they need."""
    record: str | None = None
    behaviour: BehaviourConfig | None = None
    """Principals, witnesses, write tools and handles for the behaviour cases (config file only)."""
    stub: StubConfig | None = None
    """The stand-in authorization server for the token-validation probes (config file only)."""
    rate_limit_probe: RateLimitProbe | None = None
    """The opt-in burst of calls to one safe tool that looks for a rate limit (BEH-11; config file only)."""
    serve: tuple[str, ...] = ()
    """An HTTP server command the run starts before it and stops after it (``--url`` is its endpoint)."""
    serve_timeout: float = 30.0
    """Seconds to wait for the ``serve`` command's port to accept connections."""
    secrets: tuple[str, ...] = ()
    """Values scrubbed from the report, the recording and the output, besides the credentials."""
    default_version: str | None = None
    """The revision a client declaring none is served on, assumed when the server cannot be asked which it
    offers (checked against the window by the caller, which knows it)."""
    client_id: str | None = None
    client_secret: str | None = None
    scope: str | None = None
    no_register: bool = False
    interactive: bool | None = None
    """``True``: sign in through a browser even where a machine grant exists; ``False``: never; ``None``: if
    somebody is at a terminal."""
    no_browser: bool = False
    redirect_host: str = DEFAULT_REDIRECT_HOST
    redirect_port: int | None = None
    auth_timeout: int = DEFAULT_AUTH_TIMEOUT_MS
    """Milliseconds to wait for the browser's redirect."""
    without_token: bool = False
    """When the sign-in fails, run the cases that need no token instead of stopping (exit 3) at the failed step."""
    allow_insecure_http: bool = False
    """Let the sign-in send credentials over plain http to a host that is not loopback (refused otherwise)."""
    # -- explore (mcp_assay.suite.explore): opt-in, arguments drawn from each tool's inputSchema ----------
    explore: bool = False
    """Explore tools with arguments generated from their inputSchema, inside it and outside it (``--explore``)."""
    explore_budget: int = 50
    """Calls per explored tool to look for failures (shrinking each failure found has a bound of its own)."""
    explore_time: float = 60.0
    """Seconds of exploring per revision tested, at most."""
    explore_tool: tuple[str, ...] = ()
    """Tools to explore besides those annotated ``readOnlyHint: true`` (a write tool only when named here)."""
    seed: int | None = None
    """The exploration's seed; ``None``: one is drawn (and printed), so every run can be reproduced."""
    gateway_back: str | None = None
    """``PORT=URL``: the target is a gateway whose upstream is PORT (the run listens there) and leads to URL, the
    real server; what reached the upstream is judged with what the suite sent (docs/gateways.md)."""

    def __post_init__(self) -> None:
        if bool(self.url) == bool(self.command):
            raise ConfigError("give exactly one target: --url for Streamable HTTP or --command for stdio")
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name in _CHECKED and value is not None and value != _DEFAULTS.get(item.name):
                check_setting(item.name, value, _flag(item.name))
        if self.serve and not self.url:
            raise ConfigError("--serve starts an HTTP server: give --url with the endpoint it will listen on")
        self.oauth()  # its settings are checked before the run, like the rest

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def target(self) -> str:
        return self.url or shlex.join(self.command)

    def credentials(self) -> Credentials:
        return Credentials(
            token=self.token,
            auth_header=self.auth_header,
            auth_scheme=self.auth_scheme,
            auth_mode=self.auth_mode,
            auth_query_param=self.auth_query_param,
            headers=self.headers,
        )

    def oauth(self) -> OAuthSettings:
        """How the run may sign in when no credential is given and the endpoint answers 401."""
        return OAuthSettings(
            client_id=self.client_id,
            client_secret=self.client_secret,
            scope=self.scope,
            register=not self.no_register,
            interactive=self.interactive,
            browser=not self.no_browser,
            redirect_host=self.redirect_host,
            redirect_port=self.redirect_port,
            auth_timeout_ms=self.auth_timeout,
            allow_insecure_http=self.allow_insecure_http,
        )

    def redactor(self) -> Redactor:
        """A redactor that knows every secret this configuration holds (credentials, the URL's, behaviour tokens,
        ``--secret`` values and the client secret)."""
        redactor = self.credentials().redactor(self.url)
        for secret in self.behaviour.secrets() if self.behaviour is not None else ():
            redactor.add_secret(secret)
        for secret in (*self.secrets, self.client_secret or "", *command_secrets((*self.command, *self.serve))):
            redactor.add_secret(secret)
        return redactor

    def recorded_options(self, redactor: Redactor) -> dict[str, Any]:
        """The settings of this run that differ from their defaults, as a recording's header names them: the
        credentials replaced whole, the header values and everything else scrubbed by ``redactor``, the config
        file's sections by name only."""
        shown: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            factory = item.default_factory
            default = item.default if item.default is not MISSING else factory() if factory is not MISSING else None
            if value is None or value == default:
                continue
            key = item.name.replace("_", "-")
            if item.name in ("token", "client_secret"):
                shown[key] = REDACTED
            elif item.name == "secrets":
                shown[key] = [REDACTED for _ in value]
            elif item.name in _SECTIONS:
                shown[key] = "(given in the config file)"
            elif item.name == "headers":
                shown[key] = [f"{name}: {redactor.header(name, text)}" for name, text in value]
            else:
                shown[key] = redactor.data(json.loads(json.dumps(value, default=str)), urls=True)
        return shown

    @classmethod
    def from_options(cls, options: Mapping[str, Any], file_values: Mapping[str, Any] | None = None) -> SuiteConfig:
        """Build from flag values (``None`` = not given) layered over a config file's values.

        Every value is checked against :data:`SETTINGS` here, naming the flag (a config file's
        values were checked by :func:`read_config_file`, naming the file and the key).
        """
        values: dict[str, Any] = {}
        for source in (file_values or {}, options):
            for key, value in source.items():
                if value is None or (key in _LISTS and value in ((), [], "")):
                    continue
                values[key] = check_setting(key, value, _flag(key)) if key in SETTINGS else value
        return cls(**values)


_FIELDS = {item.name for item in fields(SuiteConfig)}
_SECTIONS = {"behaviour", "stub", "rate_limit_probe"}
"""Fields a config file fills from its own sections, never from a key of the same name."""
_ALIASES = {"url": "url", "u": "url", "c": "command", "t": "token", "header": "headers", "H": "headers"}


_LISTS = ("headers", "command", "serve", "secrets", "generate_args", "explore_tool")
"""Settings whose empty value means "not given" (an environment twin set to nothing)."""


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _read_arguments(value: str) -> Any:
    text = value
    if value.startswith("@"):
        try:
            text = read_text(value[1:])
        except UnreadableFile as exc:
            raise BadValue(f"{value[1:]}: {exc}") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        where = value[1:] if value.startswith("@") else "the inline value"
        raise BadValue(f"{where} is not valid JSON ({exc})") from None


class _Arguments:
    """Arguments per tool or prompt: a mapping, inline JSON or ``@path`` to a JSON file."""

    def __init__(self, *, strings: bool) -> None:
        self.strings = strings
        what = "string arguments" if strings else "argument objects"
        self.wanted = f"a JSON object mapping names to {what}, inline or as @FILE"

    def __call__(self, value: Any) -> dict[str, Any]:
        parsed = _read_arguments(value) if isinstance(value, str) else value
        if not isinstance(parsed, Mapping):
            raise BadValue(f"expected {self.wanted} (got {shown(value)})")
        for name, arguments in parsed.items():
            if not isinstance(name, str) or not isinstance(arguments, Mapping):
                raise BadValue(f"the entry for {name!r} must be a JSON object of arguments")
            if self.strings:
                bad = [key for key, item in arguments.items() if not isinstance(item, str)]
                if bad:
                    raise BadValue(f"prompt arguments are strings; {name}.{bad[0]} is not")
        return JSON_OBJECT(parsed)


class _Interactive:
    """``true``/``false``, or ``always``, ``never`` and ``auto`` (the environment twin's words)."""

    wanted = "always, never, auto, true or false"

    def __call__(self, value: Any) -> bool | None:
        if isinstance(value, bool) or value is None:
            return value
        choice = {"always": True, "never": False, "auto": None}.get(str(value).strip().lower(), "?")
        if not isinstance(value, str) or choice == "?":
            raise BadValue(f"expected {self.wanted} (got {shown(value)})")
        return choice  # type: ignore[return-value]


class _Scheme:
    """The token's prefix: a scheme name, or empty for a bare token."""

    wanted = "a scheme name such as Bearer, or empty for a bare token"

    def __call__(self, value: Any) -> str:
        if value == "":
            return ""
        try:
            return HEADER_NAME(value)
        except BadValue:
            raise BadValue(f"expected {self.wanted} (got {shown(value)})") from None


SETTINGS: dict[str, Kind] = {
    "url": URL,
    "command": COMMAND,
    "serve": COMMAND,
    "serve_timeout": SECONDS,
    "spec_version": REVISION,
    "modern_only": FLAG,
    "default_version": REVISION,
    "token": TOKEN,
    "auth_header": HEADER_NAME,
    "auth_scheme": _Scheme(),
    "auth_mode": Choice(AUTH_MODES),
    "auth_query_param": TEXT,
    "headers": HEADERS,
    "secrets": STRINGS,
    "client_id": TEXT,
    "client_secret": STRING,
    "scope": TEXT,
    "no_register": FLAG,
    "without_token": FLAG,
    "allow_insecure_http": FLAG,
    "interactive": _Interactive(),
    "no_browser": FLAG,
    "redirect_host": HOST,
    "redirect_port": port(1),
    "auth_timeout": Number(1, MAX_MS, whole=True, unit="milliseconds"),
    "tool_args": _Arguments(strings=False),
    "prompt_args": _Arguments(strings=True),
    "generate_args": NAMES,
    "generate_args_read_only": FLAG,
    "failing_tool": TEXT,
    "resource_sample": Number(0, 10_000, whole=True),
    "page_limit": Number(1, 10_000, whole=True),
    "rate_limit": Number(0.1, 100_000, unit="requests a minute"),
    "retry_budget_ms": Number(0, MAX_MS, whole=True, unit="milliseconds"),
    "timeout": SECONDS,
    "stream_budget_ms": Number(100, MAX_MS, whole=True, unit="milliseconds"),
    "only": TEXT,
    "verbose": FLAG,
    "record": TEXT,
    "explore": FLAG,
    "explore_budget": Number(1, 10_000, whole=True, unit="calls per tool"),
    "explore_time": Number(0, MAX_SECONDS, above=True, unit="seconds"),
    "explore_tool": NAMES,
    "seed": Number(0, 2**32 - 1, whole=True),
    "gateway_back": GATEWAY_BACK,
}
"""The typed schema of every setting a flag, its environment twin or a config key can give: one kind
per setting (:mod:`mcp_assay.userinput.values`), used by the config file, :meth:`SuiteConfig.from_options`, the
dataclass itself and the ``run`` flags (:mod:`mcp_assay.cli.params`)."""

_DEFAULTS = {item.name: item.default for item in fields(SuiteConfig)}
_CHECKED = set(SETTINGS) - {"token"}
"""Settings the dataclass checks itself; a token can come from a sign-in (the server's answer), so it is
checked where a user gives it instead."""


def check_setting(name: str, value: Any, where: str) -> Any:
    """``value`` as setting ``name`` holds it, or a :class:`ConfigError` naming ``where`` and what was wanted."""
    try:
        return SETTINGS[name](value)
    except BadValue as exc:
        raise ConfigError(f"{where}: {exc}") from None


def load_arguments(flag: str, value: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Inline JSON, ``@path`` to a JSON file, or an already-parsed mapping (from a config file)."""
    if value is None or value == "":
        return {}
    return check_setting("tool_args", value, flag)  # type: ignore[no-any-return]


def read_config_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML config file into ``SuiteConfig`` field names; unknown keys are an error."""
    data = read_yaml(path, "--config")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"--config {path}: expected a mapping of option names to values")
    values: dict[str, Any] = {}
    unknown = []
    behaviour = parse_behaviour({str(key): value for key, value in data.items()}, str(path))
    if behaviour is not None:
        values["behaviour"] = behaviour
    stub = parse_stub(data.get("stub"), str(path), Path(path).expanduser().parent)
    if stub is not None:
        values["stub"] = stub
    burst = parse_rate_limit_probe(data.get("rate_limit_probe"), str(path))
    if burst is not None:
        values["rate_limit_probe"] = burst
    for raw_key, value in data.items():
        key = str(raw_key)
        if key in BEHAVIOUR_KEYS or key in ("stub", "rate_limit_probe"):
            continue
        name = _ALIASES.get(key, key.replace("-", "_"))
        if name not in _FIELDS or name in _SECTIONS:
            unknown.append(key)
            continue
        if name in ("token", "client_secret") and value is not None:
            value = config_secret(value, str(path), key)  # ${ENV} only: a config file is not a secret store
        if name == "secrets" and isinstance(value, str | list):
            items = [value] if isinstance(value, str) else value
            value = [config_secret(item, str(path), f"{key}[{index}]") for index, item in enumerate(items)]
        if value is not None:
            values[name] = check_setting(name, value, f"--config {path}: {key}")
    if unknown:
        sections = (*BEHAVIOUR_KEYS, "stub", "rate_limit_probe")
        known = ", ".join(sorted([*(name.replace("_", "-") for name in _FIELDS - _SECTIONS), *sections]))
        raise ConfigError(f"--config {path}: unknown keys {', '.join(sorted(unknown))} (known: {known})")
    return values


PROBE_URL = "http://127.0.0.1/mcp"
"""The stand-in endpoint a probe config is checked against: the proxy fills in the real one per session."""


def read_probe_config(path: str | Path, flag: str = "--probe-config") -> dict[str, Any]:
    """A ``run`` config file for the proxy's server probes, checked whole now (its settings and how they
    combine), not at the first client request; ``url`` and ``command`` are the proxy's to give. A mistake
    names ``flag`` (the option that named the file) instead of ``--config``."""
    try:
        values = {key: value for key, value in read_config_file(path).items() if key not in ("url", "command", "serve")}
        SuiteConfig.from_options({"url": PROBE_URL}, values)
    except ConfigError as exc:
        raise ConfigError(f"{flag} {str(exc).removeprefix('--config ')}") from None
    return values


def with_overrides(config: SuiteConfig, **changes: Any) -> SuiteConfig:
    return replace(config, **changes)
