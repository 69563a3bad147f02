"""What a suite run is told: the target, the revision, credentials, arguments and limits.

Everything the ``run`` flags say can also live in a YAML file (``--config``); flags and their
``MCP_ASSAY_*`` twins win over the file, the file wins over defaults. Keys are the long flag names
(``tool-args`` or ``tool_args``); an unknown key, a value of the wrong type, or tool/prompt
arguments that are not JSON objects are reported before the run starts, never half-way through.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from mcp_assay.errors import ConfigError
from mcp_assay.redaction import Redactor
from mcp_assay.suite.behaviour.config import BEHAVIOUR_KEYS, BehaviourConfig, config_secret, parse_behaviour
from mcp_assay.suite.credentials import AUTH_MODES, Credentials, parse_header
from mcp_assay.suite.oauth.settings import DEFAULT_AUTH_TIMEOUT_MS, DEFAULT_REDIRECT_HOST, OAuthSettings
from mcp_assay.suite.stub.config import StubConfig, parse_stub
from mcp_assay.userfiles import read_yaml

__all__ = ["RateLimitProbe", "SuiteConfig", "load_arguments", "parse_rate_limit_probe", "read_config_file"]


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
    if not isinstance(arguments, Mapping):
        raise ConfigError(f"{prefix}.arguments: expected a mapping of the tool's arguments")
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
    auth_header: str = "authorization"
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
    generate_args_read_only: bool = False
    """Also every tool the server annotates ``readOnlyHint: true`` (the user trusts the annotation)."""
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

    def __post_init__(self) -> None:
        if bool(self.url) == bool(self.command):
            raise ConfigError("give exactly one target: --url for Streamable HTTP or --command for stdio")
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ConfigError(f"--url {self.url}: expected an http:// or https:// URL")
        if self.auth_mode not in AUTH_MODES:
            raise ConfigError(f"--auth-mode {self.auth_mode}: choose from {', '.join(AUTH_MODES)}")
        for name, value, low in (
            ("--resource-sample", self.resource_sample, 0),
            ("--page-limit", self.page_limit, 1),
            ("--retry-budget-ms", self.retry_budget_ms, 0),
            ("--stream-budget-ms", self.stream_budget_ms, 100),
        ):
            if value < low:
                raise ConfigError(f"{name} must be at least {low} (got {value})")
        if self.serve and not self.url:
            raise ConfigError("--serve starts an HTTP server: give --url with the endpoint it will listen on")
        if self.serve_timeout <= 0:
            raise ConfigError(f"--serve-timeout must be positive (got {self.serve_timeout})")
        if self.timeout <= 0:
            raise ConfigError(f"--timeout must be positive (got {self.timeout})")
        if self.rate_limit is not None and self.rate_limit <= 0:
            raise ConfigError(f"--rate-limit must be positive (got {self.rate_limit})")
        _check_arguments("--tool-args", self.tool_args, strings=False)
        _check_arguments("--prompt-args", self.prompt_args, strings=True)
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
        for secret in (*self.secrets, self.client_secret or ""):
            redactor.add_secret(secret)
        return redactor

    @classmethod
    def from_options(cls, options: Mapping[str, Any], file_values: Mapping[str, Any] | None = None) -> SuiteConfig:
        """Build from flag values (``None`` = not given) layered over a config file's values."""
        values: dict[str, Any] = {}
        for source in (file_values or {}, options):
            for key, value in source.items():
                if value is None or (
                    key in ("headers", "command", "serve", "secrets", "generate_args") and value in ((), [], "")
                ):
                    continue
                values[key] = value
        return cls(**_coerce(values))


_FIELDS = {item.name for item in fields(SuiteConfig)}
_SECTIONS = {"behaviour", "stub", "rate_limit_probe"}
"""Fields a config file fills from its own sections, never from a key of the same name."""
_ALIASES = {"url": "url", "u": "url", "c": "command", "t": "token", "header": "headers", "H": "headers"}


def _check_arguments(flag: str, value: Any, *, strings: bool) -> None:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{flag}: expected a JSON object mapping names to argument objects")
    for name, arguments in value.items():
        if not isinstance(name, str) or not isinstance(arguments, Mapping):
            raise ConfigError(f"{flag}: the entry for {name!r} must be a JSON object of arguments")
        if strings:
            bad = [key for key, item in arguments.items() if not isinstance(item, str)]
            if bad:
                raise ConfigError(f"{flag}: prompt arguments are strings; {name}.{bad[0]} is not")


def load_arguments(flag: str, value: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Inline JSON, ``@path`` to a JSON file, or an already-parsed mapping (from a config file)."""
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    text = value
    if value.startswith("@"):
        path = Path(value[1:]).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{flag} {value}: cannot read {path} ({exc.strerror or exc})") from exc
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        where = f"{value[1:]}" if value.startswith("@") else "the inline value"
        raise ConfigError(f"{flag}: {where} is not valid JSON ({exc})") from exc
    if not isinstance(parsed, dict):
        raise ConfigError(f"{flag}: expected a JSON object mapping names to argument objects")
    return parsed


def _argv(name: str, command: Any) -> tuple[str, ...]:
    """A command as one shell-quoted string or a list of strings, as an argument vector."""
    if isinstance(command, str):
        try:
            return tuple(shlex.split(command))
        except ValueError as exc:
            raise ConfigError(f"--{name} {command!r}: {exc}") from exc
    if isinstance(command, list | tuple) and all(isinstance(part, str) for part in command):
        return tuple(command)
    raise ConfigError(f"{name}: expected a string or a list of strings")


def _names(key: str, value: Any) -> tuple[str, ...]:
    """Tool names: a list, or one string of names separated by commas or spaces (the environment twin)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(item, str) for item in items):
        raise ConfigError(f"{key}: expected a list of tool names")
    return tuple(dict.fromkeys(name for item in items for name in re.split(r"[,\s]+", item) if name))


def _coerce(values: dict[str, Any]) -> dict[str, Any]:
    out = dict(values)
    for name in ("command", "serve"):
        if name in out:
            out[name] = _argv(name, out[name])
    if "headers" in out:
        headers = out["headers"]
        if isinstance(headers, str):
            headers = [headers]
        if isinstance(headers, Mapping):
            headers = [f"{name}: {value}" for name, value in headers.items()]
        if not isinstance(headers, list | tuple):
            raise ConfigError("headers: expected a list of 'name: value' strings or a mapping")
        out["headers"] = tuple(
            parse_header(item) if isinstance(item, str) else (str(item[0]), str(item[1])) for item in headers
        )
    for key in ("tool_args", "prompt_args"):
        if key in out:
            out[key] = load_arguments(f"--{key.replace('_', '-')}", out[key])
    if "generate_args" in out:
        out["generate_args"] = _names("generate-args", out["generate_args"])
    if "secrets" in out:
        secrets = [out["secrets"]] if isinstance(out["secrets"], str) else out["secrets"]
        if not isinstance(secrets, list | tuple) or not all(isinstance(item, str) for item in secrets):
            raise ConfigError("secrets: expected a list of values")
        out["secrets"] = tuple(item for item in secrets if item)
    if isinstance(out.get("interactive"), str):
        choice = {"always": True, "never": False, "auto": None}.get(out["interactive"].strip().lower(), "?")
        if choice == "?":
            raise ConfigError(f"interactive: expected always, never, auto, true or false (got {out['interactive']!r})")
        out["interactive"] = choice
    for key, kind in (
        ("resource_sample", int),
        ("page_limit", int),
        ("retry_budget_ms", int),
        ("stream_budget_ms", int),
        ("timeout", float),
        ("rate_limit", float),
        ("redirect_port", int),
        ("auth_timeout", int),
    ):
        if key in out:
            try:
                out[key] = kind(out[key])
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"{key.replace('_', '-')}: expected a number (got {out[key]!r})") from exc
    for key in ("verbose", "no_register", "no_browser", "interactive", "generate_args_read_only", "modern_only",
                "without_token", "allow_insecure_http"):  # fmt: skip
        if key in out and not isinstance(out[key], bool | None):
            raise ConfigError(f"{key.replace('_', '-')}: expected true or false")
    for key in ("url", "spec_version", "token", "auth_header", "auth_scheme", "auth_mode", "auth_query_param",
                "only", "record", "failing_tool", "default_version", "client_id", "client_secret", "scope",
                "redirect_host"):  # fmt: skip
        if key in out and not isinstance(out[key], str):
            raise ConfigError(f"{key.replace('_', '-')}: expected a string (got {out[key]!r})")
    return out


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
        values[name] = value
    if unknown:
        sections = (*BEHAVIOUR_KEYS, "stub", "rate_limit_probe")
        known = ", ".join(sorted([*(name.replace("_", "-") for name in _FIELDS - _SECTIONS), *sections]))
        raise ConfigError(f"--config {path}: unknown keys {', '.join(sorted(unknown))} (known: {known})")
    return values


def with_overrides(config: SuiteConfig, **changes: Any) -> SuiteConfig:
    return replace(config, **changes)
