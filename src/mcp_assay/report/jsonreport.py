"""The canonical JSON report (``schema: mcp-assay.report/1``)."""

from __future__ import annotations

import json

from mcp_assay.report.model import Report

__all__ = ["render_json"]


def render_json(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"
