"""The ``discover`` and ``discover-last`` cases (2026-07-28): ``server/discover``, asked and asked again.

Selection (:mod:`mcp_assay.suite.selection`) sends the first discover, and one modern request
anyway when discover does not list 2026-07-28; the family asks again, and once with a version
nobody serves; ``discover-last`` asks once more after every other family.
"""

from __future__ import annotations

from mcp_assay.cases.model import Declare
from mcp_assay.vocabulary.protocol import MODERN_REVISION

__all__ = ["AGAIN", "CASES", "DISCOVER", "DISCOVER_LAST", "LATER_CASES", "TRY_MODERN", "UNSUPPORTED_VERSION"]

declare = Declare("discover")

DISCOVER = declare(
    "discover", "VER-06 VER-07 VER-08",
    sends="server/discover declaring the revision under test in _meta",
    expects="a DiscoverResult naming supportedVersions, capabilities, serverInfo and its cache hints",
)  # fmt: skip
TRY_MODERN = declare(
    "try-modern", "VER-06 VER-07 VER-09",
    sends="one 2026 list request (tools/list, or the list of a capability initialize declared) when "
    f"server/discover does not list {MODERN_REVISION}",
    expects="served with a result (2026 is then tested, and the discover exchanges judged with it), or refused",
)  # fmt: skip
AGAIN = declare(
    "again", "VER-09",
    sends="server/discover a second time, within the first answer's ttlMs",
    expects="the same supportedVersions",
)  # fmt: skip
UNSUPPORTED_VERSION = declare(
    "unsupported-version", "VER-06",
    sends="server/discover declaring 1900-01-01 in the header and in _meta",
    expects="a DiscoverResult, or -32022 (A20)",
    invalid=True, off_version=True,
)  # fmt: skip

CASES = tuple(declare.cases)

later = Declare("discover-last")

DISCOVER_LAST = later(
    "discover-last", "VER-09 VER-16",
    sends="the first server/discover asked again after every other family",
    expects="within ttlMs, the same versions and capabilities",
)  # fmt: skip

LATER_CASES = tuple(later.cases)
