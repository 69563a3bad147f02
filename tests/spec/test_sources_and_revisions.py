"""Where schemas come from, how they are verified, and how the revision window is derived."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from mcp_assay.spec import load_spec
from mcp_assay.spec.sources import Origin, load_pins, locate_schemas
from mcp_assay.vocabulary.errors import ConfigError, SpecError
from mcp_assay.vocabulary.protocol import Era


def copy_spec(source: Path, target: Path, revisions: tuple[str, ...] = ("2026-07-28", "2025-11-25")) -> Path:
    for revision in revisions:
        (target / revision).mkdir(parents=True)
        shutil.copy(source / revision / "schema.json", target / revision / "schema.json")
    return target


def test_the_window_is_the_newest_two_revisions_found_newest_first(spec_path: Path) -> None:
    spec = load_spec(spec_dir=spec_path)
    assert [r.name for r in spec.window] == ["2026-07-28", "2025-11-25"]
    assert spec.newest.name == "2026-07-28"
    assert spec.window[1] < spec.window[0]  # by position in the enumeration, not by string
    assert all(r.schema.pinned and r.schema.origin is Origin.SPEC_DIR for r in spec.window)


def test_revision_order_comes_from_dates_not_from_string_comparison(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: an extra, older pinned revision leaves the window; ordering is by date."""
    folder = copy_spec(spec_path, tmp_path / "spec")
    old = folder / "2025-06-18"
    old.mkdir()
    shutil.copy(spec_path / "2025-11-25" / "schema.json", old / "schema.json")
    spec = load_spec(spec_paths=[str(old / "schema.json")], spec_dir=folder)
    assert [r.name for r in spec.all] == ["2025-06-18", "2025-11-25", "2026-07-28"]
    assert [r.name for r in spec.window] == ["2026-07-28", "2025-11-25"]
    assert spec.get("2025-06-18") is None  # outside the window


def test_features_come_from_the_schema_defs(spec_path: Path) -> None:
    spec = load_spec(spec_dir=spec_path)
    modern, legacy = spec.window
    assert {
        "discover",
        "per_request_version",
        "result_envelope",
        "listen_subscriptions",
        "input_required",
    } <= modern.features
    assert "handshake" not in modern.features
    assert {"handshake", "resource_subscribe", "server_requests", "ping"} <= legacy.features
    assert "result_envelope" not in legacy.features
    assert modern.era is Era.MODERN and legacy.era is Era.HANDSHAKE


def test_a_schema_that_matches_no_pin_is_refused(spec_path: Path, tmp_path: Path) -> None:
    folder = copy_spec(spec_path, tmp_path / "spec")
    target = folder / "2026-07-28" / "schema.json"
    document = json.loads(target.read_text())
    document["$defs"]["Extra"] = {"type": "object"}
    target.write_text(json.dumps(document))
    with pytest.raises(SpecError, match="do not match the published revision"):
        load_spec(spec_dir=folder)


def test_spec_path_uses_an_unpinned_schema_on_purpose_and_says_so(spec_path: Path, tmp_path: Path) -> None:
    folder = copy_spec(spec_path, tmp_path / "spec")
    target = folder / "2026-07-28" / "schema.json"
    target.write_text(target.read_text() + "\n")
    spec = load_spec(spec_dir=folder, spec_paths=[str(target)])
    assert spec.newest.schema.origin is Origin.SPEC_PATH
    assert not spec.newest.schema.pinned
    assert [r.name for r in spec.unpinned] == ["2026-07-28"]


def test_spec_path_needs_a_revision_name(spec_path: Path, tmp_path: Path) -> None:
    loose = tmp_path / "schema.json"
    shutil.copy(spec_path / "2026-07-28" / "schema.json", loose)
    with pytest.raises(ConfigError, match="REVISION=PATH"):
        locate_schemas(spec_paths=[str(loose)], cache=tmp_path / "empty")
    schemas = locate_schemas(spec_paths=[f"2026-07-28={loose}"], cache=tmp_path / "empty")
    assert schemas[0].revision == "2026-07-28" and schemas[0].pinned


def test_no_schema_anywhere_names_both_ways_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as raised:
        locate_schemas(cache=tmp_path / "nothing")
    message = str(raised.value)
    assert "mcp-assay spec pull" in message and "--spec-dir" in message and "MCP_ASSAY_SPEC_DIR" in message


def test_the_cache_is_used_when_no_folder_is_given(
    spec_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCP_ASSAY_SPEC_DIR", raising=False)
    monkeypatch.setenv("MCP_ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    copy_spec(spec_path, tmp_path / "cache")
    spec = load_spec()
    assert spec.newest.schema.origin is Origin.CACHE


def test_the_pins_name_the_upstream_commit_and_hashes() -> None:
    pins = load_pins()
    assert set(pins) == {"2026-07-28", "2025-11-25"}
    pin = pins["2026-07-28"]
    assert pin.url == (
        "https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/"
        "b0f60ba5409db7a6582440a7b473cc0398890f15/schema/2026-07-28/schema.json"
    )
    assert len(pin.sha256) == 64


def test_a_bad_folder_from_the_environment_is_named_by_its_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined (issue 19): the error names where the value came from: MCP_ASSAY_SPEC_DIR, not --spec-dir."""
    monkeypatch.setenv("MCP_ASSAY_SPEC_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError) as raised:
        load_spec()
    assert str(raised.value) == f"MCP_ASSAY_SPEC_DIR={tmp_path / 'nowhere'}: not a directory"
    monkeypatch.setenv("MCP_ASSAY_SPEC_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match=rf"^MCP_ASSAY_SPEC_DIR={re.escape(str(tmp_path))} holds no"):
        load_spec()


def test_a_bad_folder_given_as_an_argument_is_named_as_the_caller_says(tmp_path: Path) -> None:
    """Tool-defined: --spec-dir by default, or the name the caller passes (an addon option)."""
    with pytest.raises(ConfigError, match=r"^--spec-dir \S+: not a directory$"):
        locate_schemas(spec_dir=tmp_path / "nowhere")
    with pytest.raises(ConfigError, match=r"^mcp_assay_spec_dir=\S+: not a directory$"):
        locate_schemas(spec_dir=tmp_path / "nowhere", spec_dir_name="mcp_assay_spec_dir")
