"""The `proxy`, `addon-path` and `tap` commands' own edges (no traffic needed)."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from click.testing import CliRunner

from mcp_assay.addon.inject import family_names
from mcp_assay.cli import cli
from tests.peers.process import PYTHON

ANSWER = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"up"}}'
"""A line a scripted server writes, so that there is a server to judge and the tap exits with its status."""


def test_addon_path_prints_the_script_mitmproxy_loads() -> None:
    """Tool-defined: `mitmdump -s "$(mcp-assay addon-path)"` works from any install."""
    result = CliRunner().invoke(cli, ["addon-path"])
    path = Path(result.output.strip())
    assert result.exit_code == 0 and path.is_file() and path.name == "__init__.py"
    assert "addons" in path.read_text()


def test_reverse_mode_needs_an_upstream(spec_path: Path) -> None:
    """Tool-defined: a usage error, before anything starts."""
    result = CliRunner().invoke(cli, ["proxy", "--spec-dir", str(spec_path)])
    assert result.exit_code == 2 and "--upstream is required" in result.output


def test_a_taken_port_is_one_line_naming_the_option_and_the_port(spec_path: Path) -> None:
    """Tool-defined (issue 18): a busy port is the user's input: one line naming --listen-port and the port (not
    mitmproxy's own hint, whose `--mode reverse:…@port` syntax the redactor took for a password), exit 2."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [
            PYTHON, "-m", "mcp_assay", "proxy", "--upstream", "http://127.0.0.1:9/mcp", "--listen-port", str(port),
            "--spec-dir", str(spec_path),
        ]  # fmt: skip
        result = subprocess.run(command, capture_output=True, timeout=60, check=False)
    assert result.returncode == 2
    assert result.stderr.decode() == (
        f"mcp-assay proxy: --listen-port {port}: 127.0.0.1:{port} is already in use; choose another port "
        "(--listen-port 0 picks a free one)\n"
    )
    assert result.stdout == b""


def test_a_listen_host_that_is_not_this_machines_is_one_line(spec_path: Path) -> None:
    """Tool-defined: an address the proxy cannot listen on is named with the options that gave it, exit 2."""
    command = [
        PYTHON, "-m", "mcp_assay", "proxy", "--upstream", "http://127.0.0.1:9/mcp", "--listen-host", "192.0.2.1",
        "--listen-port", "8080", "--spec-dir", str(spec_path),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, timeout=60, check=False)
    assert result.returncode == 2
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcp-assay proxy: --listen-host 192.0.2.1 --listen-port 8080: ")


def test_the_tap_needs_a_server_command(spec_path: Path) -> None:
    """Tool-defined: `mcp-assay tap` without a command is a usage error."""
    result = CliRunner().invoke(cli, ["tap", "--spec-dir", str(spec_path)])
    assert result.exit_code == 2


_PROGRESS_LINE = "mcp-assay: judging the session for the report…"
"""The status line a slow worker prints while the parent waits (on a busy machine, even with nothing to judge)."""


def test_a_server_that_cannot_start_is_one_line_and_not_judged(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined (issue 18): a command that is not there leaves nothing to judge: one line saying so (no report
    body, no verdict), exit 3, and nothing on stdout."""
    missing = tmp_path / "no-such-server"
    command = [PYTHON, "-m", "mcp_assay", "tap", "--spec-dir", str(spec_path), "--", str(missing)]
    result = subprocess.run(command, capture_output=True, timeout=60, check=False, input=b"")
    assert result.returncode == 3
    said = [line for line in result.stderr.decode().splitlines() if not line.startswith(_PROGRESS_LINE)]
    assert said == [f"mcp-assay: not judged — the server command could not be started ({missing}: command not found)"]
    assert result.stdout == b""


def test_an_unknown_injection_family_or_hold_is_a_usage_error(spec_path: Path) -> None:
    """Tool-defined: --inject is checked before the proxy starts."""
    upstream = ["proxy", "--spec-dir", str(spec_path), "--upstream", "http://127.0.0.1:9/mcp"]
    result = CliRunner().invoke(cli, [*upstream, "--inject", "version,bogus"])
    assert result.exit_code == 2
    assert f"--inject: bogus: unknown family; choose from {family_names()}, all" in result.output
    result = CliRunner().invoke(cli, [*upstream, "--inject", "hold", "--inject-hold-ms", "0"])
    assert result.exit_code == 2
    assert "--inject-hold-ms: expected a whole number of milliseconds from 1 to 600000 (got '0')" in result.output


def test_a_probe_config_with_a_mistake_is_a_usage_error(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: the server probes' config file is read before the proxy starts."""
    config = tmp_path / "probe.yaml"
    config.write_text("tool-args-typo: {}\n")
    result = CliRunner().invoke(
        cli, ["proxy", "--spec-dir", str(spec_path), "--upstream", "http://127.0.0.1:9/mcp", "--probe-server",
              "--probe-config", str(config)],
    )  # fmt: skip
    assert result.exit_code == 2 and "unknown keys tool-args-typo" in result.output


def test_the_tap_says_which_families_have_no_stdio_case(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: sessions, headers and streams are HTTP's; the tap says so and goes on."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "mcp_assay", "tap", "--spec-dir", str(spec_path), "--inject", "all", "--live", "off",
         "--report", f"json:{tmp_path / 'r.json'}", "--", sys.executable, "-c", f"print({ANSWER!r})"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "--inject cut, headers, session: no such fault on stdio" in done.stderr
