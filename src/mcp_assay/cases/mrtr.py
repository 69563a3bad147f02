"""The ``mrtr`` cases (2026-07-28): a tool call that asks for input, and retries that are not quite right."""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = [
    "CASES",
    "MRTR_EXTRA_RESPONSES",
    "MRTR_INCOMPLETE_RETRY",
    "MRTR_MALFORMED_RESPONSES",
    "MRTR_TAMPERED_STATE",
    "WITH_CAPABILITIES",
]

declare = Declare("mrtr")

WITH_CAPABILITIES = declare(
    "with-capabilities", "MRTR-05 MRTR-06",
    sends="a tool the suite called, which answered -32021, called again declaring the capabilities it asked for",
    expects="a result, or an input_required result asking only for what the client declared",
)  # fmt: skip
MRTR_INCOMPLETE_RETRY = declare(
    "mrtr-incomplete-retry", "MRTR-12",
    sends="a retry that answers none of the input requests", expects="a new input_required result, not an error",
    judging=Judging.SELECTED,
)  # fmt: skip
MRTR_EXTRA_RESPONSES = declare(
    "mrtr-extra-responses", "MRTR-13",
    sends="a retry with an answer nobody asked for", expects="the extra key is ignored",
    judging=Judging.SELECTED,
)  # fmt: skip
MRTR_MALFORMED_RESPONSES = declare(
    "mrtr-malformed-responses", "MRTR-14",
    sends="a retry whose inputResponses is not an object", expects="-32602", invalid=True, judging=Judging.SELECTED,
)  # fmt: skip
MRTR_TAMPERED_STATE = declare(
    "mrtr-tampered-state", "MRTR-15",
    sends="a retry whose requestState was changed by one character", expects="rejected", invalid=True,
    judging=Judging.SELECTED,
)  # fmt: skip

CASES = tuple(declare.cases)
