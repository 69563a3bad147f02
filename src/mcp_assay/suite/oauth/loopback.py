"""The loopback redirect of a native app's sign-in (RFC 8252 §7.3): one short-lived listener on this machine.

It binds before the client is registered, so the port in ``redirect_uris`` is the port that is
listening, and it is closed on every way out of the sign-in (it is an async context manager). The
first request to ``/callback`` carrying the sign-in's ``state`` is the answer; one with another
``state`` (a stale tab, a stray or forged request) is answered ``400`` and the listener keeps waiting
for the real one until its timeout, so a single stray local request cannot end the sign-in. Any other
path is a 404, so the ``/favicon.ico`` a browser asks for unprompted cannot be taken for the redirect.
The page the browser is shown says one line, never contains the code, and is served ``no-store``
with ``referrer-policy: no-referrer``. ``localhost`` is listened for on ``127.0.0.1``, and named as
``localhost`` in the redirect URI.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
from collections.abc import Callable
from types import TracebackType
from urllib.parse import parse_qsl, urlsplit

from mcp_assay.suite.oauth.steps import SignInFailed, Step

__all__ = ["CALLBACK_PATH", "LoopbackReceiver"]

CALLBACK_PATH = "/callback"
_HEAD_LIMIT = 16_384
_READ_TIMEOUT = 5.0


class LoopbackReceiver:
    """Listens on ``host:port`` (0: any free port) for the one redirect that carries the authorization answer."""

    def __init__(self, host: str, port: int | None) -> None:
        self.host = host
        self.port = port or 0
        self._server: asyncio.Server | None = None
        self._answer: asyncio.Future[dict[str, str]] | None = None
        self._state: str | None = None
        self._stray: Callable[[], None] | None = None

    def expect(self, state: str, stray: Callable[[], None] | None = None) -> None:
        """Take only a redirect carrying ``state``; another is answered 400 (``stray`` is told) and the wait goes on."""
        self._state = state
        self._stray = stray

    @property
    def redirect_uri(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{CALLBACK_PATH}"

    async def __aenter__(self) -> LoopbackReceiver:
        bind = "127.0.0.1" if self.host == "localhost" else self.host
        self._answer = asyncio.get_running_loop().create_future()
        try:
            self._server = await asyncio.start_server(self._serve, bind, self.port)
        except OSError as exc:
            raise SignInFailed(Step.REDIRECT, f"cannot listen on {bind}:{self.port} ({exc.strerror or exc})") from None
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), timeout=2.0)
        if self._answer is not None and not self._answer.done():
            self._answer.cancel()

    async def wait(self, timeout: float) -> dict[str, str]:
        """The redirect's query parameters (one value each), or a failure once ``timeout`` seconds have passed."""
        assert self._answer is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._answer), timeout)
        except TimeoutError:
            raise SignInFailed(Step.AUTHORIZATION, f"no redirect to {self.redirect_uri} within {timeout:g} s") from None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _READ_TIMEOUT)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
            writer.close()
            return
        line = head[:_HEAD_LIMIT].split(b"\r\n", 1)[0].decode("latin-1")
        method, _, rest = line.partition(" ")
        target = rest.rpartition(" ")[0] or rest
        parts = urlsplit(target)
        if method != "GET" or parts.path != CALLBACK_PATH:
            await _answer(writer, 404, "Not found.")
            return
        assert self._answer is not None
        if self._answer.done():
            await _answer(writer, 409, "This sign-in has already received its answer.")
            return
        params: dict[str, str] = {}
        for name, value in parse_qsl(parts.query, keep_blank_values=True):
            params.setdefault(name, value)
        if self._state is not None and not hmac.compare_digest(params.get("state", "").encode(), self._state.encode()):
            if self._stray is not None:
                self._stray()
            await _answer(writer, 400, "This redirect does not belong to the sign-in mcp-assay is waiting for (its "
                                       "state does not match); mcp-assay keeps waiting for the right one.")  # fmt: skip
            return
        self._answer.set_result(params)
        await _answer(writer, 200, "mcp-assay received the authorization answer; you can close this tab.")


async def _answer(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 409: "Conflict"}[status]
    body = text.encode() + b"\n"
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {len(body)}\r\n"
        "cache-control: no-store\r\nreferrer-policy: no-referrer\r\nconnection: close\r\n\r\n"
    )
    with contextlib.suppress(ConnectionError):
        writer.write(head.encode() + body)
        await writer.drain()
    writer.close()
