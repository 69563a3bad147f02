"""The ``resources`` cases: the lists, reads of listed resources, subscriptions (2025) and the error paths."""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = [
    "CASES",
    "LIST",
    "LIST_AGAIN",
    "MALFORMED_URI",
    "MISSING_RESOURCE",
    "READ",
    "SUBSCRIBE",
    "TEMPLATES",
    "UNSUBSCRIBE",
]

declare = Declare("resources")

LIST = declare(
    "list", "RSRC-01 RSRC-02 RSRC-04 RSRC-07",
    sends="resources/list, following nextCursor to the end", expects="the resources, matching the schema", paged=True,
)  # fmt: skip
TEMPLATES = declare(
    "templates", "RSRC-11",
    sends="resources/templates/list, following nextCursor to the end", expects="templates matching the schema",
    paged=True,
)  # fmt: skip
LIST_AGAIN = declare(
    "list-again", "RSRC-03",
    sends="resources/list walked again, on a new connection over HTTP (2026)", expects="the same resources",
    paged=True, needs=LIST,
)  # fmt: skip
READ = declare(
    "read", "RSRC-05 RSRC-06 RSRC-07 RSRC-10 RSRC-14",
    sends="resources/read of listed resources (at most --resource-sample)", expects="contents matching the schema",
    needs=LIST,
)  # fmt: skip
SUBSCRIBE = declare(
    "subscribe", "SUB-17",
    sends="resources/subscribe to the first listed resource (2025, where subscribe is advertised)",
    expects="an empty result", needs=LIST,
)  # fmt: skip
UNSUBSCRIBE = declare(
    "unsubscribe", "SUB-17", sends="resources/unsubscribe of the same resource", expects="an empty result",
    needs=LIST,
)  # fmt: skip
MISSING_RESOURCE = declare(
    "missing-resource", "RSRC-08 RSRC-09",
    sends="resources/read of a file:// URI that does not exist",
    expects="an error (-32602 in 2026), never empty contents", invalid=True, judging=Judging.SELECTED,
)  # fmt: skip
MALFORMED_URI = declare(
    "malformed-uri", "RSRC-12",
    sends='resources/read of "not a uri"', expects="a JSON-RPC error, not a read", invalid=True,
    judging=Judging.SELECTED,
)  # fmt: skip

CASES = tuple(declare.cases)
