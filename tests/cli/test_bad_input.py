"""Bad user input as a user meets it: one line naming the flag, variable or config key, exit 2, no work done.

Tool-defined (issue 18). Each case the issue reports, plus the edges of the same kind found on the
way; ``test_hostile_input.py`` searches the same ground with hypothesis. A value that is fine but
whose target is not there (a closed port) is exit 3 with one line, and the proxy with a mistake in
its probe config never starts listening.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mcp_assay.cli import cli
from tests.cli.test_hostile_input import assert_one_line_usage_error


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(spec_path: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    environ = {"MCP_ASSAY_SPEC_DIR": str(spec_path), **(env or {})}
    return CliRunner().invoke(cli, list(args), prog_name="mcp-assay", env=environ)


def error_line(result: Result) -> str:
    return next(line for line in result.stderr.splitlines() if line.startswith("Error: "))


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://127.0.0.1:99999/mcp", "not a valid URL: Port out of range 0-65535"),
        ("http://[::1/mcp", "not a valid URL: Invalid IPv6 URL"),
        ("http://", "the URL names no host"),
        ("http://h:0/mcp", "the port must be from 1 to 65535"),
        ("http://h:abc/mcp", "not a valid URL"),
        ("https://xn--/mcp", "not a valid URL"),
        ("http://a b/mcp", "a URL holds no spaces or control characters"),
        ("ftp://h/mcp", "expected an http:// or https:// URL"),
    ],
)
def test_a_url_that_cannot_be_used_is_one_line_naming_it(spec_path: Path, url: str, said: str) -> None:
    result = run(spec_path, "run", "-u", url)
    assert_one_line_usage_error(result, "--url")
    assert said in error_line(result) and repr(url) in error_line(result)
    assert result.stderr.startswith("Usage: mcp-assay run [OPTIONS]")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "1e999", "86401", "soon"])
def test_a_timeout_that_is_not_a_finite_positive_number_is_refused(spec_path: Path, value: str) -> None:
    result = run(spec_path, "run", "-u", "http://127.0.0.1:9/mcp", "--timeout", value)
    assert_one_line_usage_error(result, "--timeout")
    assert "expected a number of seconds, more than 0 and at most 86400" in error_line(result)


@pytest.mark.parametrize(
    ("flag", "value", "wanted"),
    [
        ("--serve-timeout", "nan", "a number of seconds, more than 0 and at most 86400"),
        ("--rate-limit", "inf", "a number of requests a minute from 0.1 to 100000"),
        ("--rate-limit", "0", "a number of requests a minute from 0.1 to 100000"),
        ("--retry-budget-ms", "-1", "a whole number of milliseconds from 0 to 86400000"),
        ("--stream-budget-ms", "99999999999999999999", "a whole number of milliseconds from 100 to 86400000"),
        ("--auth-timeout", "1.5", "a whole number of milliseconds from 1 to 86400000"),
        ("--page-limit", "0", "a whole number from 1 to 10000"),
        ("--resource-sample", "-3", "a whole number from 0 to 10000"),
        ("--redirect-port", "65536", "a port from 1 to 65535"),
    ],
)
def test_every_number_of_run_is_bounded_and_finite(spec_path: Path, flag: str, value: str, wanted: str) -> None:
    result = run(spec_path, "run", "-u", "http://127.0.0.1:9/mcp", flag, value)
    assert_one_line_usage_error(result, flag)
    assert f"expected {wanted} (got {value!r})" in error_line(result)


def test_a_bad_value_from_the_environment_names_the_variable_not_the_flag(spec_path: Path) -> None:
    result = run(spec_path, "run", "-u", "http://127.0.0.1:9/mcp", env={"MCP_ASSAY_TIMEOUT": "nan"})
    assert_one_line_usage_error(result, "MCP_ASSAY_TIMEOUT")
    assert "--timeout" not in error_line(result)
    flag = run(spec_path, "run", "-u", "http://127.0.0.1:9/mcp", "--timeout", "nan")
    assert "MCP_ASSAY_TIMEOUT" not in error_line(flag) and "--timeout" in error_line(flag)


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"MCP_ASSAY_SPEC_DIR": "/nonexistent/spec"}, "MCP_ASSAY_SPEC_DIR"),
        ({"MCP_ASSAY_URL": "http://[::1/mcp"}, "MCP_ASSAY_URL"),
        ({"MCP_ASSAY_LISTEN_PORT": "99999"}, "MCP_ASSAY_LISTEN_PORT"),
        ({"MCP_ASSAY_REPORT": "bogus"}, "MCP_ASSAY_REPORT"),
        ({"MCP_ASSAY_LOG_LEVEL": "loud"}, "MCP_ASSAY_LOG_LEVEL"),
    ],
)
def test_every_kind_of_bad_twin_names_its_variable(spec_path: Path, env: dict[str, str], named: str) -> None:
    command = ["proxy"] if "LISTEN_PORT" in named else ["run"] if "URL" in named else ["run", "-u", "http://h/mcp"]
    result = run(spec_path, *command, env=env)
    assert_one_line_usage_error(result, named)


def test_a_spec_dir_from_the_environment_that_holds_no_schema_names_the_variable(
    spec_path: Path, tmp_path: Path
) -> None:
    result = run(spec_path, "run", "-u", "http://127.0.0.1:9/mcp", env={"MCP_ASSAY_SPEC_DIR": str(tmp_path)})
    assert_one_line_usage_error(result, f"MCP_ASSAY_SPEC_DIR={tmp_path} holds no <revision>/schema.json")


def test_a_config_key_of_the_wrong_type_names_the_key_and_the_type_wanted(spec_path: Path, tmp_path: Path) -> None:
    config = tmp_path / "assay.yaml"
    config.write_text("tool-args: 5\n", encoding="utf-8")
    result = run(spec_path, "run", "-u", "http://127.0.0.1:9/mcp", "--config", str(config))
    assert_one_line_usage_error(result, f"--config {config}: tool-args: expected a JSON object mapping names")
    assert "(got 5)" in error_line(result)
    via_env = run(spec_path, "run", "-u", "http://127.0.0.1:9/mcp", env={"MCP_ASSAY_CONFIG": str(config)})
    assert_one_line_usage_error(via_env, f"MCP_ASSAY_CONFIG {config}: tool-args")


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("timeout: .nan", "timeout: expected a number of seconds"),
        ("page-limit: 2.5", "page-limit: expected a whole number from 1 to 10000 (got 2.5)"),
        ("verbose: 'yes'", "verbose: expected true or false"),
        ("url: 'http://[::1/mcp'", "url: not a valid URL: Invalid IPv6 URL"),
        ('headers: ["X: a\\r\\nInjected: b"]', "headers: expected a header"),
        ("tool-args: {echo: {when: 2024-01-01}}", "tool-args: expected plain JSON values"),
        ("command: 5", "command: expected a command"),
    ],
)
def test_config_values_are_held_to_the_flags_rules(spec_path: Path, tmp_path: Path, line: str, said: str) -> None:
    config = tmp_path / "assay.yaml"
    config.write_text(("" if line.startswith(("url", "command")) else "url: http://h/mcp\n") + line + "\n")
    result = run(spec_path, "run", "--config", str(config))
    assert_one_line_usage_error(result, f"--config {config}: {said}")


def test_a_default_version_written_as_a_yaml_date_is_the_revision_it_names(spec_path: Path, tmp_path: Path) -> None:
    """An unquoted 2025-11-25 is a date to YAML; the config takes it as the revision (and checks it)."""
    from mcp_assay.suite.config import SuiteConfig, read_config_file

    config = tmp_path / "assay.yaml"
    config.write_text("url: http://h/mcp\ndefault-version: 2025-11-25\nspec-version: 2024-11-05\n")
    values = read_config_file(config)
    assert SuiteConfig.from_options({}, values).default_version == "2025-11-25"
    result = run(spec_path, "run", "--config", str(config))
    assert_one_line_usage_error(result, "--spec-version: revision 2024-11-05 is not supported")


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (bytes(range(256)), "not a UTF-8 text file"),
        (b"a: [\n", "not valid YAML or JSON (expected the node content, but found '<stream end>' at line 2"),
        (b"- a\n- b\n", "expected a mapping of option names to values"),
    ],
)
def test_a_config_file_that_is_binary_or_not_yaml_is_one_line(
    spec_path: Path, tmp_path: Path, content: bytes, said: str
) -> None:
    config = tmp_path / "assay.yaml"
    config.write_bytes(content)
    result = run(spec_path, "run", "-u", "http://127.0.0.1:9/mcp", "--config", str(config))
    assert_one_line_usage_error(result, f"--config {config}: {said}")
    baseline = run(spec_path, "run", "-u", "http://127.0.0.1:9/mcp", "--baseline", str(config))
    assert_one_line_usage_error(baseline, f"--baseline {config}")


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["-H", "X: a\r\nInjected: b"], {}),
        (["-H", "X\r\nInjected: b"], {}),
        (["-H", "X: a\x00b"], {}),
        (["-H", "X: naïve"], {}),
        ([], {"MCP_ASSAY_HEADERS": "X: a\rInjected: b"}),
        (["-t", "tok\r\nInjected: b"], {}),
        (["--auth-scheme", "Bearer\nInjected:"], {}),
        (["--auth-header", "X\nY"], {}),
    ],
)
def test_cr_or_lf_in_a_header_is_a_usage_error(spec_path: Path, args: list[str], env: dict[str, str]) -> None:
    """Tool-defined: a header that would smuggle another header is refused, never sent."""
    result = run(spec_path, "run", "-u", "http://127.0.0.1:9/mcp", *args, env=env)
    named = "MCP_ASSAY_HEADERS" if env else {"-H": "--header", "-t": "--token"}.get(args[0], args[0])
    assert_one_line_usage_error(result, named)


def test_the_header_twin_takes_one_header_per_line_crlf_line_ends_included(spec_path: Path) -> None:
    from mcp_assay.cli.params import HEADER_LINES

    assert HEADER_LINES.split_envvar_value("X-A: 1\r\nX-B: 2\r\n") == ["X-A: 1", "X-B: 2"]


def test_a_fine_value_whose_target_is_not_there_is_exit_3_in_one_line(spec_path: Path) -> None:
    """The input is usable: the answer is 'could not judge', not a usage error."""
    result = run(spec_path, "run", "-u", f"http://127.0.0.1:{closed_port()}/mcp", "--timeout", "2")
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert "Usage:" not in result.output


def test_sarif_of_a_url_with_userinfo_is_written_without_it(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: the location is named after host and path; no user name or password anywhere in the log."""
    sarif = tmp_path / "report.sarif"
    url = f"http://alice-7f3:hunter2-9c1@127.0.0.1:{closed_port()}/mcp"
    result = run(spec_path, "run", "-u", url, "--timeout", "2", "--report", f"sarif:{sarif}")
    assert result.exit_code == 3, result.output
    text = sarif.read_text(encoding="utf-8")
    log = json.loads(text)
    assert log["runs"][0]["invocations"][0]["exitCode"] == 3
    assert "alice-7f3" not in text and "hunter2-9c1" not in text
    assert log["runs"][0]["properties"]["target"]["description"].startswith("http://127.0.0.1:")


def test_the_sarif_location_of_an_unparseable_or_userinfo_url_never_raises() -> None:
    from mcp_assay.report.about import Target
    from mcp_assay.report.sarif import artifact_uri

    assert artifact_uri(Target(description="http://user:[REDACTED]@127.0.0.1:9/mcp")) == "127.0.0.1_9/mcp"
    assert artifact_uri(Target(description="http://[::1/mcp")) == "mcp-server"
    assert artifact_uri(Target(description="http://h:99999/mcp")) == "mcp-server"


def test_a_probe_config_of_the_wrong_type_stops_the_proxy_before_it_listens(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: `timeout: abc` used to be accepted and fail at the first client request."""
    config = tmp_path / "probe.yaml"
    config.write_text("timeout: abc\n", encoding="utf-8")
    port = closed_port()
    done = subprocess.run(
        [sys.executable, "-m", "mcp_assay", "proxy", "--spec-dir", str(spec_path), "--upstream",
         "http://127.0.0.1:9/mcp", "--listen-port", str(port), "--probe-server", "--probe-config", str(config)],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert errors == [f"Error: --probe-config {config}: timeout: expected a number of seconds, more than 0 and at "
                      "most 86400 (got 'abc')"]  # fmt: skip
    assert "listening" not in done.stdout and "Traceback" not in done.stderr


def test_the_addon_refuses_a_probe_config_of_the_wrong_type_when_configured(tmp_path: Path) -> None:
    """Tool-defined: inside mitmdump too, the mistake is an option error at start-up."""
    from mitmproxy import exceptions
    from mitmproxy.test import taddons

    from mcp_assay.addon.server_probe import ServerProbe

    config = tmp_path / "probe.yaml"
    config.write_text("timeout: abc\npage-limit: 3\n", encoding="utf-8")
    probe = ServerProbe(spec=lambda: None, notify=lambda record: None)
    with taddons.context(probe) as context:
        with pytest.raises(exceptions.OptionsError, match=r"^mcp_assay_probe_config .*: timeout: expected a number of"):
            context.configure(probe, mcp_assay_probe_config=str(config))
        config.write_text("page-limit: 3\nserve: 'python x.py'\n", encoding="utf-8")
        context.configure(probe, mcp_assay_probe_config=str(config))
        assert probe.config_values == {"page_limit": 3}


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--mode", "regular", "--upstream", "http://127.0.0.1:9/mcp"],
            "--upstream http://127.0.0.1:9/mcp is for --mode",
        ),
        (["--upstream", "http://127.0.0.1:8080/mcp"], "is the proxy's own address (127.0.0.1:8080)"),
        (["--upstream", "http://localhost:8080/mcp"], "is the proxy's own address"),
        (["--upstream", "http://127.0.0.1:9/mcp", "--probe-config", "PROBE"], "--probe-config configures the server"),
        (["--upstream", "http://127.0.0.1:9/mcp", "--set", "nonsense"], "'nonsense' is not NAME=VALUE"),
        (["--upstream", "http://127.0.0.1:9/mcp", "--listen-host", "a b"], "expected a host name or an IP address"),
        (["--upstream", "http://127.0.0.1:9/mcp", "--finish-timeout", "1e9"], "a whole number of seconds from 0"),
        (["--upstream", "http://127.0.0.1:9/mcp", "--probe-rate", "0"], "requests a minute from 1 to 100000"),
    ],
)
def test_proxy_flags_that_contradict_or_cannot_work_are_refused_before_it_listens(
    spec_path: Path, tmp_path: Path, args: list[str], said: str
) -> None:
    probe = tmp_path / "probe.yaml"
    probe.write_text("page-limit: 3\n", encoding="utf-8")
    result = run(spec_path, "proxy", *[str(probe) if arg == "PROBE" else arg for arg in args])
    assert result.exit_code == 2, result.output
    assert said in error_line(result) and len([line for line in result.stderr.splitlines() if "Error" in line]) == 1


def test_two_outputs_to_one_file_are_refused(spec_path: Path, tmp_path: Path) -> None:
    same = tmp_path / "out.json"
    reports = run(spec_path, "run", "-u", "http://h/mcp", "--report", f"json:{same}", "--report", f"html:{same}")
    assert_one_line_usage_error(reports, f"--report html:{same} and --report json:{same} would both write to")
    record = run(spec_path, "run", "-u", "http://h/mcp", "--record", str(same), "--report", f"json:{same}")
    assert_one_line_usage_error(record, f"--report json:{same} and --record {same} would both write")
    stdout = run(spec_path, "run", "-u", "http://h/mcp", "--report", "terminal", "--report", "json:-")
    assert_one_line_usage_error(stdout, "would both write to standard output")


def test_two_schemas_for_one_revision_are_refused(spec_path: Path) -> None:
    one, two = spec_path / "2025-11-25" / "schema.json", spec_path / "2026-07-28" / "schema.json"
    result = run(spec_path, "run", "-u", "http://h/mcp", "--spec-path", f"2025-11-25={one}",
                 "--spec-path", f"2025-11-25={two}")  # fmt: skip
    assert_one_line_usage_error(result, "--spec-path: two schemas for 2025-11-25")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--spec-path", "="], "--spec-path"),
        (["--spec-path", "2025-11-25=BINARY"], "--spec-path"),
        (["--report", "json:BINARY/r.json"], "binary.bin is not a folder"),
        (["--record", "/proc/cannot-write.jsonl"], "--record"),
        (["--record", "/nonexistent-folder-x7/r.jsonl"], "folder /nonexistent-folder-x7 does not exist"),
        (["--tool-args", "@BINARY"], "not a UTF-8 text file"),
        (["--tool-args", "@/nonexistent.json"], "cannot read it"),
        (["--tool-args", '{"t": {"x": NaN}}'], "no NaN"),
        (["--tool-args", "[" * 5000], "not valid JSON"),
        (["--prompt-args", '{"p": {"n": 3}}'], "prompt arguments are strings"),
        (["--generate-args", "a\x01b"], "--generate-args: expected a list of tool names"),
        (["-c", 'server "unclosed'], "cannot split the command into words"),
        (["--serve", "  "], "the command names no program"),
    ],
)
def test_paths_files_and_structured_values_are_checked_first(
    spec_path: Path, tmp_path: Path, args: list[str], said: str
) -> None:
    binary = tmp_path / "binary.bin"
    binary.write_bytes(bytes(range(256)))
    target = [] if args[0] == "-c" else ["-u", "http://127.0.0.1:9/mcp"]
    given = [arg.replace("BINARY", str(binary)) for arg in args]
    result = run(spec_path, "run", *target, *given)
    assert result.exit_code == 2, result.output
    assert said in error_line(result) and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["spec", "pull", "--mirror", "{"], "not a URL template"),
        (["spec", "pull", "--mirror", "{nope}"], "KeyError: 'nope'"),
        (["spec", "pull", "--timeout", "nan"], "--timeout"),
        (["stub", "serve", "--key-file", "KEY", "--listen", "127.0.0.1:99999"], "--listen"),
        (["stub", "serve", "--key-file", "KEY", "--listen", "nocolon"], "expected HOST:PORT"),
        (["validate", "--only", "a\x01", "REC"], "--only"),
        (["tap", "--finish-timeout", "1e30", "--", "true"], "--finish-timeout"),
        (["tap", "--inject-hold-ms", "0", "--", "true"], "--inject-hold-ms"),
        (["report", "--write-baseline", "/nonexistent-folder-x7/b.yaml", "REC"], "--write-baseline"),
        (["demo", "--output-dir", "REC"], "--output-dir"),
    ],
)
def test_the_other_commands_check_their_values_the_same_way(
    spec_path: Path, tmp_path: Path, args: list[str], said: str
) -> None:
    recording = tmp_path / "r.jsonl"
    recording.write_text("{}\n")
    key = tmp_path / "key.pem"
    key.write_text("not a key\n")
    given = [str(recording) if arg == "REC" else str(key) if arg == "KEY" else arg for arg in args]
    result = run(spec_path, *given, env={"MCP_ASSAY_CACHE_DIR": str(tmp_path / "cache")})
    assert result.exit_code == 2, result.output
    assert said in error_line(result) and "Traceback" not in result.output
    assert result.stderr.startswith(
        f"Usage: mcp-assay {' '.join(args[:2] if args[0] in ('spec', 'stub') else args[:1])}"
    )


def test_a_mirror_template_from_the_environment_is_checked_before_any_download(spec_path: Path, tmp_path: Path) -> None:
    result = run(spec_path, "spec", "pull", "--cache-dir", str(tmp_path), env={"MCP_ASSAY_SPEC_MIRROR": "{"})
    assert_one_line_usage_error(result, "MCP_ASSAY_SPEC_MIRROR")
    assert list(tmp_path.iterdir()) == []


def test_a_probe_config_from_the_environment_names_the_variable(spec_path: Path, tmp_path: Path) -> None:
    config = tmp_path / "probe.yaml"
    config.write_text("page-limit: -1\n", encoding="utf-8")
    result = run(
        spec_path, "proxy", "--upstream", "http://127.0.0.1:9/mcp", "--probe-server",
        env={"MCP_ASSAY_PROBE_CONFIG": str(config)},
    )  # fmt: skip
    assert_one_line_usage_error(result, f"MCP_ASSAY_PROBE_CONFIG {config}: page-limit: expected a whole number")
