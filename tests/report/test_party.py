"""Who is at fault, through every writer and through merging: ``Verdict.party`` and ``Evidence.hop``.

Tool-defined (docs/gateways.md): a report of a gateway's two hops keeps each failure's party in its JSON form
(read back the same), names it in every human writer, keeps two parties' results of one check apart when
reports of several gateway nodes are merged, and counts the parties apart in the verdict line.
"""

from __future__ import annotations

import json
from dataclasses import replace

from mcp_assay.report.about import Target
from mcp_assay.report.build import build_report
from mcp_assay.report.html import render_html
from mcp_assay.report.junit import render_junit
from mcp_assay.report.markdown import render_markdown
from mcp_assay.report.model import Report, merge_reports
from mcp_assay.vocabulary.verdicts import Evidence, Level, Outcome, Party, Severity, Side, Source, Verdict


def verdict(party: Party | None, outcome: Outcome = Outcome.FAILED, check: str = "c") -> Verdict:
    return Verdict(
        check=check, title="A server answers.", requirements=("RPC-13",), level=Level.MUST, severity=Severity.MUST,
        side=Side.SERVER, outcome=outcome, source=Source.PASSIVE, reason="wrong code", party=party,
        evidence=(Evidence(summary="POST /mcp", exchange="h1", hop="front"), Evidence(summary="POST /mcp", hop="back")),
    )  # fmt: skip


def report(*verdicts: Verdict) -> Report:
    return build_report(verdicts, target=Target(kind="proxy"), schemas=[])


def test_the_party_and_the_hop_survive_the_json_report() -> None:
    first = report(verdict(Party.GATEWAY), verdict(Party.SERVER))
    again = Report.from_json(json.loads(json.dumps(first.to_json())))
    assert [result.party for result in again.results] == [Party.GATEWAY, Party.SERVER]
    assert [item.hop for item in again.results[0].evidence] == ["front", "back"]
    statuses = {(status.id, status.party) for status in again.requirements()}
    assert statuses == {("RPC-13", Party.GATEWAY), ("RPC-13", Party.SERVER)}


def test_a_report_without_a_gateway_names_no_party() -> None:
    data = report(replace(verdict(None), evidence=())).to_json()
    assert "party" not in data["results"][0] and "party" not in data["requirements"][0]
    assert not data["verdict"]["text"].count("at fault")


def test_every_writer_names_whose_fault() -> None:
    shown = report(verdict(Party.GATEWAY))
    assert "gateway as server" in render_markdown(shown)
    assert "gateway as server" in render_html(shown)
    assert "gateway as server" in render_junit(shown)
    assert "evidence (front hop)" in render_markdown(shown)


def test_merging_the_reports_of_gateway_nodes_keeps_the_parties_apart() -> None:
    one = report(verdict(Party.GATEWAY), verdict(Party.SERVER, Outcome.PASSED, check="d"))
    two = report(verdict(Party.SERVER), verdict(Party.SERVER, Outcome.FAILED, check="d"))
    merged = merge_reports([one, two])
    assert sorted((result.check, result.party, result.outcome) for result in merged.results) == [
        ("c", Party.GATEWAY, Outcome.FAILED), ("c", Party.SERVER, Outcome.FAILED), ("d", Party.SERVER, Outcome.FAILED),
    ]  # fmt: skip
    assert merged.verdict()[1].endswith("; at fault: the gateway 1, the server 1.")
