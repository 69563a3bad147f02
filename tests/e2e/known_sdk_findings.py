"""Generate the built-in SDK baselines (``src/mcp_assay/report/sdk_findings.yaml``) from the pinned expectations.

The end-to-end tests pin what mcp-assay finds in the official SDKs: ``suite_expected.yaml`` (the reference
servers, per transport and revision), ``explore_expected.yaml`` (what ``run --explore`` adds) and
``inject_expected.yaml`` (the reference clients). Those files stay the one source of truth: this script reads
them, with their justifications (the comments of ``suite_expected.yaml``, the comment lines of
``inject_expected.yaml``, the ``why`` of ``explore_expected.yaml``), and writes the package-data file mcp-assay
ships. The versions come from where the test peers are pinned (``pyproject.toml``'s test extra and
``tests/peers/setup.sh``). ``tests/report/test_sdk_findings_file.py`` regenerates the text and fails when the
shipped file differs, so a change to a pinned file cannot leave the built-in baselines behind:

    python -m tests.e2e.known_sdk_findings          # rewrite the shipped file
    python -m tests.e2e.known_sdk_findings --check  # exit 1 when it is out of date

What this script adds itself is only what the pinned files cannot say: which SDK each pinned target is built
on, over which transport, and the upstream report of a finding where one exists (each link checked by hand).
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SUITE = HERE / "suite_expected.yaml"
EXPLORE = HERE / "explore_expected.yaml"
INJECT = HERE / "inject_expected.yaml"
SHIPPED = ROOT / "src" / "mcp_assay" / "report" / "sdk_findings.yaml"
SCHEMA = "mcp-assay.sdk-findings/1"


@dataclass(frozen=True)
class Sdk:
    """One SDK (or reference server) whose findings are shipped."""

    key: str
    name: str
    """The package name users know it by (the ``NAME`` of ``--sdk NAME@VERSION``)."""
    label: str
    kind: str
    """``sdk`` or ``reference server``."""
    version: str


def _python_sdk_version() -> str:
    found = re.search(r'"mcp==([^"]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    if found is None:
        raise SystemExit("pyproject.toml pins no mcp==VERSION in its test extra")
    return found.group(1)


def _npm_versions() -> dict[str, str]:
    text = (ROOT / "tests" / "peers" / "setup.sh").read_text(encoding="utf-8")
    found = re.search(r"want='([^']*)'", text)
    if found is None:
        raise SystemExit("tests/peers/setup.sh names no want='...' list of Node peers")
    versions = {}
    for spec in found.group(1).split():
        name, at, version = spec.rpartition("@")
        if at and name:
            versions[name] = version
    return versions


def sdks() -> dict[str, Sdk]:
    npm = _npm_versions()
    return {
        "python": Sdk("python", "mcp", "Python SDK", "sdk", _python_sdk_version()),
        "ts-server": Sdk(
            "ts-server", "@modelcontextprotocol/server", "TypeScript SDK v2", "sdk", npm["@modelcontextprotocol/server"]
        ),
        "ts-client": Sdk(
            "ts-client", "@modelcontextprotocol/client", "TypeScript SDK v2", "sdk", npm["@modelcontextprotocol/client"]
        ),
        "everything": Sdk(
            "everything",
            "@modelcontextprotocol/server-everything",
            "the reference server server-everything",
            "reference server",
            npm["@modelcontextprotocol/server-everything"],
        ),
    }


SUITE_TARGETS = {
    "python-sdk-http": ("python", "streamable-http"),
    "python-sdk-stdio": ("python", "stdio"),
    "python-sdk-params-http": ("python", "streamable-http"),
    "python-sdk-params-stdio": ("python", "stdio"),
    "ts-sdk-v2-http": ("ts-server", "streamable-http"),
    "ts-sdk-v2-params-http": ("ts-server", "streamable-http"),
    "server-everything-http": ("everything", "streamable-http"),
}
"""Each target of ``suite_expected.yaml``: the SDK it is built on and the transport it was tested over."""
EXPLORE_TARGETS = {"python-sdk": "python", "ts-sdk": "ts-server"}
INJECT_TARGETS = {"python-client": "python", "typescript-client": "ts-client"}
UPSTREAM = {
    ("python", "server", "stdio", "RPC-12"): "https://github.com/modelcontextprotocol/python-sdk/pull/2766",
    ("python", "server", "stdio", "RPC-13"): "https://github.com/modelcontextprotocol/python-sdk/pull/2766",
    ("python", "client", "", "HS-22"): "https://github.com/modelcontextprotocol/python-sdk/issues/1676",
    ("ts-client", "client", "", "HS-22"): "https://github.com/modelcontextprotocol/typescript-sdk/issues/1708",
}
"""The upstream report of a finding, where one exists: python-sdk#2766 proposes answering unparseable stdio lines
(it fixes python-sdk#2751); python-sdk#1676 and typescript-sdk#1708 report the client keeping an ended session."""


@dataclass
class Finding:
    sdk: str
    side: str
    requirement: str
    transport: str = ""
    check: str = ""
    source: str = ""
    kind: str = ""
    revisions: set[str] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)
    pinned: list[str] = field(default_factory=list)

    def behaviour(self) -> str:
        """The pinned justification that stands on its own (not "as in ..."), else the first one."""
        texts = [" ".join(text.split()) for text in self.texts if text.strip()]
        standing = [text for text in texts if not re.match(r"(?i)(as |the same\b)", text)]
        return (standing or texts or [""])[0]


def _comment(line: str) -> tuple[str, str]:
    """A line split into its YAML part and its comment (``#`` after a space, or at the start)."""
    found = re.search(r"(^|\s)#\s?(.*)$", line)
    if found is None:
        return line.rstrip(), ""
    return line[: found.start()].rstrip(), found.group(2).strip()


def suite_comments(text: str) -> dict[tuple[str, str, str], str]:
    """(target, revision, requirement) -> its comment in ``suite_expected.yaml``, continuation lines joined."""
    comments: dict[tuple[str, str, str], str] = {}
    target = revision = ""
    entry: tuple[str, str, str] | None = None
    entry_column = 0
    for line in text.splitlines():
        body, comment = _comment(line)
        stripped = body.strip()
        column = len(line) - len(line.lstrip())
        if not stripped:
            if entry is not None and comment and column > entry_column:
                comments[entry] = f"{comments[entry]} {comment}".strip()
            continue
        entry = None
        if column == 0 and stripped.endswith(":"):
            target, revision = stripped[:-1], ""
        elif stripped.endswith(":") and not stripped.startswith("-"):
            revision = stripped[:-1].strip("'\"")
        elif stripped.startswith("- ") and target and revision:
            entry = (target, revision, stripped[2:].strip())
            entry_column = column
            comments[entry] = comment
    return comments


def _resolved(comments: dict[tuple[str, str, str], str], target: str, revision: str, ident: str) -> str:
    """A comment that points at another target ("as python-sdk-http: ...") replaced by that target's own comment
    for the requirement, so the shipped text stands on its own."""
    text = comments.get((target, revision, ident), "")
    pointed = re.match(r"as ([a-z0-9-]+)\b", text)
    if pointed is None or pointed.group(1) not in SUITE_TARGETS or pointed.group(1) == target:
        return text
    other = pointed.group(1)
    same = comments.get((other, revision, ident))
    if same:
        return same
    return next((value for (name, _, key), value in comments.items() if name == other and key == ident and value), text)


def inject_comments(text: str) -> dict[tuple[str, int], str]:
    """(target, entry number) -> the comment lines of that entry in ``inject_expected.yaml``."""
    comments: dict[tuple[str, int], str] = {}
    target = ""
    number = -1
    for line in text.splitlines():
        body, comment = _comment(line)
        stripped = body.strip()
        column = len(line) - len(line.lstrip())
        if column == 0 and stripped.endswith(":"):
            target, number = stripped[:-1], -1
        elif stripped.startswith("- ") and target:
            number += 1
            comments[(target, number)] = ""
        elif not stripped and comment and target and number >= 0 and column > 0:
            comments[(target, number)] = f"{comments[(target, number)]} {comment}".strip()
    return comments


def _add(found: dict[tuple[str, ...], Finding], finding: Finding, text: str, revision: str, pinned: str) -> None:
    key = (finding.sdk, finding.side, finding.transport, finding.requirement, finding.check, finding.kind)
    kept = found.setdefault(key, finding)
    if revision:
        kept.revisions.add(revision)
    kept.texts.append(text)
    if pinned not in kept.pinned:
        kept.pinned.append(pinned)


def collect() -> list[Finding]:
    found: dict[tuple[str, ...], Finding] = {}
    suite_text = SUITE.read_text(encoding="utf-8")
    comments = suite_comments(suite_text)
    for target, pins in yaml.safe_load(suite_text).items():
        if target not in SUITE_TARGETS:
            raise SystemExit(f"{SUITE.name}: {target} is not mapped to an SDK in {Path(__file__).name}")
        sdk, transport = SUITE_TARGETS[target]
        for revision, ids in (pins or {}).items():
            for ident in ids or ():
                text = _resolved(comments, target, str(revision), ident)
                finding = Finding(sdk, "server", ident, transport=transport)
                _add(found, finding, text, str(revision), f"{SUITE.name} {target}")
    for target, entries in (yaml.safe_load(EXPLORE.read_text(encoding="utf-8")) or {}).items():
        if target not in EXPLORE_TARGETS:
            raise SystemExit(f"{EXPLORE.name}: {target} is not mapped to an SDK in {Path(__file__).name}")
        for entry in entries or ():
            for ident in entry["requirements"]:
                finding = Finding(
                    EXPLORE_TARGETS[target],
                    "server",
                    ident,
                    check=entry["check"],
                    source="explored",
                    kind=entry["kind"],
                )
                _add(found, finding, str(entry.get("why", "")), "", f"{EXPLORE.name} {target}")
    inject_text = INJECT.read_text(encoding="utf-8")
    notes = inject_comments(inject_text)
    for target, entries in (yaml.safe_load(inject_text) or {}).items():
        if target not in INJECT_TARGETS:
            raise SystemExit(f"{INJECT.name}: {target} is not mapped to an SDK in {Path(__file__).name}")
        for number, entry in enumerate(entries or ()):
            finding = Finding(INJECT_TARGETS[target], "client", entry["requirement"], check=entry["check"])
            _add(found, finding, notes.get((target, number), ""), "", f"{INJECT.name} {target}")
    return list(found.values())


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def document() -> dict[str, Any]:
    known = sdks()
    findings = collect()
    order = {"python": 0, "ts-server": 1, "ts-client": 2, "everything": 3}
    entries = []
    for key in sorted(known, key=lambda name: order[name]):
        sdk = known[key]
        mine = sorted(
            (finding for finding in findings if finding.sdk == key),
            key=lambda f: (f.side, f.transport, f.source, f.requirement, f.check),
        )
        items = []
        for finding in mine:
            item: dict[str, Any] = {"side": finding.side, "requirement": finding.requirement}
            if finding.transport:
                item["transport"] = finding.transport
            if finding.check:
                item["check"] = finding.check
            if finding.source:
                item["source"] = finding.source
            if finding.kind:
                item["kind"] = finding.kind
            if finding.revisions:
                item["revisions"] = sorted(finding.revisions, reverse=True)
            item["behaviour"] = finding.behaviour()
            upstream = UPSTREAM.get((key, finding.side, finding.transport, finding.requirement), "")
            if upstream:
                item["upstream"] = upstream
            item["pinned"] = finding.pinned
            items.append(item)
        if items:
            entries.append(
                {"name": sdk.name, "version": sdk.version, "label": sdk.label, "kind": sdk.kind, "findings": items}
            )
    return {
        "schema": SCHEMA,
        "sources": {f"tests/e2e/{path.name}": _digest(path) for path in (SUITE, EXPLORE, INJECT)},
        "sdks": entries,
    }


HEADER = """\
# The known findings of the official SDKs, shipped as built-in baselines (mcp-assay.sdk-findings/1).
# GENERATED by `python -m tests.e2e.known_sdk_findings` from the pinned expectations of the end-to-end tests
# (tests/e2e/suite_expected.yaml, explore_expected.yaml, inject_expected.yaml): do not edit by hand; change a
# pinned file and run the generator again (tests/report/test_sdk_findings_file.py fails until you do).
"""


def render() -> str:
    body = yaml.safe_dump(document(), sort_keys=False, allow_unicode=True, width=110)
    return HEADER + body


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = SHIPPED.read_text(encoding="utf-8") if SHIPPED.exists() else ""
        if current != text:
            print(f"{SHIPPED.relative_to(ROOT)} is out of date: run python -m tests.e2e.known_sdk_findings")
            return 1
        return 0
    SHIPPED.write_text(text, encoding="utf-8")
    print(f"wrote {SHIPPED.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
