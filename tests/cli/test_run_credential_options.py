"""`mcp-assay run`'s credential and sign-in options as a user gives them: flags, their environment twins and the
config file, against a small protected resource and the stub on loopback (CliRunner, real sockets)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from mcp_assay.suite.config import SuiteConfig, read_config_file
from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.policy import StubPolicy
from mcp_assay.suite.stub.server import StubServer
from mcp_assay.vocabulary.errors import ConfigError
from tests.peers.oauth_resource import Resource, serving
from tests.peers.process import free_port

TOKEN = "cli-token-3e9b7a02"


@contextmanager
def stub(policy: StubPolicy | None = None) -> Iterator[StubServer]:
    port = free_port()
    server = StubServer("127.0.0.1", port, f"http://127.0.0.1:{port}", SigningKey.generate(), SigningKey.generate(),
                        policy=policy)  # fmt: skip
    try:
        yield server
    finally:
        server.close()


def invoke(spec_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli, ["run", *args, "--spec-dir", str(spec_path), "--timeout", "2", "--stream-budget-ms", "200"], env=env
    )
    return result.exit_code, result.output


def test_an_auth_scheme_twin_set_but_empty_means_a_bare_token(spec_path: Path) -> None:
    """Tool-defined: MCP_ASSAY_AUTH_SCHEME= behaves like --auth-scheme '' (unset: Bearer)."""
    with serving(Resource("http://127.0.0.1:9")) as resource:
        invoke(spec_path, "-u", resource.url, "-t", TOKEN, "--only", "AUTH-09", env={"MCP_ASSAY_AUTH_SCHEME": ""})
        bare = set(resource.authorizations)
        resource.authorizations.clear()
        invoke(spec_path, "-u", resource.url, "-t", TOKEN, "--only", "AUTH-09", env={"MCP_ASSAY_AUTH_SCHEME": None})
        default = set(resource.authorizations)
    assert TOKEN in bare and f"Bearer {TOKEN}" not in bare
    assert f"Bearer {TOKEN}" in default and TOKEN not in default


def test_a_default_version_outside_the_window_is_refused_with_the_supported_list(spec_path: Path) -> None:
    """Tool-defined (--default-version): within the window, like --spec-version."""
    code, output = invoke(spec_path, "-u", "http://127.0.0.1:9/mcp", "--default-version", "2025-03-26")
    assert code == 2
    assert "--default-version: revision 2025-03-26 is not supported; supported: 2026-07-28, 2025-11-25" in output


def test_every_sign_in_step_is_printed_and_a_failed_one_ends_as_a_verdict_not_an_error(spec_path: Path) -> None:
    """Tool-defined: a wrong issuer stops the sign-in at a named step; with --without-token the run still judges the
    challenge and the metadata (exit 0 on this correct resource), and the printed steps name no secret."""
    with stub(StubPolicy(metadata_issuer="https://somewhere-else.example")) as server:
        with serving(Resource(server.grants.issuer)) as resource:
            code, output = invoke(spec_path, "-u", resource.url, "--no-interactive", "--without-token")
    assert code == 0, output
    assert "endpoint returned 401; discovering OAuth configuration" in output
    assert f"  found protected-resource metadata at {resource.prm_url}" in output
    assert 'declares issuer "https://somewhere-else.example"' in output
    assert "the run goes on without a token" in output


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("never", "--no-interactive forbids it"),
        ("always", "authorization: no redirect to http://127.0.0.1:"),
    ],
)
def test_the_interactive_twin_takes_always_and_never(spec_path: Path, value: str, expected: str) -> None:
    """Tool-defined (MCP_ASSAY_OAUTH_INTERACTIVE): never fails at once; always waits for a browser (here none comes,
    so --auth-timeout ends the wait), printing the URL instead of opening one with --no-browser. Either way the
    sign-in fails, and the run stops there: not judged, exit 3."""
    with stub() as server, serving(Resource(server.grants.issuer)) as resource:
        code, output = invoke(spec_path, "-u", resource.url, "--no-browser", "--auth-timeout", "300",
                              env={"MCP_ASSAY_OAUTH_INTERACTIVE": value})  # fmt: skip
    assert code == 3, output
    assert "mcp-assay: not judged — the OAuth sign-in failed at " in output
    assert expected in output
    assert ("open this URL in a browser on this machine" in output) is (value == "always")


def test_a_client_secret_and_secrets_in_a_config_file_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined: a config file is not a secret store: client-secret and secrets are ${ENV} references."""
    monkeypatch.setenv("RUN_CLIENT_SECRET", "from-the-env-1")
    monkeypatch.setenv("RUN_TENANT", "tenant-value-2")
    config = tmp_path / "assay.yaml"
    config.write_text(
        "url: http://127.0.0.1:9/mcp\nclient-id: ci\nclient-secret: ${RUN_CLIENT_SECRET}\nsecrets: ['${RUN_TENANT}']\n"
        "interactive: never\nno-register: true\nredirect-port: 8765\nauth-timeout: 5000\ndefault-version: 2025-11-25\n",
        encoding="utf-8",
    )
    values = read_config_file(config)
    assert values["client_secret"] == "from-the-env-1" and values["secrets"] == ("tenant-value-2",)
    config.write_text("url: http://127.0.0.1:9/mcp\nclient-secret: inline-secret\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="inline secrets are refused"):
        read_config_file(config)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("redirect-host: 10.0.0.7", "the redirect must come back to this machine"),
        ("interactive: sometimes", "interactive: expected always, never, auto"),
        ("auth-timeout: soon", "auth-timeout: expected a whole number of milliseconds from 1 to 86400000 (got 'soon')"),
        ("without-token: sometimes", "without-token: expected true or false"),
        ("allow-insecure-http: 1", "allow-insecure-http: expected true or false"),
    ],
)
def test_a_sign_in_setting_with_a_mistake_is_a_usage_error(
    spec_path: Path, tmp_path: Path, line: str, message: str
) -> None:
    """Tool-defined: checked before the first request."""
    config = tmp_path / "assay.yaml"
    config.write_text(f"url: http://127.0.0.1:9/mcp\n{line}\n", encoding="utf-8")
    code, output = invoke(spec_path, "--config", str(config))
    assert code == 2 and message in output, output


def test_the_sign_in_policies_come_from_a_config_file_too(tmp_path: Path) -> None:
    """Tool-defined: --without-token and --allow-insecure-http are config keys like every flag."""
    config = tmp_path / "assay.yaml"
    config.write_text("url: http://127.0.0.1:9/mcp\nwithout-token: true\nallow-insecure-http: true\n", encoding="utf-8")
    settings = SuiteConfig.from_options({}, read_config_file(config))
    assert settings.without_token and settings.oauth().allow_insecure_http
    assert not SuiteConfig(url="http://127.0.0.1:9/mcp").oauth().allow_insecure_http
