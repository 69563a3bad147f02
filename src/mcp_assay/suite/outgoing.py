"""Every message the suite sends is checked against the revision's schema before it leaves.

A conformance suite that sends a malformed request and then blames the server for refusing it
files a false failure. So each outgoing message is validated against the schema of the revision
it claims, unless the probe is deliberately invalid (and says so in its tag). A message of the
suite's own making that fails validation is a defect of the suite: the probe stops and its cases
are reported *not verified* as a harness error, never as a failure of the server.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_assay.spec.revisions import Revision
from mcp_assay.spec.rules.shared.common import issues_text
from mcp_assay.vocabulary.errors import HarnessError
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import parse_message

__all__ = ["encode", "validate_outgoing"]


def encode(payload: Any) -> bytes:
    """The compact UTF-8 JSON the suite puts on the wire."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def validate_outgoing(revision: Revision, body: bytes, *, invalid: bool) -> str | None:
    """The schema definition a message meant to be valid matched (``None`` for a probe malformed on
    purpose, which is sent unchecked); :class:`HarnessError` if it does not match ``revision``'s schema."""
    if invalid:
        return None
    message = parse_message(body, sender=Side.CLIENT, time=0.0)
    if message.problems:
        details = "; ".join(problem.detail for problem in message.problems)
        raise HarnessError(f"the suite built a malformed message ({details})")
    validation = revision.validator.validate(message)
    if not validation.ok:
        raise HarnessError(
            f"the suite's own {message.describe()} does not match {validation.definition} "
            f"({revision.name}): {issues_text(validation.issues)}"
        )
    if validation.note:
        raise HarnessError(f"the suite's own {message.describe()} is not valid for {revision.name}: {validation.note}")
    return validation.definition
