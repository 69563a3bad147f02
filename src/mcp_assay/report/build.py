"""The one place a report is assembled, whoever judged the traffic.

The proxy and the stdio tap (at the end of a session), ``mcp-assay run`` (when its last event
arrives) and ``mcp-assay validate`` (after reading the files) all hand their verdicts and what they
know about what was judged to :func:`build_report`; it adds what every report says the same way
(the revision window and its schema files, a note for any schema that matched no pin), applies a
baseline, marks the failures that are known findings of the SDK the peer is built on (recognized from the
traffic, or named with ``--sdk``: :mod:`mcp_assay.report.sdks`), and returns the
:class:`~mcp_assay.report.model.Report` every writer renders.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from mcp_assay.recording.audit import AuditLine
from mcp_assay.report.about import Stats, Target
from mcp_assay.report.baseline import Baseline, apply_baseline
from mcp_assay.report.model import FailOn, Report
from mcp_assay.report.sdk_signs import SdkSigns
from mcp_assay.report.sdks import AUTO, SdkChoice, attribute
from mcp_assay.vocabulary.verdicts import RequirementText, SchemaInfo, Verdict

__all__ = ["PER_MESSAGE", "build_report", "unpinned_notes"]

PER_MESSAGE = "attributed per message from the traffic (per-request _meta and headers; initialize per session)"
"""The revision line of a report on captured traffic, where every message carries its own revision."""


def unpinned_notes(schemas: Iterable[SchemaInfo]) -> list[str]:
    """A note for every schema the user named on purpose that matches no pin."""
    return [
        f"an unpinned schema was used for {schema.revision} ({schema.path}, sha256 {schema.sha256[:12]}…)"
        for schema in schemas
        if not schema.pinned
    ]


def build_report(
    verdicts: Sequence[Verdict],
    *,
    target: Target,
    schemas: Sequence[SchemaInfo],
    tested: Sequence[str] = (),
    revision_note: str = PER_MESSAGE,
    notes: Iterable[str] = (),
    audit: Sequence[AuditLine] = (),
    stats: Stats | None = None,
    fail_on: FailOn = FailOn.MUST,
    baseline: Baseline | None = None,
    glossary: Mapping[str, RequirementText] | None = None,
    unjudged: str | None = None,
    left_out: str | None = None,
    sdk: SdkChoice = AUTO,
    signs: SdkSigns | None = None,
) -> Report:
    """A report of ``verdicts``: what was judged (``target``), against which schemas, with which notes;
    ``tested`` names the revisions a suite run tested (newest first), ``glossary`` what the catalogue
    says of the requirements the verdicts cite; ``unjudged`` why there was nothing to judge (no MCP peer); ``left_out``
    what of the traffic was there but not judged; ``signs``
    what the peers showed of their SDKs, ``sdk`` what ``--sdk`` and ``--accept-sdk-findings`` asked."""
    recognized, sdk_notes = signs.recognitions() if signs is not None and sdk.recognize else ([], [])
    report = Report(
        results=list(verdicts),
        target=target,
        tested=list(tested),
        revision_note=revision_note,
        window=[schema.revision for schema in schemas],
        schemas=list(schemas),
        notes=list(dict.fromkeys([*unpinned_notes(schemas), *notes, *sdk_notes])),
        audit=list(audit),
        stats=stats if stats is not None else Stats(),
        fail_on=fail_on,
        glossary=dict(glossary or {}),
        unjudged=unjudged,
        left_out=left_out,
    )
    if baseline is not None:
        apply_baseline(report, baseline)
    attribute(report, sdk, recognized)
    return report
