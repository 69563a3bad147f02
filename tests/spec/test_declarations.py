"""Every check declares what it reads: a message check the methods it judges, a log check what it follows.

Nothing is implicit: a check that reads a message of any method, or every window, declares ``Every(reason)``.
The decorators take typed keyword arguments (``mypy --strict`` checks each declaration); leaving the declaration
out fails at import; and this test holds every registered check to one, so the dispatch index
(``tests/spec/test_dispatch.py`` proves it keeps nothing away) covers all of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import pytest

from mcp_assay.spec.checks import REGISTRY, Check, Every, log_check, message_check
from mcp_assay.spec.engine import registered_checks
from mcp_assay.vocabulary.errors import CatalogueError
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.jsonrpc import Kind


def undeclared(checks: Iterable[Check]) -> list[str]:
    """The checks among ``checks`` that do not say what they read (named, or everything with a reason)."""
    missing = []
    for check in checks:
        named = check.methods if check.scope == "message" else check.follows
        other = check.follows if check.scope == "message" else check.methods
        if other is not None:
            missing.append(f"{check.name} declares what a {check.scope} check does not read")
        elif named is None and not (check.every or "").strip():
            missing.append(f"{check.name} does not say what it reads")
        elif named is not None and (not named or check.every is not None):
            missing.append(f"{check.name} names what it reads and says it reads everything")
    return missing


def test_every_check_declares_what_it_reads() -> None:
    checks = registered_checks()
    assert len([check for check in checks if check.scope == "message"]) > 100
    assert len([check for check in checks if check.scope == "log"]) > 200
    assert undeclared(checks) == []


def test_a_check_without_its_declaration_is_caught() -> None:
    """The test above can fail: a message check and a log check stripped of what they read are both named."""
    message = next(check for check in registered_checks() if check.scope == "message" and check.methods is not None)
    log = next(check for check in registered_checks() if check.scope == "log" and check.every is not None)
    stripped = [dataclasses.replace(message, methods=None), dataclasses.replace(log, every=None)]
    assert undeclared(stripped) == [f"{check.name} does not say what it reads" for check in (message, log)]


def test_leaving_the_declaration_out_fails_at_import() -> None:
    with pytest.raises(TypeError, match="methods"):
        message_check(requirements="RPC-07", level=Level.MUST, subject="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="follows"):
        log_check(requirements="RPC-05", level=Level.MUST, subject="x")  # type: ignore[call-arg]
    with pytest.raises(CatalogueError, match="says why"):
        Every("  ")
    with pytest.raises(CatalogueError, match="reads nothing"):
        message_check(requirements="RPC-07", level=Level.MUST, subject="x", methods=())


def test_reading_everything_keeps_its_reason_and_routes_every_method() -> None:
    """``Every`` is a declaration: the check visits every method (``methods`` stays ``None`` for the index), and the
    reason is kept on the check for a reader (``mcp-assay checks`` and the docs can show it)."""
    name = "scratch_reads_every_error"

    def scratch_reads_every_error(message: object, ctx: object) -> None:
        return None

    try:
        message_check(
            requirements="RPC-07", level=Level.MUST, subject="x", kinds={Kind.ERROR}, methods=Every("any error")
        )(scratch_reads_every_error)
        check = REGISTRY[name]
        assert check.methods is None and check.every == "any error"
        message_check(requirements="RPC-07", level=Level.MUST, subject="x", methods={"tools/call"})(
            scratch_reads_every_error
        )
        assert REGISTRY[name].methods == {"tools/call"} and REGISTRY[name].every is None
    finally:
        REGISTRY.pop(name, None)
