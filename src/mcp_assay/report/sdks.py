"""The known findings of the official SDKs, shipped as built-in baselines, and which failures of a report are theirs.

A server built on an SDK inherits the SDK's findings: an unmodified Python SDK server fails RPC-12 and RPC-13 over
stdio on its first run, and nothing in the user's code can change that. The report tells them apart: a failure
that matches a known finding of the SDK the peer is built on carries :class:`~mcp_assay.vocabulary.verdicts.SdkFinding`
(which
SDK and version, what it was seen doing, the spec clause, the upstream report where there is one), the verdict line
counts those apart from the peer's own (:func:`~mcp_assay.report.model.sdk_verdict_part`), and the terminal names
the one flag that accepts them (``--accept-sdk-findings``). Unless accepted, they still decide the exit status: a
MUST failure is a failure whoever wrote the code.

The known findings are package data (``sdk_findings.yaml``), generated from the findings the end-to-end tests pin
against the real SDKs (``python -m tests.e2e.known_sdk_findings``; a test fails when the file drifts from them). The
SDK is recognized from what the peer shows (:mod:`mcp_assay.report.sdk_signs`), or named with ``--sdk
NAME@VERSION``; ``--sdk none`` turns this off. A finding is matched by side, requirement (and check, where it was
pinned by check), revision and transport.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

import yaml

from mcp_assay.report.model import Report, SdkRecognition
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.verdicts import Outcome, SdkFinding, Verdict

__all__ = [
    "ACCEPT_FLAG",
    "AUTO",
    "KnownSdk",
    "KnownSdkFinding",
    "SdkChoice",
    "accepted_by",
    "attribute",
    "known_sdk",
    "known_sdks",
    "parse_sdk",
    "sdk_hint",
    "sdk_line",
]

SCHEMA = "mcp-assay.sdk-findings/1"
ACCEPT_FLAG = "--accept-sdk-findings"
ACCEPTED = f"accepted with {ACCEPT_FLAG}"
"""The end of the reason an accepted SDK finding carries (:attr:`Verdict.known`)."""
_TRANSPORTS = {"streamable-http": "http", "http": "http", "stdio": "stdio"}
ALIASES = {
    "python": ("mcp",),
    "python-sdk": ("mcp",),
    "typescript": ("@modelcontextprotocol/server", "@modelcontextprotocol/client"),
    "typescript-sdk": ("@modelcontextprotocol/server", "@modelcontextprotocol/client"),
    "ts": ("@modelcontextprotocol/server", "@modelcontextprotocol/client"),
    "server-everything": ("@modelcontextprotocol/server-everything",),
}
"""Short names ``--sdk`` takes besides the package names (``typescript@2.4.0``: the server and client packages)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class KnownSdkFinding:
    """One finding pinned against an SDK version."""

    side: str
    requirement: str
    transport: str = ""
    """``streamable-http`` or ``stdio`` when it was pinned over one transport; empty: any."""
    check: str = ""
    source: str = ""
    """``explored`` for a finding only ``run --explore`` makes."""
    kind: str = ""
    """For an explored finding: the constraint its arguments broke (``type`` ...)."""
    revisions: tuple[str, ...] = ()
    behaviour: str = ""
    upstream: str = ""

    def matches(self, result: Verdict, transports: Collection[str]) -> bool:
        """Whether ``result`` (failed) is this finding, on a peer seen over ``transports`` (empty: unknown)."""
        if result.side.value != self.side or self.requirement not in result.requirements:
            return False
        if (self.check and result.check != self.check) or (self.source and result.source.value != self.source):
            return False
        if self.kind and not any(
            item.explored is not None and item.explored.kind == self.kind for item in result.evidence
        ):
            return False
        if self.transport and transports and _TRANSPORTS.get(self.transport, self.transport) not in transports:
            return False
        if not self.revisions:
            return True
        if result.revision is not None:
            return result.revision in self.revisions
        return not result.revisions or bool(set(result.revisions) & set(self.revisions))


@dataclass(frozen=True, slots=True, kw_only=True)
class KnownSdk:
    """An SDK version (or a reference server) with its known findings."""

    name: str
    version: str
    label: str = ""
    kind: str = "sdk"
    findings: tuple[KnownSdkFinding, ...] = ()

    @property
    def named(self) -> str:
        return f"{self.name} {self.version}"

    @property
    def sides(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(finding.side for finding in self.findings))


def _finding(item: Any) -> KnownSdkFinding:
    revisions = item.get("revisions") or ()
    return KnownSdkFinding(
        side=str(item["side"]),
        requirement=str(item["requirement"]),
        transport=str(item.get("transport", "")),
        check=str(item.get("check", "")),
        source=str(item.get("source", "")),
        kind=str(item.get("kind", "")),
        revisions=tuple(str(revision) for revision in revisions),
        behaviour=str(item.get("behaviour", "")),
        upstream=str(item.get("upstream", "")),
    )


@cache
def known_sdks() -> tuple[KnownSdk, ...]:
    """The SDKs whose findings mcp-assay ships (read once from the package data)."""
    text = resources.files("mcp_assay.report").joinpath("sdk_findings.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise RuntimeError(f"sdk_findings.yaml is not {SCHEMA}")  # a broken install: a defect, exit 3
    return tuple(
        KnownSdk(
            name=str(entry["name"]),
            version=str(entry["version"]),
            label=str(entry.get("label", "")),
            kind=str(entry.get("kind", "sdk")),
            findings=tuple(_finding(item) for item in entry.get("findings") or ()),
        )
        for entry in data.get("sdks") or ()
    )


def known_sdk(name: str) -> KnownSdk | None:
    """The known SDK of this package name."""
    return next((sdk for sdk in known_sdks() if sdk.name == name), None)


@dataclass(frozen=True, slots=True)
class SdkChoice:
    """What ``--sdk`` and ``--accept-sdk-findings`` asked for."""

    off: bool = False
    """``--sdk none``: no SDK is recognized, no failure attributed to one."""
    named: tuple[KnownSdk, ...] = ()
    """``--sdk NAME@VERSION``: these SDKs, whatever the peer shows."""
    accept: bool = False
    """``--accept-sdk-findings``: failures matching a known SDK finding no longer decide the exit status."""

    @property
    def recognize(self) -> bool:
        """Whether the SDK is recognized from what the peer shows (neither named nor turned off)."""
        return not self.off and not self.named


AUTO = SdkChoice()
"""Recognize the SDK from what the peer shows (the default)."""


def _listing() -> str:
    return ", ".join(f"{sdk.name}@{sdk.version}" for sdk in known_sdks())


def parse_sdk(values: Iterable[str], *, accept: bool = False) -> SdkChoice:
    """``--sdk`` values (repeatable, or separated by commas): ``NAME@VERSION`` or ``none``; a malformed or unknown
    one is a :class:`ConfigError` naming what is known."""
    items: list[str] = []
    for value in values:
        found = [item.strip() for item in value.split(",") if item.strip()]
        if not found or re.search(r"[\x00-\x1f\x7f-\x9f]", value):
            raise ConfigError(f"--sdk {value!r}: expected NAME@VERSION (e.g. mcp@2.3.0) or none; known: {_listing()}")
        items += found
    if any(item.lower() == "none" for item in items):
        if len(items) > 1:
            raise ConfigError("--sdk none turns SDK attribution off; it cannot be combined with an SDK")
        return SdkChoice(off=True, accept=accept)
    named: dict[str, KnownSdk] = {}
    for item in items:
        for sdk in _resolve(item):
            named[sdk.name] = sdk
    return SdkChoice(named=tuple(named.values()), accept=accept)


def _resolve(item: str) -> list[KnownSdk]:
    name, at, version = item.rpartition("@")
    if not at or not name or not version or re.search(r"\s", item) or not re.fullmatch(r"[0-9A-Za-z.+_-]+", version):
        raise ConfigError(f"--sdk {item}: expected NAME@VERSION (e.g. mcp@2.3.0) or none; known: {_listing()}")
    names = ALIASES.get(name.lower(), (name,))
    candidates = [sdk for sdk in known_sdks() if sdk.name in names]
    if not candidates:
        raise ConfigError(f"--sdk {item}: mcp-assay knows no findings of {name!r}; known: {_listing()} (or none)")
    chosen = [sdk for sdk in candidates if sdk.version == version]
    if not chosen:
        versions = ", ".join(sdk.named for sdk in candidates)
        raise ConfigError(
            f"--sdk {item}: mcp-assay knows the findings of {versions} only (the version its tests pin); "
            "--sdk none turns SDK attribution off"
        )
    return chosen


def _target_transports(report: Report) -> tuple[str, ...]:
    text = report.target.transport or ""
    return tuple(sorted({kind for word, kind in _TRANSPORTS.items() if re.search(rf"\b{word}\b", text)}))


def recognitions(report: Report, choice: SdkChoice, recognized: Sequence[SdkRecognition]) -> list[SdkRecognition]:
    """The SDKs to attribute failures to: those ``--sdk`` named (one per side they have findings for, of the sides the
    report judged), else those recognized from the traffic; none with ``--sdk none``."""
    if choice.off:
        return []
    if not choice.named:
        return list(recognized)
    transports = _target_transports(report)
    judged = {result.side.value for result in report.applied()}  # a suite run judges no client
    return [
        SdkRecognition(
            side=side, name=sdk.name, version=sdk.version, label=sdk.label, how="named", transports=transports
        )
        for sdk in choice.named
        for side in sdk.sides
        if side in judged
    ]


def attribute(report: Report, choice: SdkChoice, recognized: Sequence[SdkRecognition] = ()) -> None:
    """Mark each failure of ``report`` that matches a known finding of the SDK its peer is built on (and accept it,
    with ``choice.accept``); ``report.sdks`` says which SDKs, and how they were known.

    Apply after a baseline: a failure the baseline already accepts keeps the baseline's reason."""
    report.sdks = recognitions(report, choice, recognized)
    by_name = {sdk.name: sdk for sdk in known_sdks()}
    results: list[Verdict] = []
    for result in report.results:
        if result.sdk is not None:  # a re-rendered report is attributed again
            accepted = result.known is not None and result.known.endswith(ACCEPTED)
            result = replace(result, sdk=None, known=None if accepted else result.known)
        if result.outcome is Outcome.FAILED:
            found = _match(result, report, by_name)
            if found is not None:
                result = replace(result, sdk=found)
                if choice.accept and result.known is None:
                    result = replace(result, known=f"known in {found.named} ({found.label}); {ACCEPTED}")
        results.append(result)
    report.results = results


def _match(result: Verdict, report: Report, by_name: dict[str, KnownSdk]) -> SdkFinding | None:
    for recognition in report.sdks:
        sdk = by_name.get(recognition.name)
        if sdk is None or sdk.version != recognition.version or recognition.side != result.side.value:
            continue
        for requirement in result.requirements:
            for finding in sdk.findings:
                if finding.requirement == requirement and finding.matches(result, recognition.transports):
                    text = report.glossary.get(requirement)
                    return SdkFinding(
                        name=sdk.name,
                        version=sdk.version,
                        label=sdk.label,
                        requirement=requirement,
                        behaviour=finding.behaviour,
                        clause=text.source if text is not None else "",
                        upstream=finding.upstream,
                        recognized=recognition.describe(short=True),
                    )
    return None


def accepted_by(result: Verdict) -> str:
    """Who accepted a known failure, for the word before its reason: ``--accept-sdk-findings`` or the baseline."""
    return ACCEPT_FLAG if result.sdk is not None and (result.known or "").endswith(ACCEPTED) else "baseline"


def sdk_line(result: Verdict, *, short: bool = False) -> str | None:
    """What every format shows next to a failure that is an SDK's: whose, what it was seen doing, the spec clause
    and the upstream report (``short``: without what it was seen doing); ``None`` for any other result."""
    finding = result.sdk
    if finding is None:
        return None
    who = f"{finding.named} ({finding.label})" if finding.label else finding.named
    party = result.side.value if result.side.value in ("server", "client") else "peer"
    parts = [f"known in {who}, not the {party}'s own code"]
    if finding.behaviour and not short:
        parts[0] += f": {finding.behaviour}"
    if finding.clause:
        parts.append(f"spec: {finding.clause}")
    if finding.upstream:
        parts.append(f"upstream: {finding.upstream}")
    return " · ".join(parts)


def sdk_hint(report: Report) -> list[str]:
    """The line that names the flag accepting the SDK's failures; nothing when none decides the verdict."""
    counted = [result for result in report.results if result.sdk is not None and report.fail_on.decides(result)]
    if not counted or report.unjudged is not None:
        return []
    names = " and ".join(dict.fromkeys(result.sdk.named for result in counted if result.sdk is not None))
    ids = len({ident for result in counted for ident in result.requirements})
    these = "1 failure" if ids == 1 else f"{ids} failures"
    return [f"sdk findings: {these} known in {names}, not your own code; {ACCEPT_FLAG} accepts them"]
