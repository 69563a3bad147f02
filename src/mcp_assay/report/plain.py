"""Evidence as plain lines, for the writers that carry text inside another format (JUnit, SARIF).

Both put a failed result's evidence into one text field of their own format; the lines are made
here once, each one cleaned of control characters and line breaks by :func:`printable`.
"""

from __future__ import annotations

from mcp_assay.report.console import evidence_label, explored_lines, printable
from mcp_assay.vocabulary.verdicts import Verdict

__all__ = ["evidence_lines", "explored_lines", "one_line"]


def one_line(value: str) -> str:
    """``value`` safe to show, on one line."""
    return printable(value, newlines=False)


def evidence_lines(result: Verdict) -> list[str]:
    """Every piece of ``result``'s evidence: its summary and exchange, then detail, message and reproduction."""
    lines = []
    for item in result.evidence:
        where = f" (exchange {one_line(item.exchange)})" if item.exchange else ""
        lines.append(f"{evidence_label(item)}: {one_line(item.summary)}{where}")
        if item.detail and item.detail != result.reason:
            lines.append(f"  {one_line(item.detail)}")
        if item.excerpt:
            lines.append(f"  message: {one_line(item.excerpt)}")
        if item.explored is not None:
            lines += [f"  {line}" for line in explored_lines(item.explored)]
        if item.reproduction:
            lines.append(f"  reproduce: {one_line(item.reproduction)}")
    return lines
