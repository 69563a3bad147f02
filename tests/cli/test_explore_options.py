"""``run --explore``'s settings as a user meets them: flags, their MCP_ASSAY_* twins, config keys, one line each.

Tool-defined (issue 23). Every bad value is refused before any work (exit 2, one line naming where it
came from), and ``--explore`` without the ``explore`` extra says how to add it, in one line, exit 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_assay.suite.config import SuiteConfig, read_config_file
from mcp_assay.suite.explore import draws
from tests.cli.test_bad_input import error_line, run
from tests.cli.test_hostile_input import assert_one_line_usage_error

TARGET = ("run", "-u", "http://127.0.0.1:9/mcp", "--explore")


@pytest.mark.parametrize(
    ("flag", "value", "wanted"),
    [
        ("--explore-budget", "0", "a whole number of calls per tool from 1 to 10000"),
        ("--explore-budget", "2.5", "a whole number of calls per tool from 1 to 10000"),
        ("--explore-time", "nan", "a number of seconds, more than 0 and at most 86400"),
        ("--explore-time", "0", "a number of seconds, more than 0 and at most 86400"),
        ("--seed", "-1", "a whole number from 0 to 4294967295"),
        ("--seed", "soon", "a whole number from 0 to 4294967295"),
    ],
)
def test_every_explore_number_is_bounded_and_finite(spec_path: Path, flag: str, value: str, wanted: str) -> None:
    result = run(spec_path, *TARGET, flag, value)
    assert_one_line_usage_error(result, flag)
    assert f"expected {wanted} (got {value!r})" in error_line(result)


def test_a_bad_explore_twin_names_its_variable(spec_path: Path) -> None:
    result = run(spec_path, *TARGET, env={"MCP_ASSAY_EXPLORE_BUDGET": "0"})
    assert_one_line_usage_error(result, "MCP_ASSAY_EXPLORE_BUDGET")
    result = run(spec_path, *TARGET, env={"MCP_ASSAY_SEED": "x"})
    assert_one_line_usage_error(result, "MCP_ASSAY_SEED")


def test_an_explore_tool_name_with_a_control_character_is_refused(spec_path: Path) -> None:
    result = run(spec_path, *TARGET, "--explore-tool", "a\x01b")
    assert_one_line_usage_error(result, "--explore-tool: expected a list of tool names")


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("explore: 'yes'", "explore: expected true or false"),
        ("explore-budget: 0", "explore-budget: expected a whole number of calls per tool from 1 to 10000 (got 0)"),
        ("explore-time: .inf", "explore-time: expected a number of seconds"),
        ("seed: 1.5", "seed: expected a whole number from 0 to 4294967295 (got 1.5)"),
        ("explore-tool: 5", "explore-tool: expected a list of tool names"),
    ],
)
def test_explore_config_keys_are_held_to_the_flags_rules(spec_path: Path, tmp_path: Path, line: str, said: str) -> None:
    config = tmp_path / "assay.yaml"
    config.write_text(f"url: http://h/mcp\n{line}\n", encoding="utf-8")
    result = run(spec_path, "run", "--config", str(config))
    assert_one_line_usage_error(result, f"--config {config}: {said}")


def test_flags_twins_and_config_keys_give_the_same_settings(tmp_path: Path) -> None:
    """Tool-defined: the config file says the same as the flags; explore-tool takes names separated by commas."""
    config = tmp_path / "assay.yaml"
    config.write_text(
        "explore: true\nexplore-budget: 7\nexplore-time: 2.5\nseed: 42\nexplore-tool: 'create_draft, x'\n", "utf-8"
    )
    made = SuiteConfig.from_options({"url": "http://h/mcp"}, read_config_file(config))
    assert (made.explore, made.explore_budget, made.explore_time, made.seed) == (True, 7, 2.5, 42)
    assert made.explore_tool == ("create_draft", "x")
    defaults = SuiteConfig(url="http://h/mcp")
    assert (defaults.explore, defaults.explore_budget, defaults.explore_time, defaults.seed) == (False, 50, 60.0, None)


def test_explore_without_its_extra_is_one_line_exit_2(spec_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: the optional extra is named, with the command that installs it, before any work."""
    monkeypatch.setattr(draws, "available", lambda: False)
    result = run(spec_path, *TARGET)
    assert_one_line_usage_error(result, "--explore needs hypothesis and hypothesis-jsonschema")
    assert "pip install 'mcp-assay[explore]'" in error_line(result)
    without = run(spec_path, "run", "-u", "http://127.0.0.1:9/mcp", "--timeout", "0.5")
    assert without.exit_code == 3  # no --explore: the extra is never asked for (the closed port is what stops it)


def test_help_lists_the_explore_flags_with_their_twins(spec_path: Path) -> None:
    text = " ".join(run(spec_path, "run", "--help").output.split())
    for flag, twin in (
        ("--explore", "MCP_ASSAY_EXPLORE"), ("--explore-budget", "MCP_ASSAY_EXPLORE_BUDGET"),
        ("--explore-time", "MCP_ASSAY_EXPLORE_TIME"), ("--explore-tool", "MCP_ASSAY_EXPLORE_TOOL"),
        ("--seed", "MCP_ASSAY_SEED"),
    ):  # fmt: skip
        assert flag in text and twin in text, flag
