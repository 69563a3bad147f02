"""An HTTP server the run starts itself (`run -u URL --serve CMD`), and the addresses it listens on.

In CI the server under test is usually started just for the run. ``--serve`` starts it after the
stand-in authorization server (so a server that fetches the stub's keys at start-up finds them),
waits until the endpoint's port accepts connections, and stops the whole process group when the
run ends. While it is up, the run reads which addresses the server's processes listen on, from
``/proc`` (Linux) and never by sending traffic anywhere but the target: a server run locally
should listen on loopback only (AUTH-31).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ipaddress
import os
import shlex
import signal
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcp_assay.vocabulary.errors import Unreachable
from mcp_assay.wire.model import LISTENING

__all__ = ["LISTENING", "LaunchedServer", "launch", "listening_addresses"]

_TAIL = 20
_TCP_LISTEN = "0A"


@dataclass
class LaunchedServer:
    """A server process group started for the run, and the last lines it printed."""

    argv: tuple[str, ...]
    process: asyncio.subprocess.Process
    output: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=_TAIL))
    readers: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The program and its first argument, as file names (``python server.py``): the rest may hold secrets."""
        shown = [Path(self.argv[0]).name]
        if len(self.argv) > 1 and not self.argv[1].startswith("-"):
            shown.append(Path(self.argv[1]).name)
        return " ".join(shown)

    def observation_data(self) -> dict[str, Any]:
        """What :data:`LISTENING` records: the addresses, or why they could not be read."""
        addresses = listening_addresses(self.process.pid)
        data: dict[str, Any] = {"command": self.name, "pid": self.process.pid}
        if addresses is None:
            data["why"] = "the listening sockets of a process can only be read on Linux (/proc)"
        else:
            data["addresses"] = addresses
        return data

    async def stop(self, grace: float = 5.0) -> None:
        """SIGTERM to the process group, then SIGKILL after ``grace`` seconds."""
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
            if self.process.returncode is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), timeout=wait)
        if self.readers:  # the process is gone: what it printed last is still in the pipe, read it to its end
            await asyncio.wait(self.readers, timeout=1.0)
        for reader in self.readers:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader

    def tail(self) -> str:
        return " | ".join(line for line in self.output if line)[-800:] or "(no output)"


async def _drain(stream: asyncio.StreamReader | None, into: collections.deque[str]) -> None:
    if stream is None:
        return
    while line := await stream.readline():
        into.append(line.decode("utf-8", "replace").rstrip())


def _port_of(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    return parts.hostname or "127.0.0.1", parts.port or default


async def launch(argv: Sequence[str], url: str, *, timeout: float) -> LaunchedServer:
    """Start ``argv`` in a session of its own and wait until ``url``'s port accepts a connection.

    Raises :class:`Unreachable` (exit 3) when the command cannot start, exits first, or
    the port stays closed for ``timeout`` seconds; the server is stopped before that."""
    host, port = _port_of(url)
    command = shlex.join(argv)
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        raise Unreachable(f"--serve {command}: could not start it ({exc.strerror or exc})") from exc
    server = LaunchedServer(tuple(argv), process)
    server.readers.append(asyncio.create_task(_drain(process.stdout, server.output)))
    deadline = time.monotonic() + timeout
    while True:
        if process.returncode is not None:
            await server.stop()
            raise Unreachable(
                f"--serve {command} exited with code {process.returncode} before {host}:{port} accepted "
                f"connections; its last output: {server.tail()}"
            )
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout=1.0)
        except (OSError, TimeoutError):
            if time.monotonic() > deadline:
                await server.stop()
                raise Unreachable(
                    f"--serve {command}: {host}:{port} did not accept connections within {timeout:g} s "
                    f"(--serve-timeout); its last output: {server.tail()}"
                ) from None
            await asyncio.sleep(0.1)
            continue
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return server


# -- listening sockets (Linux /proc) ----------------------------------------------------------------
def _children(pid: int) -> set[int]:
    """``pid`` and every process below it."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            parents[int(entry.name)] = int(stat.rpartition(")")[2].split()[1])
    found, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, its_parent in parents.items():
            if its_parent == parent and child not in found:
                found.add(child)
                frontier.append(child)
    return found


def _socket_inodes(pids: Iterable[int]) -> set[str]:
    inodes: set[str] = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:["):
                        inodes.add(target[8:-1])
    return inodes


def _address(hex_address: str) -> str:
    """``0100007F:1F40`` -> ``127.0.0.1:8000``; the IPv6 form is four little-endian words."""
    host_hex, _, port_hex = hex_address.partition(":")
    raw = bytes.fromhex(host_hex)
    packed = b"".join(raw[index : index + 4][::-1] for index in range(0, len(raw), 4))
    host = ipaddress.ip_address(packed)
    shown = f"[{host}]" if host.version == 6 else str(host)
    return f"{shown}:{int(port_hex, 16)}"


def listening_addresses(pid: int) -> list[str] | None:
    """The TCP addresses the process tree of ``pid`` listens on, or ``None`` where ``/proc`` cannot say."""
    tables = [Path(f"/proc/{pid}/net/tcp"), Path(f"/proc/{pid}/net/tcp6")]
    if not Path(f"/proc/{pid}/fd").is_dir():
        return None
    inodes = _socket_inodes(_children(pid))
    found: list[str] = []
    for table in tables:
        with contextlib.suppress(OSError):
            for line in table.read_text().splitlines()[1:]:
                columns = line.split()
                if len(columns) > 9 and columns[3] == _TCP_LISTEN and columns[9] in inodes:
                    found.append(_address(columns[1]))
    return sorted(set(found))
