"""The behaviour config: validated whole before any request, secrets only from the environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from mcp_assay.cli import cli
from mcp_assay.suite.behaviour.config import parse_behaviour
from mcp_assay.suite.behaviour.extract import ExtractError, apply_extract, parse_extract
from mcp_assay.suite.config import SuiteConfig, read_config_file
from mcp_assay.vocabulary.errors import ConfigError

ENV = {"READER": "reader-secret-123", "WRITER": "writer-secret-456", "STORE": "/tmp/drafts.json"}
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp-assay.yaml"


def good() -> dict[str, Any]:
    return {
        "principals": {"reader": {"token": "${READER}"}, "writer": {"token": "${WRITER}", "env": {"ROLE": "w"}}},
        "expect": {"tools_by_principal": {"reader": ["list_drafts"], "writer": ["list_drafts", "create_draft"]}},
        "witnesses": {
            "count": {"mcp": {"principal": "reader", "tool": "list_drafts"}, "extract": "structuredContent.count"},
            "file": {"command": ["cat", "${STORE}"], "extract": "drafts|len"},
            "route": {"http": {"url": "http://127.0.0.1:1/_test/count", "headers": {"X-Admin-Key": "${WRITER}"}}},
        },
        "write_tools": {
            "create_draft": {
                "principal": "writer",
                "arguments": {"title": "t", "body": "b"},
                "witness": "count",
                "refusals": {"extra_arguments": {"publish": True}, "principal_without_scope": "reader"},
                "cancellation": {"delay_argument": {"delay_ms": 400}, "timeout_ms": 100, "settle_ms": 1200},
            }
        },
        "read_tools": {"list_drafts": {"principal": "reader", "witness": "file"}},
        "handles": {
            "draft": {
                "create": {"principal": "writer", "tool": "create_draft", "arguments": {"title": "t", "body": "b"}},
                "use": {"principal": "reader", "tool": "read_draft", "arguments": {"draft_id": "{handle}"}},
                "handle": "structuredContent.id",
                "canary_argument": "body",
            }
        },
    }


def parse(data: dict[str, Any], environ: dict[str, str] | None = None) -> Any:
    return parse_behaviour(data, "test.yaml", ENV if environ is None else environ)


def test_a_complete_config_resolves_every_reference_and_every_secret() -> None:
    """Tool-defined: principals, witnesses, write tools, reads and handles parse into one config."""
    config = parse(good())
    assert config.principals["reader"].token == ENV["READER"]
    assert config.principals["writer"].env == {"ROLE": "w"}
    assert config.witnesses["file"].argv == ("cat", ENV["STORE"])
    assert config.write_tools["create_draft"].cancellation.timeout_ms == 100
    assert config.handles["draft"].use.arguments == {"draft_id": "{handle}"}
    assert set(config.secrets()) == {ENV["READER"], ENV["WRITER"]}


def test_a_file_without_behaviour_keys_has_no_behaviour_config() -> None:
    """Tool-defined: the ordinary run settings alone configure no behaviour cases."""
    assert parse_behaviour({"url": "http://x/mcp"}) is None


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["principals"]["reader"].update(token="inline-token-1"), "principals.reader.token: inline secrets"),
        (lambda d: d["principals"]["reader"].update(tokn="${READER}"), "principals.reader: unknown key tokn"),
        (lambda d: d["write_tools"]["create_draft"].update(witness="nope"), "no witness named 'nope'"),
        (lambda d: d["write_tools"]["create_draft"].update(principal="admin"), "no principal named 'admin'"),
        (lambda d: d["write_tools"]["create_draft"]["cancellation"].update(timeout=1), "cancellation: unknown key"),
        (lambda d: d["write_tools"]["create_draft"]["cancellation"].update(eras=["2024-11-05"]), "eras"),
        (lambda d: d["witnesses"]["count"].update(extract="a..b"), "witnesses.count.extract: cannot read"),
        (lambda d: d["witnesses"]["count"].update(http={"url": "x"}), "exactly one of mcp, http or command"),
        (lambda d: d["witnesses"]["route"]["http"]["headers"].update({"X-Admin-Key": "plain"}), "inline secrets"),
        (lambda d: d["handles"]["draft"]["use"].update(arguments={"draft_id": "d_1"}), 'put "{handle}"'),
        (lambda d: d["handles"]["draft"]["use"].update(principal="writer"), "two different principals"),
        (lambda d: d["expect"]["tools_by_principal"].update(admin=["x"]), "no principal named 'admin'"),
        (lambda d: d["principals"].update(ghost={}), "give a token, a headers set"),
    ],
)
def test_a_wrong_config_is_refused_naming_the_key(edit: Any, message: str) -> None:
    """Tool-defined: unknown keys, dangling references, inline secrets and bad shapes are config errors."""
    data = good()
    edit(data)
    with pytest.raises(ConfigError, match="test.yaml: ") as caught:
        parse(data)
    assert message in str(caught.value)


def test_an_unset_environment_variable_is_named() -> None:
    """Tool-defined: ${NAME} must be set when the file is read."""
    with pytest.raises(ConfigError, match="environment variable WRITER is not set"):
        parse(good(), {"READER": "r-123456", "STORE": "/tmp/x"})


def test_the_suite_config_file_carries_the_behaviour_sections(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: one --config file holds the run settings and the behaviour sections."""
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "mcp-assay.yaml"
    path.write_text(yaml.safe_dump({"url": "http://127.0.0.1:9/mcp", "timeout": 3, **good()}), encoding="utf-8")
    config = SuiteConfig.from_options({}, read_config_file(path))
    assert config.behaviour is not None and config.timeout == 3.0
    path.write_text(yaml.safe_dump({"url": "http://127.0.0.1:9/mcp", "witness": {}}), encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown keys witness .*write_tools"):
        read_config_file(path)


def test_the_example_config_is_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: examples/mcp-assay.yaml parses with its three environment variables set."""
    for name in ("DRAFTS_READER_TOKEN", "DRAFTS_WRITER_TOKEN", "DRAFTS_STORE"):
        monkeypatch.setenv(name, f"value-of-{name.lower()}")
    values = read_config_file(EXAMPLE)
    behaviour = values["behaviour"]
    assert set(behaviour.principals) == {"reader", "writer"}
    assert behaviour.write_tools["create_draft"].cancellation is not None


def test_a_bad_config_stops_the_run_before_any_request(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined: an inline token is a usage error (exit 2), and nothing is sent."""
    data = good()
    data["principals"]["reader"]["token"] = "inline-token-1"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["run", "-u", "http://127.0.0.1:9/mcp", "--config", str(path), "--spec-dir", str(spec_path)], env=ENV
    )
    assert result.exit_code == 2
    assert "inline secrets are refused" in result.output
    assert "inline-token-1" not in result.output.replace("token: inline", "")


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("structuredContent.count", {"structuredContent": {"count": 3}}, 3),
        ("drafts|len", {"drafts": [1, 2]}, 2),
        ("items[1].id", {"items": [{"id": "a"}, {"id": "b"}]}, "b"),
        ("", {"a": 1}, {"a": 1}),
    ],
)
def test_extract_walks_keys_and_indexes(path: str, value: Any, expected: Any) -> None:
    """Tool-defined: the extract path language (dotted keys, [i], |len)."""
    assert apply_extract(parse_extract(path), value) == expected


def test_extract_hash_fingerprints_canonical_json_and_missing_paths_fail() -> None:
    """Tool-defined: |hash ignores key order; a path that does not fit is an error, never None."""
    first = apply_extract(parse_extract("|hash"), {"a": 1, "b": [1, 2]})
    assert first == apply_extract(parse_extract("|hash"), {"b": [1, 2], "a": 1})
    assert first.startswith("sha256:")
    with pytest.raises(ExtractError, match="no key 'count'"):
        apply_extract(parse_extract("structuredContent.count"), {"structuredContent": {}})
    with pytest.raises(ExtractError, match="unknown filter"):
        parse_extract("a|sum")
