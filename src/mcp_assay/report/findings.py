"""The short id every report prints for a finding, and finding one again by it.

Tool-defined. A finding is a result that failed (at any grade): one check's verdict from one source,
in one revision when a run tested several. Its id is the first seven hex digits of the SHA-256 of
that identity, the same identity SARIF's partial fingerprint hashes, so it is stable: the same
check failing the same way in a later run of the same target has the same id, and a report
re-rendered or merged by ``mcp-assay report`` prints it unchanged. ``mcp-assay replay REPORT ID``
takes it back (or a longer prefix of the fingerprint, a requirement ID, or a check name that names
one finding alone).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from mcp_assay.vocabulary.verdicts import Outcome, Verdict

__all__ = ["ID_LENGTH", "finding_fingerprint", "finding_id", "matching"]

ID_LENGTH = 7
"""Hex digits of a finding's id (git's short hash length: unique among a report's few hundred results)."""
_SHORTEST_PREFIX = 4


def finding_fingerprint(result: Verdict) -> str:
    """The SHA-256 of a result's identity: its check, its source, its revision when it has one, and the party at
    fault when a gateway stood between the peers (the same check failed by the gateway and by the upstream is two
    findings)."""
    identity = f"{result.check}\n{result.source.value}" + (f"\n{result.revision}" if result.revision else "")
    identity += f"\n{result.party.value}" if result.party is not None else ""
    return hashlib.sha256(identity.encode()).hexdigest()


def finding_id(result: Verdict) -> str:
    """The short id reports print for ``result``."""
    return finding_fingerprint(result)[:ID_LENGTH]


def matching(results: Iterable[Verdict], wanted: str) -> list[Verdict]:
    """The findings (failed results) ``wanted`` names: by id or a prefix of its fingerprint (at least four
    digits), else by requirement ID or check name."""
    failed = [result for result in results if result.outcome is Outcome.FAILED]
    key = wanted.strip().lower()
    if len(key) >= _SHORTEST_PREFIX and all(char in "0123456789abcdef" for char in key):
        found = [result for result in failed if finding_fingerprint(result).startswith(key)]
        if found:
            return found
    by_name = [result for result in failed if result.check == wanted.strip()]
    if by_name:
        return by_name
    return [result for result in failed if key.upper() in (ident.upper() for ident in result.requirements)]
