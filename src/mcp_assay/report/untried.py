"""What a run did not try, and the one setting that tries it: the part of a first report that says where to go next.

A first run against one's own server calls what it may call on its own: tools that need no
arguments, read-only tools with plain arguments drawn from their ``inputSchema``, prompts without
required arguments, a sample of the listed resources. The rest stays unjudged, and the report must
say so where it is read first, not only under ``--show not-verified``: which tools, prompts and
resources were listed but not called (one line per kind), why, the flag or config key that calls
them, and how many requirements wait on that step. The calls made with generated arguments are
named too, with the flag that turns them off, since they are calls the user did not spell out.

The not-verified results that *need settings* are broken down by the setting they name
(:func:`settings_needed`), so "18 need settings" says which. Everything here is part of the JSON
report (``coverage``), so every writer shows the same rows (:func:`coverage_rows`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from mcp_assay.vocabulary.verdicts import Outcome, Verdict

__all__ = [
    "EXPLORE_STEP",
    "KINDS",
    "Generated",
    "Untried",
    "coverage_json",
    "generated_from_json",
    "generated_lines",
    "NEED_SETTINGS",
    "OTHER",
    "not_verified_kind",
    "coverage_rows",
    "settings_text",
    "settings_needed",
    "untried_from_json",
    "untried_lines",
]

KINDS = ("tools", "prompts", "resources")
"""The kinds of listed items, in the order their lines are printed."""
NAMES_SHOWN = 4
"""Names a line gives before ``(and N more)``."""
NAMES_KEPT = 100
"""Names an entry keeps (a server may list thousands of resources)."""
EXPLORE_STEP = "--explore"
"""The step of the read-only tools a plain run called once with generated arguments: exploring calls them many times
(on the inputSchema's edges, one constraint broken at a time). Their entry is folded into the ``generated`` line."""


@dataclass(frozen=True, slots=True)
class Untried:
    """Listed items of one kind the run did not call, get or read, for one reason, and what would."""

    kind: str
    """``tools``, ``prompts`` or ``resources``."""
    names: tuple[str, ...]
    why: str
    """Why they were not tried, as a phrase that follows their names (``need arguments``)."""
    step: str = ""
    """The flag or config key that tries them (``--generate-args forecast``); empty when no setting does."""
    requirements: tuple[str, ...] = ()
    """Requirement IDs this run left not verified for want of such a call (what the step would reach)."""
    revisions: tuple[str, ...] = ()
    """The revisions this holds in; empty: every revision the run tested."""
    count: int = 0
    """How many there are (``names`` keeps at most :data:`NAMES_KEPT`); never fewer than ``names``."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", max(self.count, len(self.names)))

    @property
    def total(self) -> int:
        return self.count

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "names": list(self.names), "requirements": list(self.requirements),
                "revisions": list(self.revisions), "count": self.total}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Generated:
    """A tool the run called with arguments it drew from the tool's ``inputSchema`` (no user gave them)."""

    tool: str
    arguments: str
    """The arguments, as compact JSON."""
    because: str
    """``readOnlyHint`` (called by default) or ``--generate-args`` (named by the user)."""
    revisions: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "revisions": list(self.revisions)}


def untried_from_json(items: Any) -> list[Untried]:
    """The ``coverage.untried`` list of a JSON report (a damaged entry is left out)."""
    found = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("kind"), str) and isinstance(item.get("why"), str):
            found.append(
                Untried(
                    kind=item["kind"],
                    names=tuple(str(name) for name in item.get("names", ())),
                    why=item["why"],
                    step=str(item.get("step", "")),
                    requirements=tuple(str(ident) for ident in item.get("requirements", ())),
                    revisions=tuple(str(name) for name in item.get("revisions", ())),
                    count=item["count"] if isinstance(item.get("count"), int) else 0,
                )
            )
    return found


def generated_from_json(items: Any) -> list[Generated]:
    """The ``coverage.generated`` list of a JSON report (a damaged entry is left out)."""
    found = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("tool"), str):
            found.append(
                Generated(
                    tool=item["tool"],
                    arguments=str(item.get("arguments", "")),
                    because=str(item.get("because", "")),
                    revisions=tuple(str(name) for name in item.get("revisions", ())),
                )
            )
    return found


# -- the settings the not-verified results need ----------------------------------------------------
_SETTINGS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), label)
    for pattern, label in (
        (r"--failing-tool", "--failing-tool"),
        (r"--tool-args|--generate-args", "--tool-args or --generate-args"),
        (r"--prompt-args", "--prompt-args"),
        (r"rate_limit_probe", "rate_limit_probe in --config"),
        (r"`stub`|stand-in authorization server|\bstub\.", "stub section in --config"),
        (r"write_tools|principals|witness|behaviour", "behaviour sections in --config"),
        (r"--serve\b", "--serve"),
        (r"--explore", "--explore"),
        (r"--config|config file", "--config"),
    )
)
"""What a not-verified reason asks for, by the first setting it names (the reasons are mcp-assay's own words)."""
NEED_SETTINGS = "need settings"
_NOT_VERIFIED_KINDS = (
    (re.compile(r" (?:observed|appears) in the traffic"), "not seen in the traffic"),
    (
        re.compile(r"--config|--failing-tool|--tool-args|--serve\b|`stub`|config file|configured|opt-in"),
        NEED_SETTINGS,
    ),  # fmt: skip
    (re.compile(r"^(?:the server lists no |no listed |no tool |no write tool )"), "nothing on the server to try"),
)
"""What most not-verified reasons come down to, by their wording (a reason matching none counts as other)."""
OTHER = "other"
OTHER_SETTINGS = "other settings"


def not_verified_kind(result: Verdict) -> str:
    """What a not-verified result's reason comes down to: the counts line's kinds (``need settings`` …)."""
    if result.blocked_by:
        return "blocked by an earlier failure"
    reason = " ".join(result.reason.split())
    for pattern, kind in _NOT_VERIFIED_KINDS:
        if pattern.search(reason):
            return kind
    if reason.startswith("not run: "):
        return "not run: " + re.split(r" \(|; |: ", reason.removeprefix("not run: "), maxsplit=1)[0]
    return OTHER


def _setting(reason: str) -> str:
    for pattern, label in _SETTINGS:
        if pattern.search(reason):
            return label
    return OTHER_SETTINGS


def settings_needed(results: Iterable[Verdict]) -> list[tuple[str, list[str], int]]:
    """The not-verified results that need a setting, by the setting they name: (setting, requirement IDs, results),
    the setting reaching most results first."""
    found: dict[str, tuple[dict[str, None], list[int]]] = {}
    for result in results:
        if result.outcome is not Outcome.NOT_VERIFIED or not_verified_kind(result) != NEED_SETTINGS:
            continue
        ids, count = found.setdefault(_setting(" ".join(result.reason.split())), ({}, [0]))
        ids.update(dict.fromkeys(result.requirements))
        count[0] += 1
    ranked = sorted(found.items(), key=lambda item: (-item[1][1][0], item[0] == OTHER_SETTINGS, item[0]))
    return [(setting, list(ids), count[0]) for setting, (ids, count) in ranked]


def settings_text(results: Sequence[Verdict]) -> str:
    """``--failing-tool for 2 (TOOL-15); rate_limit_probe in --config for 2 (BEH-11)``: the settings the
    not-verified results need, each with how many it would reach; ``""`` when none does."""
    parts = []
    for setting, ids, count in settings_needed(results):
        shown = ", ".join(ids[:3]) + (", …" if len(ids) > 3 else "")
        parts.append(f"{setting} for {count}" + (f" ({shown})" if shown else ""))
    return "; ".join(parts)


def coverage_rows(
    untried: Sequence[Untried], generated: Sequence[Generated], results: Sequence[Verdict]
) -> list[tuple[str, str]]:
    """(label, text) rows every human format shows near the top: the calls made with generated arguments, one
    row per kind of item not tried, and the settings the not-verified results need."""
    rows = [("generated", line) for line in generated_lines(generated, untried)]
    rows += [("not tried", f"{kind}: {text}") for kind, text in untried_lines(untried)]
    needed = settings_text([result for result in results if result.outcome is Outcome.NOT_VERIFIED])
    if needed:
        rows.append(("settings", f"needed by not-verified results: {needed}"))
    return rows


# -- the lines every writer shows ------------------------------------------------------------------
def _names(names: Sequence[str], total: int) -> str:
    shown = ", ".join(names[:NAMES_SHOWN])
    return shown + (f" (and {total - NAMES_SHOWN} more)" if total > NAMES_SHOWN else "")


def _where(revisions: Sequence[str]) -> str:
    return f" (in {', '.join(revisions)})" if revisions else ""


def untried_lines(untried: Sequence[Untried]) -> list[tuple[str, str]]:
    """One ``(kind, text)`` per kind that has items the run did not try: names, why, the step, and (after the first
    step that would make the missing call) how many requirements wait on it."""
    lines = []
    for kind in [*KINDS, *sorted({item.kind for item in untried} - set(KINDS))]:
        items = [item for item in untried if item.kind == kind and item.step != EXPLORE_STEP]
        if not items:
            continue
        parts = []
        counted: set[str] = set()
        for item in items:
            text = f"{_names(item.names, item.total)} {item.why}{_where(item.revisions)}"
            text = f"{text}: {item.step}" if item.step else text
            reached = [ident for ident in dict.fromkeys(item.requirements) if ident not in counted]
            if reached:
                counted.update(reached)
                noun = "requirement waits" if len(reached) == 1 else "requirements wait"
                shown = ", ".join(reached[:4]) + (", …" if len(reached) > 4 else "")
                text += f" — {len(reached)} {noun} on such a call ({shown})"
            parts.append(text)
        lines.append((kind, "; ".join(parts)))
    return lines


def generated_lines(generated: Sequence[Generated], untried: Sequence[Untried] = ()) -> list[str]:
    """The calls made with generated arguments, read-only ones with the flag that turns them off (and, when the run
    did not explore them, the flag that calls them many times); ``[]`` for none."""
    if not generated:
        return []
    by_default = [item for item in generated if item.because == "readOnlyHint"]
    named = [item for item in generated if item.because != "readOnlyHint"]
    lines = []
    if by_default:
        calls = ", ".join(f"{item.tool} {item.arguments}{_where(item.revisions)}" for item in by_default[:NAMES_SHOWN])
        more = f" (and {len(by_default) - NAMES_SHOWN} more)" if len(by_default) > NAMES_SHOWN else ""
        unexplored = {name for item in untried if item.step == EXPLORE_STEP for name in item.names}
        explore = f" ({EXPLORE_STEP} tries many)" if any(item.tool in unexplored for item in by_default) else ""
        lines.append(
            f"{calls}{more} — annotated readOnlyHint, so called with plain arguments drawn from the inputSchema"
            f"{explore}; --no-generate-args-read-only turns this off"
        )
    if named:
        calls = ", ".join(f"{item.tool} {item.arguments}{_where(item.revisions)}" for item in named[:NAMES_SHOWN])
        more = f" (and {len(named) - NAMES_SHOWN} more)" if len(named) > NAMES_SHOWN else ""
        lines.append(f"{calls}{more} — arguments drawn from the inputSchema, as --generate-args asks")
    return lines


def coverage_json(
    untried: Sequence[Untried], generated: Sequence[Generated], results: Sequence[Verdict]
) -> dict[str, Any]:
    """The JSON report's ``coverage``: the calls made with generated arguments, what was not tried, and the settings
    the not-verified results need (``settings`` is derived from the results, and read back from them)."""
    return {
        "generated": [item.to_json() for item in generated],
        "untried": [item.to_json() for item in untried],
        "settings": [
            {"setting": setting, "requirements": ids, "results": count}
            for setting, ids, count in settings_needed(results)
        ],
    }
