"""Make ``demo-naive.json`` from the JSON report of a real ``mcp-assay demo`` run, trimmed to what renders.

The HTML report never shows the evidence of a pass or of a result that does not apply, nor the
requirement table and the harness audit, so these are dropped (they are most of the file);
everything else, counts included, is kept as the run wrote it. Regenerate after a change to what the demo reports:

    mcp-assay demo --output-dir /tmp/demo
    python tests/data/reports/trim_demo_report.py /tmp/demo/report.json tests/data/reports/demo-naive.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def trim(report: dict[str, object]) -> dict[str, object]:
    results = report.get("results")
    if isinstance(results, list):
        for item in results:
            if isinstance(item, dict) and item.get("outcome") in ("passed", "not_applicable"):
                item["evidence"] = []
    report["requirements"] = []
    report["audit"] = []
    return report


def main(argv: list[str]) -> None:
    source, target = Path(argv[0]), Path(argv[1])
    data = trim(json.loads(source.read_text(encoding="utf-8")))
    target.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
