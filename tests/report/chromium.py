"""Headless Chromium driven over the DevTools protocol, for the tests that open the HTML report.

The browser is started with ``--remote-debugging-pipe``: it reads commands on its fd 3 and answers
on its fd 4, each message one JSON object ended by a NUL byte, so no port is opened and no
WebSocket client is needed. A page is opened in a viewport of an exact size (the window size
flags leave room for window decorations, so only the protocol's device metrics give 1400x1000),
measured with a small script evaluated by the protocol (the report's own policy forbids scripts)
and photographed. Every wait is bounded; the browser runs in its own session, with networking
features off and a throw-away profile, and is ended whole.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["Chromium", "ChromiumError"]

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)
TIMEOUT = 30.0
"""Seconds any one command (a navigation included) may take."""


_PLACE_PIPES = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
    "os.close(int(sys.argv[1])); os.close(int(sys.argv[2])); os.execv(sys.argv[3], sys.argv[3:])"
)
"""Puts the browser's two pipe ends where the protocol expects them (fd 3 and fd 4), then becomes the browser."""


def _above_four(fd: int) -> int:
    """The same pipe end as a descriptor above 4, so moving the others onto 3 and 4 never closes it."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class ChromiumError(Exception):
    """The browser did not answer, or answered a command with an error."""


class Chromium:
    """One headless browser and one page in it."""

    def __init__(self, executable: str, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        commands_read, self._commands = (_above_four(fd) for fd in os.pipe())
        self._answers, answers_write = (_above_four(fd) for fd in os.pipe())
        args = [*FLAGS, "--remote-debugging-pipe", f"--user-data-dir={folder / 'profile'}", "about:blank"]
        env = {**os.environ, "HOME": str(folder), "XDG_CONFIG_HOME": str(folder), "XDG_CACHE_HOME": str(folder)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _PLACE_PIPES, str(commands_read), str(answers_write), executable, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(commands_read, answers_write),
            cwd=folder,
            env=env,
            start_new_session=True,
        )
        os.close(commands_read)
        os.close(answers_write)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        self.session = ""
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            self.send("Page.enable", session=True)
        except BaseException:
            self.close()  # a browser that does not answer is not left behind
            raise

    def __enter__(self) -> Chromium:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=TIMEOUT)
        for fd in (self._commands, self._answers):
            try:
                os.close(fd)
            except OSError:
                pass

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: bool = False) -> dict[str, Any]:
        """Send one command and return its result (events that arrive meanwhile are kept)."""
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        answer = self._receive(lambda item: item.get("id") == ident, method)
        if "error" in answer:
            raise ChromiumError(f"{method}: {answer['error']}")
        result: dict[str, Any] = answer.get("result", {})
        return result

    def _receive(self, wanted: Any, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        while True:
            for index, item in enumerate(self._events):
                if wanted(item):
                    return self._events.pop(index)
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                item = json.loads(raw)
                if wanted(item):
                    return dict(item)
                if "method" in item:
                    self._events.append(item)
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChromiumError(f"no answer to {what} within {TIMEOUT:.0f} s")
            ready, _, _ = select.select([self._answers], [], [], left)
            if ready:
                chunk = os.read(self._answers, 1 << 16)
                if not chunk:
                    raise ChromiumError(f"the browser closed its pipe before answering {what}")
                self._buffer += chunk

    def open(self, html: str, name: str, width: int, height: int) -> None:
        """Show ``html`` (written to ``name``.html, opened as a file) in a ``width`` x ``height`` viewport."""
        page = self.folder / f"{name}.html"
        page.write_text(html, encoding="utf-8")
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        self.send("Emulation.setDeviceMetricsOverride", metrics, session=True)
        self._events.clear()
        self.send("Page.navigate", {"url": page.resolve().as_uri()}, session=True)
        self._receive(lambda item: item.get("method") == "Page.loadEventFired", f"the load of {page}")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable)."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in result:
            raise ChromiumError(f"the page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self) -> bytes:
        """A PNG of the viewport."""
        data = self.send("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        return base64.b64decode(data)
