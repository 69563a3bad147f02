"""The fast JSON reader reads what the standard library reads, limits and defects included.

Tool-defined: mcp-assay reads messages and recording records with ``msgspec`` where that provably
gives the standard library's value, and falls back to :func:`json.loads` (and
:func:`mcp_assay.wire.jsonrpc.read_json`, which names each defect) everywhere else. These tests hold the
two to the same answer on every message and record in tests/data, on the edges where the parsers
differ, and on generated text.
"""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_assay.recording.records import read_recording
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire import jsontext
from mcp_assay.wire.jsonrpc import LIMIT, MISSING, Kind, parse_message, read_json

RECORDINGS = sorted((Path(__file__).parent / "data" / "recordings").glob("*.jsonl"))


def same(left: Any, right: Any) -> bool:
    """Equal as JSON values *and* as Python types (``1``, ``1.0`` and ``True`` differ), key order included."""
    pending = [(left, right)]
    while pending:
        one, other = pending.pop()
        if type(one) is not type(other):
            return False
        if isinstance(one, dict):
            if list(one) != list(other):
                return False
            pending.extend((one[key], other[key]) for key in one)
        elif isinstance(one, list):
            if len(one) != len(other):
                return False
            pending.extend(zip(one, other, strict=True))
        elif isinstance(one, float):
            if not (math.isnan(one) and math.isnan(other)) and (
                one != other or math.copysign(1, one) != math.copysign(1, other)
            ):
                return False
        elif one != other:
            return False
    return True


def assert_loads_as_reference(text: str | bytes) -> None:
    """``jsontext.loads`` returns what ``json.loads`` returns (integers past Python's digit limit read as
    :class:`~mcp_assay.wire.jsontext.LongInteger`), or raises what it raises."""
    try:
        expected: Any = json.loads(text, parse_int=jsontext.parse_integer)
    except (ValueError, RecursionError) as exc:
        with pytest.raises(type(exc)):
            jsontext.loads(text)
    else:
        assert same(jsontext.loads(text), expected)


def assert_reads_as_reference(data: bytes) -> None:
    message = parse_message(data, sender=Side.SERVER, time=0.0)
    payload, problems = read_json(data)
    assert same(message.payload, payload) if payload is not MISSING else message.payload is MISSING
    assert [problem for problem in message.problems if problem.code != "shape"] == list(problems)


def recorded_messages() -> list[bytes]:
    return [
        message.raw for path in RECORDINGS for exchange in read_recording(path).log for message in exchange.messages
    ]


def test_the_recordings_hold_messages_to_compare() -> None:
    assert len(RECORDINGS) >= 6
    assert len(recorded_messages()) > 400


def test_every_recorded_message_reads_as_the_standard_library_reads_it() -> None:
    raws = recorded_messages()
    for raw in raws:
        assert_reads_as_reference(raw)
    settled = [raw for raw in raws if jsontext.decode_message(raw) is not jsontext.UNSETTLED]
    assert len(settled) > 0.9 * len(raws)  # the fast reader does read them: this is no test of the fallback alone


def test_every_recorded_record_reads_as_the_standard_library_reads_it() -> None:
    for path in RECORDINGS:
        for line in path.read_text(encoding="utf-8", errors="surrogateescape").splitlines():
            if line.strip():
                assert_loads_as_reference(line)


DIGITS = "7" * 4300
EDGES = {
    "duplicate key": b'{"jsonrpc":"2.0","id":1,"id":2,"result":{}}',
    "duplicate key, colons in strings": b'{"a":"x:y:z","a":"q","b":"::"}',
    "duplicate key behind escaped colons": b'{"a":"\\u003a\\u003a","a":1}',
    "escaped colon, no duplicate": b'{"a\\u003A":1}',
    "NaN": b'{"jsonrpc":"2.0","id":1,"result":{"v":NaN}}',
    "Infinity": b"[Infinity, -Infinity]",
    "past the float range": b'{"jsonrpc":"2.0","id":1,"result":{"v":1e400}}',
    "64-bit edge": b"[18446744073709551615, 18446744073709551616, -9223372036854775809]",
    "long integer": b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}',
    "4300 digits": b"[" + DIGITS.encode() + b"]",
    "4301 digits": b"[" + DIGITS.encode() + b"7]",
    "lone high surrogate": b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
    "lone low surrogate": b'["\\udc00x"]',
    "surrogate pair": b'["\\ud83d\\ude00"]',
    "high surrogate then letter": b'["\\ud83d\\u0041"]',
    "encoded surrogate": b'["\xed\xa0\x80"]',
    "invalid UTF-8": b'{"jsonrpc":"2.0","id":1,"method":"\xff"}',
    "byte-order mark": b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}',
    "control character": b'["a\x01b"]',
    "trailing comma": b'{"a":1,}',
    "null": b"null",
    "empty": b"",
    "whitespace": b' \r\n\t{"a" : [ 1 , 2.5e3 , -0.0 , -0 ] }\n',
    "smallest float": b"[4.9e-324, 2.2250738585072011e-308, 1e-400]",
}
DEPTHS = (999, 1000, 1001, 1200, 1496, 1497, 1498, 1499, 1500, 5000)


@pytest.mark.parametrize("data", list(EDGES.values()), ids=list(EDGES))
def test_edges_where_the_parsers_differ_read_as_the_standard_library_reads_them(data: bytes) -> None:
    assert_reads_as_reference(data)
    assert_loads_as_reference(data.decode("utf-8", "surrogateescape"))  # a record line, read as recordings are


@pytest.mark.parametrize("depth", DEPTHS)
def test_nesting_is_read_as_deep_as_the_standard_library_reads_it(depth: int) -> None:
    """Tool-defined: a message nested past what the standard library reads stays a limit of the tool."""
    data = b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * depth + b"]" * depth + b"}"
    assert_reads_as_reference(data)
    message = parse_message(data, sender=Side.SERVER, time=0.0)
    if depth == 5000:
        assert message.kind is Kind.UNPARSEABLE and message.problems[0].code == LIMIT
    assert_loads_as_reference("[" * depth + "]" * depth)


def test_an_integer_past_pythons_digit_limit_is_read_with_its_text_whole() -> None:
    """Issue 28: 4,301 digits are valid JSON; the message is read (never a limit of the tool), the long
    integer keeps its text, is an integer to every type check, and equals only the same long integer."""
    for digits in (4300, 4301, 20_000):
        text = "7" * digits
        raw = b'{"jsonrpc":"2.0","id":' + text.encode() + b',"result":{}}'
        message = parse_message(raw, sender=Side.SERVER, time=0)
        assert message.kind is Kind.RESULT and message.problems == (), message.problems
        assert isinstance(message.id, int) and str(message.id) == text and f"{message.id}" == text
        assert message.id_key == ("int", message.id) and message.id_key != ("int", 7)
        assert f"({digits} digits)" in message.describe() and len(message.describe()) < 80
    long = jsontext.loads("[" + "7" * 4301 + ", -" + "7" * 4301 + "]")
    assert isinstance(long[0], jsontext.LongInteger) and long[0] == jsontext.LongInteger("7" * 4301)
    assert long[0] != jsontext.LongInteger("7" * 4302) and long[0] != 7 and long[0] > 10**300 > long[1]
    assert jsontext.LongInteger("7" * 4302) > long[0] > jsontext.LongInteger("6" + "9" * 4300)
    assert jsontext.LongInteger("-" + "7" * 4302) < long[1] < jsontext.LongInteger("-" + "6" * 4301)
    assert long[0] < 1e308 * 10  # inf
    assert len({long[0], jsontext.LongInteger("7" * 4301), long[1]}) == 2
    assert json.loads(json.dumps(long)) == [10**4300 - 1, -(10**4300 - 1)]  # the stand-in, never an exception
    assert pickle.loads(pickle.dumps(long[0])) == long[0]


def test_a_duplicate_key_is_named_whichever_reader_saw_it_first() -> None:
    message = parse_message(EDGES["duplicate key, colons in strings"], sender=Side.SERVER, time=0.0)
    assert [problem.code for problem in message.problems][:1] == ["duplicate-keys"]
    assert message.payload == {"a": "q", "b": "::"}


def test_the_fingerprint_tells_clean_values_apart_and_refuses_the_rest() -> None:
    assert jsontext.fingerprint({"a": [1, 1.0, True, None, "x"]}) == b'{"a":[1,1.0,true,null,"x"]}'
    assert jsontext.fingerprint(1) != jsontext.fingerprint(1.0) != jsontext.fingerprint(True)
    assert jsontext.fingerprint({"v": math.inf}) is None  # msgspec would write null
    assert jsontext.fingerprint({"v": math.nan, "w": None}) is None
    assert jsontext.fingerprint(["\ud800"]) is None
    assert jsontext.fingerprint(10**40) == str(10**40).encode()


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.characters() | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=12),
)  # fmt: skip
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=values, indent=st.sampled_from([None, 0, 2]), duplicate=st.booleans(), escape=st.booleans())
def test_generated_json_reads_as_the_standard_library_reads_it(
    value: Any, indent: int | None, duplicate: bool, escape: bool
) -> None:
    text = json.dumps({"jsonrpc": "2.0", "id": 1, "result": value}, indent=indent, ensure_ascii=escape)
    if duplicate:
        text = text[:-1].rstrip() + ', "id": "again"}'
    data = text.encode("utf-8", "surrogatepass")
    assert_reads_as_reference(data)
    assert_loads_as_reference(text)


_BATCHES = {
    "clean records": [{"type": "end", "x": "a", "t": 1.5, "reason": "complete", "detail": ""}, {"n": [1, "é", None]}],
    "a body that says null": [{"type": "body", "x": "a", "body": '{"jsonrpc":"2.0","id":null}'}, {"n": 1}],
    "a lone surrogate": [{"n": 1}, {"text": "a\udc80b"}, {"n": 2}],
    "a number past the float range": [{"n": 1}, {"t": math.inf}, {"t": -math.inf, "v": None}],
    "not a number": [{"t": math.nan}],
    "nothing": [],
}


@pytest.mark.parametrize("values", list(_BATCHES.values()), ids=list(_BATCHES))
def test_a_batch_is_written_as_its_values_are_written_one_by_one(values: list[Any]) -> None:
    assert jsontext.dumps_lines(values) == b"".join(jsontext.dumps_line(value) for value in values)


def test_a_batch_with_a_value_that_is_not_json_data_raises_as_the_value_alone_does() -> None:
    with pytest.raises(TypeError):
        jsontext.dumps_line({"n": object()})
    with pytest.raises(TypeError):
        jsontext.dumps_lines([{"n": 1}, {"n": object()}])
