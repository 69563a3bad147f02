"""Every upstream example validates; deliberately broken copies do not."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.spec.errata import EXAMPLE_ERRATA

REVISION = "2026-07-28"


def examples(spec_path: Path) -> list[tuple[str, Path]]:
    root = spec_path / REVISION / "examples"
    return sorted(
        (folder.name, file) for folder in root.iterdir() if folder.is_dir() for file in sorted(folder.glob("*.json"))
    )


def strict_issues(spec: SpecSet, definition: str, instance: Any) -> list[str]:
    """Validate like mcp-assay judges traffic: *ResultResponse examples by their result's resultType."""
    validator = spec.require(REVISION).validator
    issues = [issue.render() for issue in validator.validate_def(definition, instance)]
    if definition.endswith("ResultResponse") and definition != "JSONRPCResultResponse":
        method_def = definition.removesuffix("ResultResponse") + "Result"
        result = instance.get("result", {})
        chosen = "InputRequiredResult" if result.get("resultType") == "input_required" else method_def
        issues += [issue.render() for issue in validator.validate_def(chosen, result, prefix="result")]
    return issues


def test_every_example_validates_against_its_definition(spec: SpecSet, spec_path: Path) -> None:
    """Spec-mandated: the upstream examples are valid instances of the $def they are filed under."""
    known_bad = {erratum.path for erratum in EXAMPLE_ERRATA if erratum.revision == REVISION}
    found = examples(spec_path)
    assert len(found) == 129
    failures = {}
    for definition, file in found:
        relative = f"{definition}/{file.name}"
        issues = strict_issues(spec, definition, json.loads(file.read_text()))
        if relative in known_bad:
            assert issues, f"{relative} is listed as a known-bad example but now validates: retire its erratum"
            continue
        if issues:
            failures[relative] = issues
    assert not failures


BREAKAGES = [
    ("ListToolsResult", lambda d: d.pop("resultType")),
    ("ListToolsResult", lambda d: d.update(ttlMs=-1)),
    ("ListToolsResult", lambda d: d.update(cacheScope="shared")),
    ("CallToolRequest", lambda d: d["params"].pop("name")),
    ("CallToolRequest", lambda d: d["params"]["_meta"].pop("io.modelcontextprotocol/protocolVersion")),
    ("DiscoverResult", lambda d: d.pop("supportedVersions")),
    ("CancelledNotification", lambda d: d["params"].pop("requestId")),
]


@pytest.mark.parametrize(("definition", "breakage"), BREAKAGES, ids=[f"{d}-{i}" for i, (d, _) in enumerate(BREAKAGES)])
def test_broken_copies_of_examples_fail(spec: SpecSet, spec_path: Path, definition: str, breakage: Any) -> None:
    folder = spec_path / REVISION / "examples" / definition
    original = json.loads(sorted(folder.glob("*.json"))[0].read_text())
    broken = copy.deepcopy(original)
    breakage(broken)
    assert not strict_issues(spec, definition, original)
    assert strict_issues(spec, definition, broken)
