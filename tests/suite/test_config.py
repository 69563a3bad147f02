"""A config file may name the run's token only through the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_assay.suite.config import read_config_file
from mcp_assay.vocabulary.errors import ConfigError


def test_a_token_written_inline_in_the_config_is_refused(tmp_path: Path) -> None:
    """Tool-defined: secrets are never stored in a config file."""
    config = tmp_path / "mcp-assay.yaml"
    config.write_text("token: s3cr3t-value\n")
    with pytest.raises(ConfigError, match="inline secrets are refused"):
        read_config_file(config)


def test_a_token_from_the_environment_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_MCP_TOKEN", "tok-123456")
    config = tmp_path / "mcp-assay.yaml"
    config.write_text("token: ${MY_MCP_TOKEN}\n")
    assert read_config_file(config)["token"] == "tok-123456"


def test_an_unset_variable_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    config = tmp_path / "mcp-assay.yaml"
    config.write_text("token: ${NOT_SET_ANYWHERE}\n")
    with pytest.raises(ConfigError, match="NOT_SET_ANYWHERE is not set"):
        read_config_file(config)


def test_a_rate_limit_probe_section_is_read(tmp_path: Path) -> None:
    """Tool-defined: BEH-11's burst is configured in the file only, with defaults for its size."""
    config = tmp_path / "mcp-assay.yaml"
    config.write_text("rate_limit_probe:\n  tool: search\n  arguments: {query: x}\n")
    probe = read_config_file(config)["rate_limit_probe"]
    assert (probe.tool, dict(probe.arguments), probe.burst, probe.window_s) == ("search", {"query": "x"}, 30, 3.0)


@pytest.mark.parametrize(
    ("section", "said"),
    [
        ("rate_limit_probe: [search]", "expected a mapping"),
        ("rate_limit_probe: {arguments: {}}", "rate_limit_probe.tool"),
        ("rate_limit_probe: {tool: t, burst: 1}", "from 2 to 500"),
        ("rate_limit_probe: {tool: t, burst: 5000}", "from 2 to 500"),
        ("rate_limit_probe: {tool: t, window_s: 0}", "more than 0"),
        ("rate_limit_probe: {tool: t, arguments: [1]}", r"arguments: expected a mapping of names to plain JSON values"),
        ("rate_limit_probe: {tool: t, arguments: {x: .nan}}", "no NaN, infinity, dates or cycles"),
        ("rate_limit_probe: {tool: t, rate: 5}", "unknown keys rate"),
    ],
)
def test_a_bad_rate_limit_probe_is_one_clear_error(tmp_path: Path, section: str, said: str) -> None:
    """Tool-defined: bad user input is refused before any work starts."""
    config = tmp_path / "mcp-assay.yaml"
    config.write_text(section + "\n")
    with pytest.raises(ConfigError, match=said):
        read_config_file(config)
