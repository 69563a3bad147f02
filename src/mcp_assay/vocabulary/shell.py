"""Shell words that paste as themselves: on one line, with nothing invisible in them.

A replay is a command line a person copies from a terminal into a shell. :func:`shlex.quote` keeps
a line break or a control character inside single quotes, so the command spans several lines, and
a terminal may show or drop what it cannot print. Such a word is written as a bash ``$'...'``
string instead, which carries the same bytes as visible escapes; every other word is quoted as
:func:`shlex.quote` does.
"""

from __future__ import annotations

import re
import shlex

__all__ = ["one_line", "quote"]

_NOT_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff\ufffe\uffff]")
"""What a word must not hold to be pasted as it is: controls (line breaks and tabs included), the
bidirectional overrides and isolates, lone surrogates, and the two non-characters XML excludes."""
_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: str) -> bool:
    """Whether ``text`` can be printed and pasted as it is."""
    return _NOT_ONE_LINE.search(text) is None


def quote(word: str) -> str:
    """``word`` as one shell word on one line: :func:`shlex.quote`, or a ``$'...'`` string when it must be."""
    if one_line(word):
        return shlex.quote(word)
    out = []
    for char in word:
        point = ord(char)
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif 0xDC80 <= point <= 0xDCFF:  # an undecodable byte kept by surrogateescape: the byte itself
            out.append(f"\\x{point - 0xDC00:02x}")
        elif _NOT_ONE_LINE.match(char):
            out.append(f"\\x{point:02x}" if point < 0x80 else f"\\u{point:04x}")
        else:
            out.append(char)
    return "$'" + "".join(out) + "'"
