"""Each erratum still describes the pinned upstream files; when upstream fixes one, its test trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.spec.errata import ERRATA, EXAMPLE_ERRATA, apply_errata
from mcp_assay.spec.validator import MessageValidator


@pytest.mark.parametrize("erratum", ERRATA, ids=[e.id for e in ERRATA])
def test_each_schema_erratum_still_applies_to_the_pinned_2026_schema(spec_path: Path, erratum: object) -> None:
    defs = json.loads((spec_path / "2026-07-28" / "schema.json").read_text())["$defs"]
    assert erratum.present(defs), f"upstream fixed erratum {erratum.id}: remove it"  # type: ignore[attr-defined]
    erratum.patch(defs)  # type: ignore[attr-defined]
    assert not erratum.present(defs)  # type: ignore[attr-defined]


def test_errata_apply_only_where_the_defect_exists(spec: SpecSet, spec_path: Path) -> None:
    modern, legacy = spec.window
    assert modern.errata == ("E1", "E2")
    assert legacy.errata == ()  # 2025-11-25 defines neither InputRequiredResult nor the listen acknowledgement
    defs = json.loads((spec_path / "2026-07-28" / "schema.json").read_text())["$defs"]
    apply_errata(defs)
    assert apply_errata(defs) == ()  # idempotent: a patched schema has no defect left


def test_the_ack_erratum_requires_the_subscription_id(spec: SpecSet) -> None:
    validator = spec.newest.validator
    ack = {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"notifications": {}}}
    issues = validator.validate_def("SubscriptionsAcknowledgedNotification", ack)
    assert [issue.erratum for issue in issues] == ["E2"]


@pytest.mark.parametrize("erratum", EXAMPLE_ERRATA, ids=[e.id for e in EXAMPLE_ERRATA])
def test_each_example_erratum_still_describes_a_broken_upstream_example(
    spec: SpecSet, spec_path: Path, erratum: object
) -> None:
    path = spec_path / erratum.revision / "examples" / erratum.path  # type: ignore[attr-defined]
    response = json.loads(path.read_text())
    revision = spec.require(erratum.revision)  # type: ignore[attr-defined]
    assert revision.validator.validate_def("ReadResourceResult", response["result"]), "upstream fixed the example"
    raw = MessageValidator(revision.name, json.loads(revision.schema.path.read_text()))
    assert not raw.validate_def("ReadResourceResultResponse", response), "the plain union lets it through"
    assert revision.validator.validate_def("ReadResourceResultResponse", response), "erratum E1 closes that path"
