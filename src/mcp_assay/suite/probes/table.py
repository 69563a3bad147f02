"""``docs/probes.md``, written from the case registry: every case the suite sends, family by family.

The page is never edited by hand: :func:`probe_table` renders it from the families
(:data:`~mcp_assay.suite.probes.FAMILIES`: when each applies) and their cases
(:mod:`mcp_assay.cases`: what each sends, expects and feeds), and a test fails when the file differs
(``UPDATE_DOCS=1`` rewrites it). What the reference servers answered, which no registry knows, is in
``docs/reference-answers.md``.
"""

from __future__ import annotations

from collections.abc import Iterable

from mcp_assay.cases import BY_FAMILY, Case, Judging
from mcp_assay.suite.context import ProbeFamily
from mcp_assay.suite.probes import FAMILIES
from mcp_assay.vocabulary.protocol import Era

__all__ = ["probe_table"]

JUDGED = {
    Judging.ALONG: "with the traffic",
    Judging.SELECTED: "picked out by its rule",
    Judging.NOTED: "a note",
    Judging.SETUP: "groundwork",
}
INTRO = """\
# Probe cases

<!-- Generated from the case registry (src/mcp_assay/cases/) by mcp_assay.suite.probes.table: do not edit.
     `UPDATE_DOCS=1 .venv/bin/python -m pytest tests/test_probe_table.py` rewrites it. -->

An SDK client only builds well-formed requests, so a run through one shows that a server is
reachable, not how it treats input that is slightly wrong. `mcp-assay run` therefore sends a set of
cases built on purpose — a header that disagrees with the body, a version nobody serves, a body that
is not JSON — and judges each answer with the same rules that judge passive traffic. Each case is
declared once (`src/mcp_assay/cases/`): its name as the recording carries it, the family that sends
it, what it sends, what the specification expects, and the requirements whose checks judge it. This
page is written from those declarations; what the reference servers answered, the two channels a
tool error can take, and the deliberately broken servers are in
[reference-answers.md](reference-answers.md).

Conventions:

- Each case changes one thing relative to a request the server serves (ambiguity A6: when several
  failures apply at once, the order of validation is not specified).
- A case *malformed on purpose* is sent as built, never held against the client side of the traffic
  (which in a suite run is mcp-assay itself), and skips the suite's outgoing schema check. Every
  other request is validated against the revision's schema before it leaves; a request of the
  suite's own making that fails that check is a harness error, reported as not verified.
- A case that names *another version* than the one under test (or none) is evidence only for the
  checks that judge version negotiation itself.
- *How judged*: **with the traffic** — the rules that judge any such request judge it; **picked out
  by its rule** — a rule selects the exchange by its case and holds the answer to the expectation;
  **a note** — no requirement applies, the answer is a note in the report; **groundwork** — the
  suite's own setup, nothing is asked of the answer.
- The suite calls a tool only with arguments the user gave in `--tool-args`, or drawn from its
  `inputSchema` for a tool `--generate-args` allows (or, for a tool with no required arguments,
  none at all; never one annotated destructive). Cases that cannot run are reported as not
  verified, with the reason.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _name(case: Case) -> str:
    name = f"`{case.name}`"
    if case.paged:
        name += f" (`{case.name}-page-N` from page 2)"
    if case.marker is not None:
        name += f" (`{case.marker[0]}: {case.marker[1]}`)"
    return name


def _marks(case: Case) -> str:
    marks = [JUDGED[case.judging]]
    if case.invalid:
        marks.append("malformed on purpose")
    if case.off_version:
        marks.append("another version")
    if case.credential is not None:
        marks.append(f"credential: {case.credential.value}")
    return "; ".join(marks)


def _when(family: ProbeFamily) -> str:
    parts = [" and ".join(era.revision for era in (Era.MODERN, Era.HANDSHAKE) if era in family.eras)]
    parts.append(" and ".join(sorted(family.transports)))
    if family.capability is not None:
        parts.append(f"when `{family.capability}` is advertised")
    return ", ".join(parts)


def _cases(cases: Iterable[Case]) -> list[str]:
    lines = [
        "| case (name in the recording) | what is sent | expected | feeds | how judged |",
        "| --- | --- | --- | --- | --- |",
    ]
    for case in cases:
        feeds = ", ".join(sorted(case.feeds)) or "—"
        lines.append(f"| {_name(case)} | {_cell(case.sends)} | {_cell(case.expects)} | {feeds} | {_marks(case)} |")
    return lines


def probe_table() -> str:
    """The whole of ``docs/probes.md``."""
    lines = [INTRO, "## Families", "", "In the order a run sends them (`--only NAME` runs one).", ""]
    lines += ["| family | what it covers | when | cases | requirements fed |", "| --- | --- | --- | --- | --- |"]
    for family in FAMILIES:
        fed = ", ".join(sorted(family.requirements)) or "—"
        lines.append(
            f"| [{family.name}](#{family.name}) | {_cell(family.description)} | {_when(family)} | "
            f"{len(family.cases)} | {fed} |"
        )
    for family in FAMILIES:
        lines += ["", f"## {family.name}", "", f"{family.description} — {_when(family)}.", ""]
        lines += _cases(family.cases)
    others = [name for name in BY_FAMILY if name not in {family.name for family in FAMILIES}]
    lines += ["", "## Outside the suite", "", "Sent by the proxy's server probes (`proxy --probe-server`: "
              "`probe-server`) and by the demo's client (`demo`).", ""]  # fmt: skip
    lines += _cases(case for name in others for case in BY_FAMILY[name])
    return "\n".join(lines) + "\n"
