"""The tap's own standard streams (mcp_assay.addon.descriptors), on real pipes.

Tool-defined: lines come back byte for byte however the writer splits them; closing a stream ends it for
the peer without freeing its descriptor number; and a thread blocked reading one costs nothing at exit
(the "Fatal Python error: _enter_buffered_busy" the tap died of through ``sys.stdin``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from mcp_assay.addon.descriptors import READ_SIZE, Descriptor


def test_lines_come_back_whole_however_the_writer_splits_them() -> None:
    read, write = os.pipe()
    sent = [b"a\n", b"\n", b"b" * (3 * READ_SIZE) + b"\r\n", b"\xff\xfe\n", b"tail without newline"]
    data = b"".join(sent)

    def write_in_pieces() -> None:
        for start in range(0, len(data), 7000):
            os.write(write, data[start : start + 7000])
        os.close(write)

    writer = threading.Thread(target=write_in_pieces)
    writer.start()
    stream = Descriptor(read)
    got = []
    while line := stream.readline():
        got.append(line)
    writer.join(10)
    os.close(read)
    assert got == sent


def test_a_write_larger_than_the_pipe_arrives_whole() -> None:
    read, write = os.pipe()
    data = os.urandom(1024 * 1024)
    chunks: list[bytes] = []

    def drain() -> None:
        while chunk := os.read(read, 65536):
            chunks.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    assert Descriptor(write).write(data) == len(data)
    os.close(write)
    reader.join(10)
    os.close(read)
    assert b"".join(chunks) == data


def test_closing_ends_the_stream_for_the_peer_and_keeps_the_descriptor_number() -> None:
    read, write = os.pipe()
    stream = Descriptor(write)
    stream.close()
    stream.close()  # once is enough; twice is harmless
    assert os.read(read, 10) == b""  # the peer reads end of file
    assert os.fstat(write)  # the number still names an open file (/dev/null), so nothing else gets it
    stream.write(b"after the end\n")  # goes nowhere, raises nothing
    os.close(write)
    os.close(read)


def test_a_thread_blocked_reading_stdin_costs_nothing_at_exit() -> None:
    """What killed the tap (exit 134) when the server exited while the client still held stdin."""
    script = (
        "import threading, sys\n"
        "from mcp_assay.addon.descriptors import standard_streams\n"
        "stdin, _, _ = standard_streams()\n"
        "threading.Thread(target=stdin.readline, daemon=True).start()\n"
        "sys.exit(5)\n"
    )
    for _ in range(5):
        with subprocess.Popen(
            [sys.executable, "-c", script], stdin=subprocess.PIPE, stderr=subprocess.PIPE
        ) as process:  # stdin stays open: the reading thread is still blocked when the interpreter exits
            assert process.stderr is not None
            err = process.stderr.read()
            assert process.wait(30) == 5, err
            assert process.stdin is not None
            process.stdin.close()
