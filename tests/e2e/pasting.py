"""Replays as a person meets them: read from every report format, pasted into a shell, checked against the finding.

Every writer shows each piece of evidence's replay its own way (a line after ``— replay:`` in the short
terminal report, ``replay: …`` in the full listing, a fenced block in Markdown, a ``<pre>`` in HTML, a
``reproduce:`` line in JUnit, a YAML field in TAP, a SARIF property). :func:`shown` reads them all back,
so a test can require that each is one the JSON report holds, whole; :func:`paste` runs one in bash as
a person would; :func:`http_reproduced` and :func:`stdio_reproduced` say whether what came back is the
answer the finding's evidence describes.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

__all__ = ["FORMATS", "evidence_by_replay", "http_reproduced", "paste", "report_args", "shown", "stdio_reproduced"]

FORMATS = ("json", "markdown", "html", "junit", "tap", "sarif", "terminal")
"""The formats a session is asked to write (``terminal`` to a file: the full listing)."""
STATUS = re.compile(r"^HTTP/\S+ (\d{3})", re.MULTILINE)
PASTE_TIMEOUT = 40


def report_args(folder: Path) -> list[str]:
    """``--report FORMAT:PATH`` for every format, into ``folder`` (read back by :func:`shown`)."""
    return [word for name in FORMATS for word in ("--report", f"{name}:{folder / f'report.{name}'}")]


def _brief(text: str) -> list[str]:
    """The line after each ``— replay:`` (which a narrow terminal may have folded before ``replay:``)."""
    lines = text.splitlines()
    return [
        lines[n + 1].strip()
        for n, line in enumerate(lines[:-1])
        if line.rstrip().endswith("— replay:") or (line.strip() == "replay:" and lines[n - 1].rstrip().endswith("—"))
    ]


def _listing(text: str) -> list[str]:
    return [line.strip().removeprefix("replay: ") for line in text.splitlines() if line.strip().startswith("replay: ")]


def _markdown(text: str) -> list[str]:
    found, lines = [], text.splitlines()
    for number, line in enumerate(lines):
        if line.strip() == "reproduce:":
            fence = lines[number + 2].strip()
            body = []
            for following in lines[number + 3 :]:
                if following.strip() == fence.removesuffix("sh"):
                    break
                body.append(following.strip())
            found.append("\n".join(body))
    return found


def _html(text: str) -> list[str]:
    return [html.unescape(match) for match in re.findall(r'<pre class="reproduction">(.*?)</pre>', text, re.DOTALL)]


def _junit(text: str) -> list[str]:
    found = []
    for element in ET.fromstring(text).iter():
        for line in (element.text or "").splitlines():
            if line.strip().startswith("reproduce: "):
                found.append(line.strip().removeprefix("reproduce: "))
    return found


def _tap(text: str) -> list[str]:
    found: list[str] = []
    block: list[str] = []
    inside = False
    for line in text.splitlines():
        if line == "  ---":
            block, inside = [], True
        elif line == "  ..." and inside:
            data = yaml.safe_load("\n".join(part[2:] for part in block)) or {}
            found += [item["reproduce"] for item in data.get("evidence", []) if "reproduce" in item]
            inside = False
        elif inside:
            block.append(line)
    return found


def _sarif(text: str) -> list[str]:
    runs = json.loads(text)["runs"]
    return [replay for run in runs for result in run["results"] for replay in result["properties"]["reproductions"]]


def _json(text: str) -> list[str]:
    return list(evidence_by_replay(json.loads(text)))


READERS = {
    "json": _json, "markdown": _markdown, "html": _html, "junit": _junit, "tap": _tap, "sarif": _sarif,
    "terminal": _listing,
}  # fmt: skip


def shown(folder: Path, brief: str = "") -> dict[str, list[str]]:
    """The replays each format written into ``folder`` shows (``brief``: the short terminal report's text)."""
    found = {name: READERS[name](Path(folder / f"report.{name}").read_text(encoding="utf-8")) for name in FORMATS}
    if brief:
        found["terminal (short)"] = _brief(brief)
    return found


def evidence_by_replay(report: Mapping[str, Any]) -> dict[str, list[tuple[dict[str, Any], dict[str, Any]]]]:
    """Each replay the JSON report holds for a result the other formats show with its evidence (any but a pass)
    -> the (result, evidence) pairs that show it."""
    found: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for result in report["results"]:
        if result["outcome"] == "passed":
            continue
        for item in result["evidence"]:
            if item["reproduction"]:
                found.setdefault(item["reproduction"], []).append((result, item))
    return found


def paste(command: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``command`` run by bash as pasted at a prompt (its exit status is the last command's)."""
    return subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=PASTE_TIMEOUT, check=False,
        env=dict(env) if env is not None else None,
    )  # fmt: skip


def _answers(output: str) -> list[dict[str, Any]]:
    found = []
    for line in output.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def http_reproduced(item: Mapping[str, Any], output: str) -> str | None:
    """Why the pasted curl output is not the answer ``item`` describes (its status and error code); ``None``
    when it is. An exchange the client left before an answer describes none: any answer will do."""
    status = re.search(r"→ (\d{3})", item["summary"])
    got = STATUS.findall(output)
    if not got:
        return f"no HTTP status came back: {output[:300]!r}"
    if status is not None and got[-1] != status.group(1):
        return f"got HTTP {got[-1]}, the evidence says {status.group(1)}"
    code = re.search(r"code=(-?\d+)", item["summary"])
    if code is not None and not re.search(rf'"code":\s*{code.group(1)}\b', output):
        return f"no error {code.group(1)} in {output[-400:]!r}"
    return None


def _same_id(answer: Mapping[str, Any], text: str) -> bool:
    return json.dumps(answer.get("id"), separators=(",", ":")) == text


def stdio_reproduced(item: Mapping[str, Any], output: str) -> str | None:
    """Why the pasted stdio replay's output is not what ``item`` describes; ``None`` when it is.

    A server line's evidence names what the server wrote (an error with its code, a result, a line that is
    not JSON, shown as the excerpt); a client line's is the line itself, answered or ignored as its detail
    says. The marker's answer must have come back in every case: the server read the whole replay."""
    answers = _answers(output)
    if not any(answer.get("id") == "mcp-assay-replay-end" for answer in answers):
        return f"the marker was never answered: {output[-400:]!r}"
    summary = item["summary"]
    if "server → client" in summary:
        error = re.search(r"error id=(\S+) code=(-?\d+)", summary)
        if error is not None:
            code = int(error.group(2))
            if not any(isinstance(a.get("error"), dict) and a["error"].get("code") == code for a in answers):
                return f"no error {code} came back"
            return None
        result = re.search(r"result id=(\S+)", summary)
        if result is not None:
            if not any("result" in a and _same_id(a, result.group(1)) for a in answers):
                return f"no result for id {result.group(1)} came back"
            return None
        if summary.endswith("unparseable"):
            lines = {line.strip() for line in output.splitlines()}
            return None if item["excerpt"].strip() in lines else f"{item['excerpt']!r} is not among what came back"
        notification = re.search(r"notification (\S+)", summary)
        if notification is not None and not any(a.get("method") == notification.group(1) for a in answers):
            return f"no {notification.group(1)} came back"
        return None
    if "no error came back" in item["detail"]:
        errors = [a for a in answers if "error" in a and a.get("id") != "mcp-assay-replay-end"]
        return f"an error came back: {errors}" if errors else None
    return None


def unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
