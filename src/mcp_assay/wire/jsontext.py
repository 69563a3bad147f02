"""JSON text read and written fast, with the standard library's reading as the reference.

Every message and every recording record is JSON, and reading it is a fixed share of what judging
costs. ``msgspec`` parses it several times faster than :mod:`json`, but it reads a few things
differently: it keeps the last of two equal keys without saying so, refuses integers longer than
4,300 digits and numbers past the float range, and nests one level deeper. So the fast reader is
trusted only where it provably reads what :func:`json.loads` reads; everywhere else (an error of any
kind, a message that might hold a duplicate key, a value nested near the parser's limit) the caller
takes the standard library's path, which decides exactly as it always did, nesting limit included
(:data:`mcp_assay.wire.jsonrpc.LIMIT`).

One limit of the standard library is not kept: Python refuses to convert an integer's text longer
than ``sys.get_int_max_str_digits()`` (4,300 digits) to an ``int``, yet such a number is valid JSON
a peer may send anywhere (an id, a member of ``_meta``). A reader that gave up there would turn
one number into a message nobody judges, so both readers here read it as a :class:`LongInteger`.

A value read by the fast reader is *clean*: valid Unicode, finite numbers. ``msgspec`` writes such a
value as the same JSON text whatever the value's origin, so :func:`fingerprint` can key caches by it;
a value that is not clean (a lone surrogate, ``inf`` from ``1e400``) gets ``None``.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from functools import cache
from typing import Any, Final

import msgspec

__all__ = [
    "NESTING_CHECKED",
    "LongInteger",
    "UNSETTLED",
    "decode_message",
    "dumps_line",
    "dumps_lines",
    "fingerprint",
    "is_clean",
    "is_unicode",
    "loads",
    "parse_integer",
]

_decoder: Final = msgspec.json.Decoder()
_encoder: Final = msgspec.json.Encoder()
_BOM: Final = b"\xef\xbb\xbf"
UNSETTLED: Final = object()
"""What :func:`decode_message` returns when the bytes must be read the standard library's way."""
NESTING_CHECKED: Final = 1000
"""Nesting up to which the fast reader's value is taken as is; the standard library reads about 1,500
levels and ``msgspec`` one more, so a value nested deeper is read again the standard library's way."""


@cache
def _largest_written(limit: int) -> int:
    """The largest integer Python still writes as text under a digit limit of ``limit``."""
    largest: int = 10**limit - 1
    return largest


class LongInteger(int):
    """A JSON integer longer than Python converts from text (``sys.get_int_max_str_digits()`` digits).

    Its text is kept whole: ``str``, ``repr``, equality, hashing and order between two long integers use
    it, so a long id is matched with the same long id and no other. As a number it stands at the largest
    value of its sign Python still writes (``±(10**limit - 1)``): it is an integer to every type check and
    schema, it compares with every shorter number as the real one does, and a writer that asks the
    ``int`` itself for its digits (:func:`json.dumps`) gets that stand-in, never an exception."""

    text: str

    def __new__(cls, text: str) -> LongInteger:
        bound = _largest_written(sys.get_int_max_str_digits() or 4300)
        value = super().__new__(cls, -bound if text.startswith("-") else bound)
        value.text = text
        return value

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return self.text if not spec else super().__format__(spec)

    def __reduce__(self) -> tuple[type[LongInteger], tuple[str]]:
        return (LongInteger, (self.text,))

    def __hash__(self) -> int:
        return hash(self.text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LongInteger) and other.text == self.text

    def __ne__(self, other: object) -> bool:
        return not self == other

    def _key(self) -> tuple[int, int, str]:
        """Orders long integers as numbers: by sign, then length, then digits (reversed below zero)."""
        if self.text.startswith("-"):
            return (-1, -len(self.text), "".join(chr(ord("9") + ord("0") - ord(c)) for c in self.text[1:]))
        return (1, len(self.text), self.text)

    def __lt__(self, other: object) -> bool:
        return self._key() < other._key() if isinstance(other, LongInteger) else super().__lt__(other)  # type: ignore[operator]

    def __le__(self, other: object) -> bool:
        return self._key() <= other._key() if isinstance(other, LongInteger) else super().__le__(other)  # type: ignore[operator]

    def __gt__(self, other: object) -> bool:
        return self._key() > other._key() if isinstance(other, LongInteger) else super().__gt__(other)  # type: ignore[operator]

    def __ge__(self, other: object) -> bool:
        return self._key() >= other._key() if isinstance(other, LongInteger) else super().__ge__(other)  # type: ignore[operator]


def parse_integer(text: str) -> int:
    """An integer's JSON text as an ``int``; a :class:`LongInteger` past the digits Python converts."""
    limit = sys.get_int_max_str_digits()
    if limit and len(text) - text.startswith("-") > limit:
        return LongInteger(text)
    return int(text)


def _depth(value: Any) -> int:
    """How deep containers nest in ``value`` (1 for a flat object or array)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def _shallow(data: bytes | str, value: Any) -> bool:
    """Whether ``value`` nests no deeper than :data:`NESTING_CHECKED` (counted only when its text could)."""
    if len(data) <= NESTING_CHECKED:  # too short to open that many brackets
        return True
    if isinstance(data, str):
        brackets = data.count("[") + data.count("{")
    else:
        brackets = data.count(b"[") + data.count(b"{")
    return brackets <= NESTING_CHECKED or _depth(value) <= NESTING_CHECKED


def loads(text: bytes | str) -> Any:
    """``json.loads(text)``, read by ``msgspec`` wherever it reads the same value.

    Raises what :func:`json.loads` raises (``ValueError``, ``RecursionError``) for text it refuses, but
    reads an integer longer than Python converts as a :class:`LongInteger`."""
    try:
        value = _decoder.decode(text)
    except Exception:  # msgspec's errors, and the UnicodeEncodeError of text with lone surrogates
        return json.loads(text, parse_int=parse_integer)
    return value if _shallow(text, value) else json.loads(text)


def decode_message(data: bytes) -> Any:
    """The value of one message's bytes when the fast reader settles it, else :data:`UNSETTLED`.

    Settled means: valid UTF-8 without a byte-order mark, JSON the standard library reads to the same
    value, no duplicate key, nesting within :data:`NESTING_CHECKED`. A duplicate key is ruled out by
    counting colons: outside strings a colon only separates a key from its value, and ``msgspec``
    writes every string's colons as they are, so the value written back has as many colons as the
    bytes exactly when no member was dropped (text escaping a colon as ``\\u003a`` is read the slow
    way)."""
    if data.startswith(_BOM):
        return UNSETTLED
    try:
        value = _decoder.decode(data)
    except Exception:
        return UNSETTLED
    if isinstance(value, _CONTAINERS):
        if b"\\u003" in data or _encoder.encode(value).count(b":") != data.count(b":"):
            return UNSETTLED
        if len(data) > NESTING_CHECKED and not _shallow(data, value):  # (shorter data cannot nest that deep)
            return UNSETTLED
    return value


_CONTAINERS: Final = (dict, list)
"""A tuple, not ``dict | list``: ``isinstance`` takes a tuple's types without asking the union."""


def fingerprint(value: Any) -> bytes | None:
    """Compact JSON text that tells clean values apart (see the module); ``None`` for any other value.

    ``msgspec`` writes ``inf`` and ``nan`` as ``null``, so a text holding ``null`` is trusted only once
    the standard library, which refuses non-finite numbers, has written the value too."""
    try:
        text = _encoder.encode(value)
    except Exception:  # a lone surrogate, an object JSON has no text for
        return None
    if b"null" in text:
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            return None
    return text


def is_unicode(text: str) -> bool:
    """Whether a string is valid Unicode (no lone surrogate): what UTF-8 can carry."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_clean(value: Any) -> bool:
    """Whether nested JSON data can be written into a report: valid Unicode strings, finite numbers."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not is_unicode(item):
                return False
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def dumps_line(value: Any) -> bytes:
    """``value`` as one line of JSON text and its newline, read back by :func:`loads` as ``value``.

    ``msgspec`` writes it unless the value holds a lone surrogate (written as the surrogate's bytes, which
    :func:`json.loads` reads back) or a non-finite number (``msgspec`` would write ``null``): those the
    standard library writes, as it always did."""
    try:
        text = _encoder.encode(value)
    except Exception:
        text = b""
    if not text or (b"null" in text and not is_clean(value)):
        return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"
    return text + b"\n"


def dumps_lines(values: Sequence[Any]) -> bytes:
    """:func:`dumps_line` of each value, joined: the same bytes from one call to ``msgspec`` for them all.

    The proxy writes every record it hands the judging worker, in batches (:mod:`mcp_assay.addon.feeder`);
    written together, a small record costs a quarter of what it costs alone. A batch ``msgspec`` cannot write,
    or whose text holds ``null`` where a value is not clean, is written value by value, as :func:`dumps_line`
    writes each; a value that is not JSON data raises as it does there."""
    try:
        text = _encoder.encode_lines(values)
    except Exception:
        return b"".join(map(dumps_line, values))
    if b"null" in text and not all(map(is_clean, values)):
        return b"".join(map(dumps_line, values))
    return text
