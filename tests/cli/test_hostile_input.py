"""Every flag of every command, its environment twin and every config key, fed hostile values by hypothesis.

Tool-defined (issue 18): bad user input is one line naming where it was written (the flag, or the
environment variable it came from, or the config file and key), under the command's usage, with
exit 2, before any work. The walk below reads the options from the command line itself and derives
the hostile values from each option's declared type (a number's bounds, a URL, a header, a path
that must exist ...), so an option added later is covered, or the coverage test says it is not.
The work each command would do (the suite, the proxy, the tap's server, a download, a report) is
replaced by a sentinel that exits 99: reaching it means a hostile value was taken as good. No
network is touched. ``MCP_ASSAY_FUZZ_EXAMPLES`` and ``MCP_ASSAY_FUZZ_RANDOM=1`` search further.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import re
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_assay.cli import cli
from mcp_assay.cli.params import HEADER_LINES, Checked, ReportSpec, SpecPath, WritableFile
from mcp_assay.report import ALIASES, FORMATS
from mcp_assay.suite.config import SETTINGS
from mcp_assay.userinput.values import (
    COMMAND,
    GATEWAY_BACK,
    HEADER,
    HEADER_NAME,
    HOST,
    HOST_PORT,
    REVISION,
    TEXT,
    TOKEN,
    URL,
    Number,
)

EXAMPLES = int(os.environ.get("MCP_ASSAY_FUZZ_EXAMPLES", "5"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=os.environ.get("MCP_ASSAY_FUZZ_RANDOM") is None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
WORK = 99
"""The exit status of the sentinels: a command got past its checks with a hostile value."""
ENDPOINT = "http://127.0.0.1:9/mcp"
"""A closed port on loopback: no command here gets as far as connecting to it."""
ACCEPTS_ANY_TEXT = {
    ("mcp-assay run", "--secret"), ("mcp-assay proxy", "--secret"), ("mcp-assay tap", "--secret"),
    ("mcp-assay run", "--client-secret"),
}  # fmt: skip
"""Secrets are scrubbed and sent encoded, never parsed: any text is one."""
NO_VALUE = {"--help", "--version"}


# -- the walk --------------------------------------------------------------------------------------------
def commands(command: click.Command = cli, path: str = "mcp-assay") -> Iterator[tuple[str, click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from commands(sub, f"{path} {name}")


def parameters() -> list[tuple[str, click.Parameter]]:
    found = []
    for path, command in commands():
        for param in command.params:
            if isinstance(param, click.Option) and NO_VALUE & set(param.opts):
                continue
            if (path, _flag(param)) in ACCEPTS_ANY_TEXT or isinstance(param.type, click.types.UnprocessedParamType):
                continue
            found.append((path, param))
    return found


def _flag(param: click.Parameter) -> str:
    return max(param.opts, key=len) if isinstance(param, click.Option) else str(param.name).upper()


# -- hostile values, from each parameter's declared type ---------------------------------------------------
CONTROL = st.sampled_from([chr(code) for code in [*range(0x00, 0x09), *range(0x0A, 0x20), 0x7F]])
"""Control characters a header value may not hold (tab is allowed)."""
QUIET_CONTROL = st.sampled_from([chr(code) for code in [*range(0x01, 0x09), *range(0x0E, 0x1C), 0x7F]])
"""Control characters an environment variable can carry and that no splitter takes for white space."""
PLAIN = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=8)
ANY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


def _spoiled(env: bool) -> st.SearchStrategy[str]:
    """Text holding at least one control character."""
    control = QUIET_CONTROL if env else CONTROL
    return st.tuples(ANY_TEXT, control, ANY_TEXT).map("".join)


def _numbers_outside(kind: Number) -> st.SearchStrategy[str]:
    below: st.SearchStrategy[Any] = st.integers(max_value=math.ceil(kind.low) - 1)
    if kind.above:
        below = below | st.just(kind.low)
    above = st.integers(min_value=math.floor(kind.high) + 1)
    outside = st.floats().filter(lambda x: not kind.low <= x <= kind.high or (kind.above and x == kind.low))
    floats: st.SearchStrategy[Any] = st.floats(kind.low, kind.high) if kind.whole else st.nothing()
    words = st.sampled_from(["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e999", "abc", "0x10", "1,5", "٣", "7½"])
    return st.one_of(below.map(str), above.map(str), outside.map(str), floats.map(repr), words)


def _bad_urls(env: bool) -> st.SearchStrategy[str]:
    host = st.sampled_from(["127.0.0.1", "localhost", "[::1]", "example.com"])
    return st.one_of(
        st.builds(lambda h, p: f"http://{h}:{p}/mcp", host, st.integers().filter(lambda p: not 1 <= p <= 65535)),
        st.builds(lambda h, junk: f"http://{h}/{junk}", host, _spoiled(env) | st.just("a b")),
        st.builds(lambda s, h: f"{s}://{h}/mcp", st.sampled_from(["ftp", "file", "ws", "gopher", "javascript"]), host),
        st.sampled_from(
            [
                "http://",
                "https://",
                "http://[::1/mcp",
                "http://[::1]]/",
                "http:///mcp",
                "http://:80/",
                "https://xn--/",
                "//127.0.0.1/mcp",
                "127.0.0.1:8000",
                "http://h:0/",
                "http://h:abc/",
                "http://user@/",
                "mailto:x@y",
            ]
        ),  # fmt: skip
        ANY_TEXT.filter(lambda text: "://" not in text and text.strip() != ""),
    )


def _bad_headers(env: bool) -> st.SearchStrategy[str]:
    value_control = (QUIET_CONTROL if env else CONTROL).filter(lambda char: char not in "\t")
    name = st.sampled_from(["X-Tenant", "Accept", "x"])
    return st.one_of(
        st.builds(lambda n, a, c, b: f"{n}: {a}{c}{b}x", name, PLAIN, value_control, PLAIN),
        st.builds(lambda n, v: f"{n}: {v}", name, st.sampled_from(["é", "naïve", "☃", "a\u2028b"])),
        PLAIN.map(lambda text: text.replace(":", "")),
        st.builds(lambda bad, v: f"{bad}: {v}", st.sampled_from(["Bad Name", "a/b", "x(y)", "é", "@"]), PLAIN),
    )


def _commands_that_do_not_split(env: bool) -> st.SearchStrategy[str]:
    quoteless = ANY_TEXT.map(lambda text: text.replace('"', "").replace("'", "").replace("\\", ""))
    nul = st.just("a\x00b") if not env else st.nothing()
    return st.one_of(quoteless.map(lambda text: f'server "{text}'), st.sampled_from(["   ", "'", "a 'b"]), nul)


def _paths(tmp: Path, param: click.Parameter) -> st.SearchStrategy[str]:
    kind = param.type
    folder, file, missing = tmp / "a-folder", tmp / "a-file.txt", tmp / "missing" / "x.yaml"
    if isinstance(kind, WritableFile):
        return st.sampled_from([str(folder), str(missing), str(file / "under-a-file")])
    assert isinstance(kind, click.Path)
    choices = [str(missing), str(tmp / "nothing-here")] if kind.exists else []
    if not kind.dir_okay:
        choices.append(str(folder))
    if not kind.file_okay:
        choices.append(str(file))
    if param.name == "spec_dir":
        choices.append(str(tmp / "empty-folder"))  # a folder with no schema in it
    return st.sampled_from(choices)


def hostile(param: click.Parameter, tmp: Path, env: bool) -> st.SearchStrategy[str] | None:
    """Values ``param`` must refuse (``None``: no strategy, which the coverage test reports)."""
    kind = param.type
    if isinstance(param, click.Option) and (param.is_flag or isinstance(kind, click.types.BoolParamType)):
        words = ANY_TEXT.filter(
            lambda t: t.strip().lower() not in {"", "0", "1", "f", "t", "y", "n", "yes", "no", "on", "off", "true",
                                               "false", "always", "never", "auto"}
        )  # fmt: skip
        return words if env else None
    if isinstance(kind, Checked):
        checked = kind.kind
        if isinstance(checked, Number):
            return _numbers_outside(checked)
        if checked is URL:
            return _bad_urls(env)
        if checked is HEADER:
            return _bad_headers(env)
        if checked is COMMAND:
            return _commands_that_do_not_split(env)
        if checked in (TEXT, REVISION):
            return _spoiled(env)
        if checked is TOKEN:
            return st.one_of(_spoiled(env), st.sampled_from(["a b", "tök", "Bearer x"]))
        if checked is HEADER_NAME or type(checked).__name__ == "_Scheme":
            return st.one_of(_spoiled(env), st.sampled_from(["a b", "é", "x:y", "(x)"]))
        if checked is HOST:
            return st.one_of(_spoiled(env), st.sampled_from(["a b", "h/st", "user@host", "é.example", "[::1"]))
        if checked is GATEWAY_BACK:
            ports = st.integers().filter(lambda p: not 1 <= p <= 65535).map(lambda p: f"{p}=http://127.0.0.1:9/mcp")
            return st.one_of(
                ports, _bad_urls(env).map(lambda url: f"8081={url}"), st.sampled_from(["8081", "=", "x=y"])
            )
        if checked is HOST_PORT:
            ports = st.integers().filter(lambda p: not 1 <= p <= 65535).map(lambda p: f"127.0.0.1:{p}")
            return st.one_of(ports, st.sampled_from(["nocolon", "127.0.0.1:", ":9411", "a b:80", "h:٣"]))
        if type(checked).__name__ == "_Arguments":
            files = [f"@{tmp / 'missing.json'}", f"@{tmp / 'a-folder'}", f"@{tmp / 'binary.bin'}"]
            bad_json = ["5", "[1]", '"x"', "{oops", '{"t": 5}', '{"t": {"x": NaN}}', '{"t": {"x": Infinity}}',
                        "[" * 5000, "null", "@"]  # fmt: skip
            if param.name == "prompt_args":
                bad_json.append('{"p": {"a": 1}}')  # prompt arguments are strings
            return st.sampled_from(files + bad_json)
    if isinstance(kind, click.Choice):
        choices = {str(choice) for choice in kind.choices}
        return ANY_TEXT.filter(lambda text: text not in choices and text.strip() != "")
    if isinstance(kind, click.Path):
        return _paths(tmp, param)
    if isinstance(kind, ReportSpec):
        known = {*FORMATS, *ALIASES}
        return st.one_of(
            PLAIN.filter(lambda name: name.lower() not in known),
            # a missing folder is created when the report is written; a file in the way is refused
            st.sampled_from(
                [
                    f"json:{tmp / 'a-file.txt' / 'r.json'}",
                    f"html:{tmp / 'binary.bin'}/",
                    f"sarif:{tmp / 'a-file.txt' / 'deeper'}/",
                    "json:/proc/nope/x.json",  # issue 28: a folder that cannot be created, found before any work
                    "html:/proc/nope/",
                ]
            ),  # fmt: skip
        )
    if isinstance(kind, SpecPath):
        file = tmp / "a-file.txt"
        return st.sampled_from(["=", "2025-11-25=", f"bogus={file}", str(file), f"2025-11-25={tmp / 'missing.json'}"])
    if type(kind).__name__ == "Families":
        return PLAIN.filter(lambda name: name.lower() not in {"version", "session", "hold", "headers", "cut", "all"})
    if type(kind).__name__ == "Mirror":
        return st.sampled_from(["{", "{nope}", "ftp://x/{path}", "x{path}", "http://h/{0}", "{commit}"])
    if isinstance(param, click.Option) and param.name == "mitm_settings":
        return st.one_of(PLAIN.map(lambda text: text.replace("=", "")), PLAIN.map(lambda text: f"={text}"))
    if isinstance(param, click.Option) and param.name == "show":
        listings = {"failed", "not-verified", "should", "notes", "known", "passed", "all"}
        return PLAIN.filter(lambda text: text.strip() != "" and not set(re.split(r"[,\s]+", text.lower())) <= listings)
    if isinstance(param, click.Option) and param.name == "sdk":  # NAME@VERSION of an SDK whose findings ship
        unknown = st.sampled_from(["", ",", "nosuchsdk@1.0", "mcp@0.0.0", "none,mcp@2.3.0"])
        malformed = st.one_of(
            PLAIN.filter(lambda text: text.lower() != "none"), PLAIN.map(lambda text: f"{text}@"),
            PLAIN.map(lambda text: f"@{text}"), unknown,
        )  # fmt: skip
        return st.one_of(malformed, _spoiled(env))
    if isinstance(param, click.Option) and param.name in ("generate_args", "explore_tool"):
        return _spoiled(env=True)  # white space (a newline, a tab) separates names, as commas do
    return None


# -- running one command ----------------------------------------------------------------------------------
def _work(*args: Any, **kwargs: Any) -> Any:
    raise SystemExit(WORK)


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Every command's work replaced by the sentinel; a folder of the files the hostile values point at."""
    import mcp_assay.addon.serve
    import mcp_assay.addon.worker
    import mcp_assay.cli.demo
    import mcp_assay.cli.replay
    import mcp_assay.cli.report
    import mcp_assay.cli.spec
    import mcp_assay.cli.stub
    import mcp_assay.cli.validate
    import mcp_assay.suite.runner

    for module, name in (
        (mcp_assay.suite.runner, "run"),
        (mcp_assay.addon.serve, "serve"),
        (mcp_assay.addon.worker, "RemoteSession"),
        (mcp_assay.cli.demo, "_run"),
        (mcp_assay.cli.validate, "_judge_captures"),
        (mcp_assay.cli.validate, "_judge_suite_recordings"),
        (mcp_assay.cli.report, "read_report"),
        (mcp_assay.cli.replay, "_report"),
        (mcp_assay.cli.spec, "pull_schemas"),
        (mcp_assay.cli.stub, "StubServer"),
    ):
        monkeypatch.setattr(module, name, _work)
    monkeypatch.setattr(mcp_assay.cli.stub.SigningKey, "generate", staticmethod(_work))
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "empty-folder").mkdir()
    (tmp_path / "a-file.txt").write_text("not a schema\n", encoding="utf-8")
    (tmp_path / "binary.bin").write_bytes(bytes(range(256)))
    (tmp_path / "recording.jsonl").write_text("{}\n", encoding="utf-8")
    return tmp_path


def _baseline(path: str, dest: str | None, tmp: Path) -> tuple[list[str], list[str]]:
    """What a command needs besides the value under test: options before it, arguments after it."""
    if path == "mcp-assay run":
        return ([] if dest in ("url", "command") else ["-u", ENDPOINT]), []
    if path == "mcp-assay proxy":
        return ([] if dest == "upstream" else ["--upstream", ENDPOINT]) + (
            [] if dest == "listen_port" else ["--listen-port", "0"]
        ), []
    if path == "mcp-assay tap":
        return [], ["--", "true"]
    if path == "mcp-assay validate":
        return [], ([] if dest == "recordings" else [str(tmp / "recording.jsonl")])
    if path == "mcp-assay report":
        return [], ([] if dest == "files" else [str(tmp / "recording.jsonl")])
    if path == "mcp-assay replay":
        return [], [str(tmp / "recording.jsonl"), "abc1234"]
    if path == "mcp-assay stub init":
        return ([] if dest == "key_file" else ["--key-file", str(tmp / "key.pem")]), []
    if path == "mcp-assay spec pull":
        return ([] if dest == "cache_dir" else ["--cache-dir", str(tmp / "cache")]), []
    return [], []


def invoke(path: str, param: click.Parameter, value: str, *, env: bool, tmp: Path, spec_path: Path) -> Result:
    words = path.split()[1:]
    before, after = _baseline(path, param.name, tmp)
    environ = {"MCP_ASSAY_SPEC_DIR": str(spec_path)}
    given: list[str] = []
    if env:
        assert isinstance(param.envvar, str)
        environ[param.envvar] = value
    elif isinstance(param, click.Argument) and path == "mcp-assay replay":
        after = [value, after[1]] if param.name == "report" else [after[0], value]
    elif isinstance(param, click.Argument):
        after = [value]
    else:
        given = [_flag(param), value]
    if not words:  # the group's own option
        return run_cli([*given, "checks"], spec_path, environ)
    return run_cli([*words, *before, *given, *after], spec_path, environ)


def run_cli(args: list[str], spec_path: Path, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(
        cli, args, prog_name="mcp-assay", env={"MCP_ASSAY_SPEC_DIR": str(spec_path), **(env or {})}
    )


def assert_one_line_usage_error(result: Result, source: str) -> None:
    """Exit 2; stderr is the usage, the 'Try' line and ONE error line naming ``source``; no traceback."""
    output = result.output
    assert result.exit_code != WORK, f"a hostile value was taken as good (the command reached its work):\n{output}"
    assert isinstance(result.exception, SystemExit) or result.exception is None, repr(result.exception)
    assert "Traceback" not in output and "internal error" not in output, output
    assert result.exit_code == 2, output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error: ")]
    framing = [line for line in lines if line.startswith(("Usage: ", "Try '"))]
    assert len(errors) == 1 and len(errors) + len(framing) == len(lines), output
    assert source in errors[0], (source, errors[0])
    assert framing and framing[0].startswith("Usage: mcp-assay"), output


# -- the properties ---------------------------------------------------------------------------------------
PARAMETERS = parameters()


def _case_id(case: tuple[str, click.Parameter]) -> str:
    return f"{case[0].removeprefix('mcp-assay').strip() or 'mcp-assay'} {_flag(case[1])}"


def test_every_option_and_argument_has_hostile_values_or_a_reason(tmp_path: Path) -> None:
    """Tool-defined: an option added later is fuzzed here too, or this test names it."""
    missing = [
        _case_id(case)
        for case in PARAMETERS
        if hostile(case[1], tmp_path, env=False) is None and hostile(case[1], tmp_path, env=True) is None
    ]
    assert missing == []
    assert len(PARAMETERS) > 80 and {path for path, _ in PARAMETERS} >= {
        "mcp-assay run", "mcp-assay proxy", "mcp-assay tap", "mcp-assay validate", "mcp-assay report",
        "mcp-assay spec pull", "mcp-assay stub serve", "mcp-assay demo", "mcp-assay",
    }  # fmt: skip


@pytest.mark.parametrize("case", PARAMETERS, ids=[_case_id(case) for case in PARAMETERS])
@FUZZ
@given(data=st.data())
def test_a_hostile_value_for_any_option_is_one_line_and_exit_2(
    case: tuple[str, click.Parameter], data: st.DataObject, no_work: Path, spec_path: Path
) -> None:
    """Tool-defined: from the flag or from its environment twin, named as the user wrote it."""
    path, param = case
    choices = [env for env in (False, True) if hostile(param, no_work, env) is not None]
    if isinstance(param, click.Argument) or not isinstance(param.envvar, str):
        choices = [env for env in choices if not env]
    env = data.draw(st.sampled_from(choices), label="from the environment")
    strategy = hostile(param, no_work, env)
    assert strategy is not None
    if env:  # a twin is never empty (that is unset) nor holds NUL; a list twin splits on white space, not headers'
        splits = param.multiple and param.type is not HEADER_LINES
        strategy = strategy.filter(
            lambda text: bool(text.strip()) and "\x00" not in text and not (splits and any(c.isspace() for c in text))
        )
    value = data.draw(strategy, label="value")
    result = invoke(path, param, value, env=env, tmp=no_work, spec_path=spec_path)
    source = param.envvar if env else _flag(param)
    assert_one_line_usage_error(result, str(source))


# -- the config schema ------------------------------------------------------------------------------------
ACCEPTED: dict[str, tuple[type, ...]] = {
    "url": (str,), "command": (str, list), "serve": (str, list), "serve_timeout": (int, float),
    "spec_version": (str, _dt.date), "default_version": (str, _dt.date), "modern_only": (bool,), "token": (str,),
    "auth_header": (str,), "auth_scheme": (str,), "auth_mode": (str,), "auth_query_param": (str,),
    "headers": (str, list, dict), "secrets": (str, list), "client_id": (str,), "client_secret": (str,),
    "scope": (str,), "no_register": (bool,), "without_token": (bool,), "allow_insecure_http": (bool,),
    "interactive": (bool, str), "no_browser": (bool,),
    "redirect_host": (str,), "redirect_port": (int,), "auth_timeout": (int,), "tool_args": (str, dict),
    "prompt_args": (str, dict), "generate_args": (str, list), "generate_args_read_only": (bool,),
    "failing_tool": (str,), "resource_sample": (int,), "page_limit": (int,), "rate_limit": (int, float),
    "retry_budget_ms": (int,), "timeout": (int, float), "stream_budget_ms": (int,), "only": (str,),
    "verbose": (bool,), "record": (str,), "explore": (bool,), "explore_budget": (int,),
    "explore_time": (int, float), "explore_tool": (str, list), "seed": (int,), "gateway_back": (str,),
}  # fmt: skip
"""The YAML types each key takes, written out here rather than read from the schema under test."""
YAML_VALUES = st.one_of(
    st.integers(), st.floats(), st.booleans(), st.dates(), st.lists(st.integers(), max_size=3),
    st.dictionaries(PLAIN, st.integers(), min_size=1, max_size=2), ANY_TEXT,
)  # fmt: skip


def test_the_schema_and_its_oracle_name_the_same_keys() -> None:
    """Tool-defined: a setting added to the schema is fuzzed here too."""
    assert set(ACCEPTED) == set(SETTINGS)


def _wrong_type(key: str) -> st.SearchStrategy[Any]:
    def wrong(value: Any) -> bool:
        if isinstance(value, bool):
            return bool not in ACCEPTED[key]
        if isinstance(value, int) and float in ACCEPTED[key]:
            return False
        return not isinstance(value, ACCEPTED[key])

    kind = SETTINGS[key]
    if not isinstance(kind, Number):
        return YAML_VALUES.filter(wrong)

    def outside(x: float) -> bool:
        return not kind.low <= x <= kind.high or (kind.above and x == kind.low)

    def not_a_number_in_range(value: Any) -> bool:
        """A number key takes what its flag takes: text that reads as a number in range is one."""
        if not isinstance(value, str):
            return wrong(value)
        try:
            number = int(value) if kind.whole else float(value)
        except ValueError:
            return True
        return not value.isascii() or not math.isfinite(number) or outside(number)

    return st.one_of(
        YAML_VALUES.filter(not_a_number_in_range), st.floats().filter(outside), st.integers().filter(outside)
    )


@pytest.mark.parametrize("key", sorted(SETTINGS))
@FUZZ
@given(data=st.data())
def test_a_config_key_of_the_wrong_type_names_the_key_and_exits_2(
    key: str, data: st.DataObject, no_work: Path, spec_path: Path
) -> None:
    """Tool-defined: `tool-args: 5` says which key and what it takes, before any work."""
    written = key.replace("_", "-")
    value = data.draw(_wrong_type(key), label=written)
    config = no_work / "config.yaml"
    config.write_text(yaml.safe_dump({written: value}), encoding="utf-8")
    target = [] if key in ("url", "command") else ["-u", ENDPOINT]
    result = run_cli(["run", *target, "--config", str(config)], spec_path)
    assert_one_line_usage_error(result, f"--config {config}: {written}")


@FUZZ
@given(
    content=st.one_of(
        st.binary(min_size=1, max_size=64).filter(lambda data: not _utf8(data)),
        st.sampled_from([b"a: [\n", b"{", b"key: 'open", b"- a\nb: c\n", b"a: b\n  c: d\n", b"\t- x", b"? [a]: b"]),
        st.sampled_from([b"5\n", b"- a\n- b\n", b"just text\n", b'"quoted"\n', b"[1, 2]"]),
        PLAIN.map(lambda key: f"{key}zz: 1\n".encode()),
    )
)
def test_a_config_file_that_is_not_a_yaml_mapping_of_known_keys_is_one_line_and_exit_2(
    content: bytes, no_work: Path, spec_path: Path
) -> None:
    """Tool-defined: binary, not YAML, not a mapping, or an unknown key: one line, before any work."""
    config = no_work / "config.yaml"
    config.write_bytes(content)
    for command in (["run", "-u", ENDPOINT, "--config"], ["stub", "serve", "--config"]):
        result = run_cli([*command, str(config)], spec_path)
        assert_one_line_usage_error(result, f"--config {config}")


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# -- the behaviour sections of the config -----------------------------------------------------------------
def _wrong_whole(low: int, high: int) -> st.SearchStrategy[Any]:
    outside = st.integers().filter(lambda value: not low <= value <= high)
    return st.one_of(outside, st.floats(), ANY_TEXT, st.booleans(), st.lists(st.integers(), max_size=2))


_NOT_JSON = st.sampled_from([math.nan, math.inf, -math.inf, _dt.date(2024, 1, 1)])
BEHAVIOUR_LEAVES: dict[str, st.SearchStrategy[Any]] = {
    "principals.reader.token": st.one_of(
        st.integers(), st.lists(PLAIN), st.just("inline-token"), st.just("${UNSET_9}")
    ),
    "principals.writer.env.ROLE": st.one_of(st.integers(), st.just("a\x00b"), st.lists(PLAIN, min_size=1)),
    "witnesses.count.mcp.tool": st.one_of(st.integers(), st.just(""), st.lists(PLAIN)),
    "witnesses.count.timeout_ms": _wrong_whole(100, 120_000),
    "witnesses.count.stability_ms": _wrong_whole(0, 10_000),
    "witnesses.route.http.url": st.sampled_from(["http://[::1/x", "ftp://h/x", "http://", "http://h:99999/", 5]),
    "witnesses.route.http.method": st.one_of(_spoiled(env=False), st.sampled_from(["G T", "", 5])),
    "witnesses.route.http.headers.X-Tenant": st.one_of(_spoiled(env=False), st.sampled_from(["é", 5])),
    "witnesses.file.command": st.sampled_from([["cat", "a\x00"], [], "cat", [1], [""]]),
    "write_tools.create_draft.arguments": st.one_of(
        st.builds(lambda value: {"title": value}, _NOT_JSON), st.sampled_from([[1], "s", 5])
    ),
    "write_tools.create_draft.settle_ms": _wrong_whole(0, 60_000),
    "write_tools.create_draft.refusals.extra_arguments": st.builds(lambda value: {"publish": value}, _NOT_JSON),
    "write_tools.create_draft.cancellation.timeout_ms": _wrong_whole(1, 60_000),
    "write_tools.create_draft.cancellation.repeat": _wrong_whole(1, 10),
    "write_tools.create_draft.cancellation.eras": st.sampled_from([["2024-11-05"], "2025-11-25", [5]]),
    "write_tools.create_draft.cancellation.delay_argument": st.builds(lambda value: {"delay_ms": value}, _NOT_JSON),
    "read_tools.list_drafts.settle_ms": _wrong_whole(0, 60_000),
    "handles.draft.create.arguments": st.builds(lambda value: {"title": value}, _NOT_JSON),
    "expect.tools_by_principal.reader": st.one_of(ANY_TEXT, st.lists(st.integers(), min_size=1)),
}
"""Leaves of a complete behaviour config (tests/behaviour/test_config.py) and values each must refuse."""


@pytest.mark.parametrize("leaf", sorted(BEHAVIOUR_LEAVES))
@FUZZ
@given(data=st.data())
def test_a_hostile_behaviour_value_names_its_path_in_one_line(
    leaf: str, data: st.DataObject, no_work: Path, spec_path: Path
) -> None:
    """Tool-defined: anything a case would send or run is checked when the file is read, naming the leaf."""
    from tests.behaviour.test_config import ENV, good

    document: dict[str, Any] = {"url": ENDPOINT, **good()}
    *parents, last = leaf.split(".")
    node = document
    for part in parents:
        node = node[part]
    node[last] = data.draw(BEHAVIOUR_LEAVES[leaf], label=leaf)
    config = no_work / "config.yaml"
    config.write_text(yaml.safe_dump(document), encoding="utf-8")
    result = run_cli(["run", "--config", str(config)], spec_path, ENV)
    assert_one_line_usage_error(result, f"--config {config}: {leaf.rpartition('.')[0]}")


# -- whole command lines ----------------------------------------------------------------------------------
COMMANDS = [(path, command) for path, command in commands() if not isinstance(command, click.Group)]


def _misspelled(flag: str) -> st.SearchStrategy[str]:
    """A flag as a hurried hand types it: a letter swapped, dropped or doubled, a dash lost."""
    body = flag.lstrip("-")
    if len(body) < 3:
        return st.just(flag + "x")
    swaps = [body[:i] + body[i + 1] + body[i] + body[i + 2 :] for i in range(len(body) - 1)]
    drops = [body[:i] + body[i + 1 :] for i in range(len(body))]
    return st.sampled_from([*swaps, *drops, body + body[-1]]).map(lambda text: "--" + text).filter(
        lambda text: text != flag
    ) | st.just(flag[1:])


def _words(command: click.Command, tmp: Path) -> st.SearchStrategy[list[str]]:
    """Any sequence of what a user may type after the command: its flags (right, misspelled, unknown), their values
    good and hostile, `--`, stray arguments and text."""
    flags = [flag for param in command.params if isinstance(param, click.Option) for flag in param.opts]
    flags = [flag for flag in flags if flag not in NO_VALUE]
    values = [hostile(param, tmp, env=False) for param in command.params]
    pieces: list[st.SearchStrategy[str]] = [
        st.sampled_from(["--", "-", "-x", "--nope", "--=", str(tmp / "recording.jsonl"), ENDPOINT, "json:-"]),
        ANY_TEXT,
    ]
    if flags:
        pieces += [st.sampled_from(flags), st.sampled_from(flags).flatmap(_misspelled)]
    pieces += [value for value in values if value is not None]
    return st.lists(st.one_of(pieces).filter(lambda word: "\x00" not in word), max_size=6)  # argv cannot hold NUL


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[path for path, _ in COMMANDS])
@FUZZ
@given(data=st.data())
def test_any_command_line_ends_in_a_usage_error_an_answer_or_the_work_never_a_traceback(
    path: str, command: click.Command, data: st.DataObject, no_work: Path, spec_path: Path
) -> None:
    """Tool-defined (issue 28): whatever words follow a command (misspelled and unknown options, values of the wrong
    kind, stray arguments), the outcome is a usage error of one line (exit 2), an answer (0, 1, 3), or the work the
    sentinel stands for; never a traceback and never 'internal error'."""
    words = data.draw(_words(command, no_work), label="words")
    result = run_cli([*path.split()[1:], *words], spec_path)
    output = result.output
    assert isinstance(result.exception, SystemExit) or result.exception is None, repr(result.exception)
    assert "Traceback" not in output and "internal error" not in output, output
    assert result.exit_code in (0, 1, 2, 3, WORK), output
    if result.exit_code == 2:
        errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
        assert len(errors) == 1 and result.stderr.startswith("Usage: mcp-assay"), output


def test_a_misspelled_tap_option_is_a_usage_error_not_a_missing_command(no_work: Path, spec_path: Path) -> None:
    """Issue 28's evidence: `tap --recrod x.jsonl -- server` ran `--recrod` as the server (exit 3)."""
    result = run_cli(["tap", "--recrod", "x.jsonl", "--", "python", "server.py"], spec_path)
    assert_one_line_usage_error(result, "--recrod")
    assert "did you mean --record?" in result.stderr
