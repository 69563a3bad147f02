"""Shell words that paste as themselves (tool-defined, issue 19): one line, nothing invisible, same bytes."""

from __future__ import annotations

import shlex
import subprocess

from mcp_assay.vocabulary.shell import one_line, quote

WORDS = [
    "plain",
    "it's got 'quotes' and $dollars `ticks` \\ backslashes",
    '{"jsonrpc":"2.0",\n"id":1}',
    "tab\there, cr\r there",
    "escape \x1b[2J and bell \x07 and nul-free C1 \x85",
    "bidi \u202e override and \u2066 isolate",
    "ünïcödé stays as it is",
]


def test_a_word_that_pastes_as_it_is_is_quoted_as_shlex_does() -> None:
    assert quote("plain") == shlex.quote("plain")
    assert quote("it's") == shlex.quote("it's")
    assert one_line("ünïcödé") and not one_line("a\nb") and not one_line("\u202e")


def test_every_word_is_one_visible_line_that_bash_reads_back_exactly() -> None:
    quoted = [quote(word) for word in WORDS]
    for word in quoted:
        assert one_line(word), word
    script = "for word; do printf '%s\\0' \"$word\"; done"
    done = subprocess.run(["bash", "-c", f"set -- {' '.join(quoted)}; {script}"], capture_output=True, timeout=10)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8").split("\0")[:-1] == WORDS
