"""Parsing bytes into JSON-RPC messages never raises; defects become problems."""

from __future__ import annotations

from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, id_key, parse_message


def parse(raw: bytes) -> object:
    return parse_message(raw, sender=Side.SERVER, time=0.0)


def test_members_decide_the_kind() -> None:
    cases = {
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}': Kind.REQUEST,
        b'{"jsonrpc":"2.0","method":"notifications/progress"}': Kind.NOTIFICATION,
        b'{"jsonrpc":"2.0","id":1,"result":{}}': Kind.RESULT,
        b'{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}': Kind.ERROR,
        b'[{"jsonrpc":"2.0","id":1,"method":"a"}]': Kind.BATCH,
        b'{"jsonrpc":"2.0","id":1,"result":{},"error":{}}': Kind.INVALID,
        b'{"jsonrpc":"2.0","result":{}}': Kind.INVALID,
        b'"hello"': Kind.INVALID,
        b'{"jsonrpc":"2.0","id":1,': Kind.UNPARSEABLE,
    }
    for raw, kind in cases.items():
        assert parse_message(raw, sender=Side.CLIENT, time=0.0).kind is kind, raw


def test_duplicate_keys_invalid_utf8_and_nan_are_problems_not_exceptions() -> None:
    duplicated = parse_message(b'{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}', sender=Side.CLIENT, time=0.0)
    assert [p.code for p in duplicated.problems] == ["duplicate-keys"]
    assert duplicated.id == 2
    latin = parse_message(b'{"jsonrpc":"2.0","id":1,"method":"caf\xe9"}', sender=Side.CLIENT, time=0.0)
    assert "encoding" in [p.code for p in latin.problems]
    nan = parse_message(b'{"jsonrpc":"2.0","id":NaN,"method":"x"}', sender=Side.CLIENT, time=0.0)
    assert nan.kind is Kind.UNPARSEABLE
    assert nan.payload is MISSING


def test_ids_keep_their_json_type() -> None:
    """Spec-mandated (A29): 1 and "1" are different ids, and 1.0 is not 1."""
    assert id_key(1) != id_key("1")
    assert id_key(1) != id_key(1.0)
    assert id_key(True) != id_key(1)
    assert id_key(MISSING) is None


DEEP = b'{"jsonrpc":"2.0","id":1,"result":{"v":' + b"[" * 5000 + b"]" * 5000 + b"}}"
LONG_ID = b'{"jsonrpc":"2.0","id":' + b"7" * 5000 + b',"result":{}}'


def test_a_limit_of_the_parser_is_its_own_problem_not_a_syntax_error() -> None:
    """Tool-defined: valid JSON nested 5,000 deep is beyond what Python's parser reads; that is the
    tool's limit (problem ``limit``), never the peer's invalid JSON. A 5,000-digit integer is read (issue 28)."""
    message = parse_message(DEEP, sender=Side.SERVER, time=0.0)
    assert message.kind is Kind.UNPARSEABLE and message.payload is MISSING
    assert [p.code for p in message.problems] == ["limit"], message.problems
    assert "mcp-assay" in message.problems[0].detail
    long = parse_message(LONG_ID, sender=Side.SERVER, time=0.0)
    assert long.kind is Kind.RESULT and long.problems == () and str(long.id) == "7" * 5000
    assert [p.code for p in parse_message(b'{"id": 1,', sender=Side.SERVER, time=0.0).problems] == ["syntax"]
