"""The built-in SDK baselines are generated from the pinned expectations, and never drift from them.

``src/mcp_assay/report/sdk_findings.yaml`` is what mcp-assay ships; ``tests/e2e/known_sdk_findings.py``
writes it from ``suite_expected.yaml``, ``explore_expected.yaml`` and ``inject_expected.yaml`` (the findings the
end-to-end tests compare with real runs against the SDKs). A change to a pinned file without running the generator
fails here, with the command that fixes it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mcp_assay.report.sdks import known_sdks
from tests.e2e import known_sdk_findings as generator


def test_the_shipped_sdk_findings_are_the_ones_the_pinned_expectations_give() -> None:
    """Tool-defined: one source of truth; rerun `python -m tests.e2e.known_sdk_findings` after changing a pin."""
    shipped = generator.SHIPPED.read_text(encoding="utf-8")
    assert shipped == generator.render(), (
        "src/mcp_assay/report/sdk_findings.yaml differs from the pinned expectations: "
        "run `python -m tests.e2e.known_sdk_findings`"
    )


def test_every_pinned_suite_finding_is_shipped_for_its_sdk_transport_and_revision() -> None:
    """Tool-defined: each (target, revision, requirement) of suite_expected.yaml is a finding of the target's SDK."""
    pinned = yaml.safe_load(generator.SUITE.read_text(encoding="utf-8"))
    by_name = {sdk.name: sdk for sdk in known_sdks()}
    names = {key: sdk.name for key, sdk in generator.sdks().items()}
    for target, revisions in pinned.items():
        key, transport = generator.SUITE_TARGETS[target]
        sdk = by_name[names[key]]
        for revision, ids in revisions.items():
            for ident in ids:
                assert any(
                    finding.requirement == ident
                    and finding.transport == transport
                    and str(revision) in finding.revisions
                    for finding in sdk.findings
                ), (target, revision, ident)


def test_a_changed_pin_changes_the_generated_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: the drift test can fail: one more pinned finding (and its new digest) changes the text."""
    changed = tmp_path / "suite_expected.yaml"
    text = generator.SUITE.read_text(encoding="utf-8")
    changed.write_text(text.replace("    - HTTP-09   #", "    - RPC-14    # a batch is served\n    - HTTP-09   #", 1))
    before = generator.render()
    monkeypatch.setattr(generator, "SUITE", changed)
    after = generator.render()
    assert after != before and "requirement: RPC-14" in after and "a batch is served" in after


def test_a_pinned_target_the_generator_cannot_place_stops_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: a new pinned target must be mapped to its SDK, never silently left out."""
    changed = tmp_path / "suite_expected.yaml"
    changed.write_text(generator.SUITE.read_text(encoding="utf-8") + "\nnew-sdk-http:\n  2026-07-28:\n    - HTTP-09\n")
    monkeypatch.setattr(generator, "SUITE", changed)
    with pytest.raises(SystemExit, match="new-sdk-http is not mapped"):
        generator.collect()
