"""--failing-tool: a flag, an environment twin and a config-file key, checked before the run starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from mcp_assay.suite.config import SuiteConfig, read_config_file
from mcp_assay.vocabulary.errors import ConfigError


def test_the_failing_tool_comes_from_a_flag_or_a_config_file(tmp_path: Path) -> None:
    """Tool-defined: the flag wins over the file, as for every run setting."""
    config_file = tmp_path / "assay.yaml"
    config_file.write_text("url: http://127.0.0.1:9/mcp\nfailing-tool: explode\n", encoding="utf-8")
    values = read_config_file(config_file)
    assert SuiteConfig.from_options({}, values).failing_tool == "explode"
    assert SuiteConfig.from_options({"failing_tool": "crash"}, values).failing_tool == "crash"
    assert SuiteConfig(url="http://127.0.0.1:9/mcp").failing_tool is None


def test_a_failing_tool_that_is_not_a_name_is_refused(tmp_path: Path) -> None:
    """Tool-defined: a wrong type is reported before anything is sent."""
    with pytest.raises(ConfigError, match="failing-tool"):
        SuiteConfig.from_options({"url": "http://127.0.0.1:9/mcp", "failing_tool": ["a", "b"]})


def test_the_flag_has_an_environment_twin() -> None:
    """Tool-defined: every run option shows its MCP_ASSAY_* variable."""
    result = CliRunner().invoke(cli, ["run", "--help"], terminal_width=200)
    assert "--failing-tool NAME" in result.output
    assert "MCP_ASSAY_FAILING_TOOL" in result.output
