"""The feeder sends lines in order, in batches written by the feeding thread, and never blocks or raises."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import pytest

from mcp_assay.addon import feeder as feeder_module
from mcp_assay.addon.feeder import BATCH_RECORDS, LineFeeder


@contextmanager
def _pipe() -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    read, write = os.pipe()
    reader, writer = os.fdopen(read, "rb"), os.fdopen(write, "wb")
    try:
        yield reader, writer
    finally:
        reader.close()
        if not writer.closed:
            try:
                writer.close()
            except OSError:
                pass


def _line(number: int, size: int = 40) -> bytes:
    return f'{{"n":{number},"pad":"{"x" * size}"}}\n'.encode()


def _read_all(reader: IO[bytes], into: list[bytes]) -> threading.Thread:
    def read() -> None:
        into.extend(reader.readlines())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_lines_arrive_whole_and_in_order_with_the_first_line_before_them() -> None:
    with _pipe() as (reader, writer):
        received: list[bytes] = []
        reading = _read_all(reader, received)
        feeder = LineFeeder(writer, b"".join, b"settings\n", batch_delay=0.01)
        for number in range(1000):
            feeder.feed(_line(number))
        feeder.end()
        feeder.join(10)
        reading.join(10)
    assert received == [b"settings\n", *(_line(number) for number in range(1000))]


def test_a_batch_that_does_not_fill_goes_after_a_quiet_spell() -> None:
    """A record after a quiet spell is not held until more traffic comes (live findings are printed)."""
    with _pipe() as (reader, writer):
        feeder = LineFeeder(writer, b"".join, batch_delay=0.01)
        feeder.feed(_line(1))
        arrived: list[bytes] = []
        reading = threading.Thread(target=lambda: arrived.append(reader.readline()), daemon=True)
        reading.start()
        reading.join(10)  # the bound; the line comes after about 0.01 s
        assert arrived == [_line(1)]
        assert feeder.waiting() == 0
        feeder.end()
        feeder.join(10)


def test_the_feeding_thread_sends_full_batches_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Measured at saturation: a second thread writing the lines cost mitmproxy 5 to 7% of its throughput, so
    under steady traffic every full batch is written by the thread that fed its last line."""
    writers: list[str] = []
    real_write = os.write

    def write(fd: int, data: Any) -> int:
        writers.append(threading.current_thread().name)
        return real_write(fd, data)

    monkeypatch.setattr(feeder_module.os, "write", write)
    with _pipe() as (reader, writer):
        received: list[bytes] = []
        reading = _read_all(reader, received)
        feeder = LineFeeder(writer, b"".join, batch_delay=60.0, name="feeder-thread")
        for number in range(BATCH_RECORDS * 10):
            feeder.feed(_line(number))
        sent_here = list(writers)
        feeder.end()
        feeder.join(10)
        reading.join(10)
    assert sent_here == [threading.current_thread().name] * 10
    assert len(received) == BATCH_RECORDS * 10


def test_feeding_never_blocks_on_a_full_pipe_and_all_goes_once_it_drains() -> None:
    """Nobody reads for a while: the pipe fills, feeding goes on (a feeding thread that blocked would stall the
    proxy), and every line arrives in order once the reader reads."""
    lines = [_line(number, size=2000) for number in range(2000)]  # about 4 MB, far beyond a pipe's buffer
    with _pipe() as (reader, writer):
        feeder = LineFeeder(writer, b"".join, batch_delay=0.01)
        feeding = threading.Thread(target=lambda: [feeder.feed(line) for line in lines], daemon=True)
        feeding.start()
        feeding.join(30)
        assert not feeding.is_alive(), "feeding blocked on a full pipe"
        assert feeder.waiting() > 0  # the pipe could not take it all yet
        received: list[bytes] = []
        reading = _read_all(reader, received)
        feeder.end()
        feeder.join(30)
        reading.join(30)
    assert received == lines


def test_a_reader_that_went_away_costs_the_lines_never_an_exception(caplog: pytest.LogCaptureFixture) -> None:
    with _pipe() as (reader, writer):
        feeder = LineFeeder(writer, b"".join, batch_delay=0.01)
        reader.close()
        for number in range(BATCH_RECORDS * 3):
            feeder.feed(_line(number))
        assert feeder.broken
        assert feeder.dropped > 0
        feeder.end()
        feeder.join(10)
    assert sum("went away" in record.getMessage() for record in caplog.records) == 1


def test_lines_fed_after_the_end_are_not_sent_and_nothing_breaks(caplog: pytest.LogCaptureFixture) -> None:
    """A record that arrives while the proxy stops is left out quietly: the pipe is closed, and its descriptor
    may already name another file."""
    with _pipe() as (reader, writer):
        received: list[bytes] = []
        reading = _read_all(reader, received)
        feeder = LineFeeder(writer, b"".join, batch_delay=0.01)
        feeder.feed(_line(1))
        feeder.end()
        feeder.join(10)
        for number in range(BATCH_RECORDS * 2):
            feeder.feed(_line(number))
        reading.join(10)
    assert received == [_line(1)]
    assert not feeder.broken and not caplog.records


def _fed_through(lines_of: Any, count: int) -> list[bytes]:
    """Feed the numbers 0 to ``count`` through a feeder writing them with ``lines_of`` (no quiet-spell batches);
    the lines that reached the reader."""
    with _pipe() as (reader, writer):
        received: list[bytes] = []
        reading = _read_all(reader, received)
        feeder: LineFeeder[int] = LineFeeder(writer, lines_of, batch_delay=60.0)
        for number in range(count):
            feeder.feed(number)
        feeder.end()
        feeder.join(10)
        reading.join(10)
    return received


def test_items_are_written_as_lines_once_per_batch_by_the_feeding_thread() -> None:
    """The feeding thread writes a whole batch in one call of ``lines_of`` (what makes a record cheap to write)."""
    calls: list[tuple[int, str]] = []

    def lines_of(items: Any) -> bytes:
        calls.append((len(items), threading.current_thread().name))
        return b"".join(_line(number) for number in items)

    received = _fed_through(lines_of, BATCH_RECORDS * 3)
    assert calls == [(BATCH_RECORDS, threading.current_thread().name)] * 3
    assert received == [_line(number) for number in range(BATCH_RECORDS * 3)]


def test_a_batch_that_cannot_be_written_is_lost_said_once_and_feeding_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def lines_of(items: Any) -> bytes:
        if any(number < BATCH_RECORDS * 2 for number in items):
            raise TypeError("not JSON data")
        return b"".join(_line(number) for number in items)

    received = _fed_through(lines_of, BATCH_RECORDS * 3)
    assert received == [_line(number) for number in range(BATCH_RECORDS * 2, BATCH_RECORDS * 3)]
    assert [record.getMessage() for record in caplog.records if "could not be written" in record.getMessage()] == [
        f"mcp-assay: {BATCH_RECORDS} record(s) could not be written for the judging worker"
    ]
