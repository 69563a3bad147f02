"""Run mitmproxy with the mcp-assay addon inside this process: ``mcp-assay proxy``.

The command line parses the flags; this module owns what needs mitmproxy itself: a
:class:`~mitmproxy.tools.dump.DumpMaster` in reverse or regular mode with the :class:`Assay` addon,
a line saying where it listens once the port is known, and a clean stop on SIGINT or SIGTERM. With a
gateway's back hop (:class:`BackHop`) it listens twice in the one process: at the gateway's front, for
its clients, and at its back, the address the gateway is told its upstream is.
"""

from __future__ import annotations

import asyncio
import base64
import signal
import time
from typing import Any

from mitmproxy import exceptions
from mitmproxy.options import Options
from mitmproxy.proxy import mode_specs
from mitmproxy.tools.dump import DumpMaster
from rich.console import Console

from mcp_assay.addon.assay import Assay
from mcp_assay.addon.listeners import BackHop
from mcp_assay.recording.records import observation_record
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.protocol import HeaderKey

__all__ = ["BackHop", "UpstreamCredentials", "serve"]


class UpstreamCredentials:
    """Sends the ``user:password@`` of ``--upstream`` to the server as Basic authorization, on every request that
    carries no ``Authorization`` of its own (a client's own credentials go through as they are).

    It acts at ``requestheaders``, before the observer's ``request``, so the recording shows what the server
    got (the credential redacted); the report notes once that the proxy added it."""

    def __init__(self, user: str, password: str, assay: Assay) -> None:
        self._header = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        self._assay = assay
        self.added = 0

    def requestheaders(self, flow: Any) -> None:
        headers = flow.request.headers
        if HeaderKey.AUTHORIZATION in headers:
            return
        headers[HeaderKey.AUTHORIZATION] = self._header
        self.added += 1
        if self.added == 1:
            detail = (
                "mcp-assay proxy sent the user:password of --upstream as Basic authorization on each request that "
                "carried no Authorization header of its own; the recording shows the requests as the server got them"
            )
            self._assay.note(observation_record("upstream-credentials", time.time(), "note", {"detail": detail}))


async def serve(
    *,
    mode: str,
    host: str,
    port: int,
    path: str,
    upstream: str,
    spec: Any,
    console: Console,
    description: str,
    options: dict[str, Any],
    settings: dict[str, str],
    reports: list[str],
    credentials: tuple[str, str] | None = None,
    back: BackHop | None = None,
) -> int:
    """Run mitmproxy with the addon until SIGINT or SIGTERM; the exit code follows the verdicts. ``upstream`` is
    the server's URL as it may be shown (redacted); ``credentials`` its ``user:password@``, sent as Basic;
    ``back`` a second listener at a gateway's back."""
    try:  # mitmproxy reports a mode it cannot parse only from a task, and then never listens
        mode_specs.ProxyMode.parse(mode)
    except ValueError as exc:
        raise ConfigError(f"--upstream: mitmproxy cannot use it ({exc})") from exc
    modes = [mode] if back is None else [mode, back.mode]
    master: Any = DumpMaster(
        Options(mode=modes, listen_host=host, listen_port=port), with_termlog=False, with_dumper=False
    )
    assay = Assay(spec=spec, description=description, reports=reports)

    class Announce:
        """Say where the proxy listens once it does (the port is only known then when it was 0)."""

        def running(self) -> None:
            server = master.addons.get("proxyserver")
            instances = list(server.servers) if server is not None else []
            for instance in instances:
                if back is not None and instance.mode.full_spec == back.mode:
                    for address in instance.listen_addrs:
                        console.print(
                            f"mcp-assay proxy: the gateway's back hop listens on http://{address[0]}:{address[1]}"
                            f"{back.path} → {back.origin}{back.path} (make it the gateway's upstream)",
                            highlight=False,
                            soft_wrap=True,
                        )
                    continue
                for address in instance.listen_addrs:
                    self._front(f"{address[0]}:{address[1]}")
            console.file.flush()

        def _front(self, where: str) -> None:
            if mode.startswith("reverse:"):
                console.print(
                    f"mcp-assay proxy listening on http://{where}{path} → {upstream}",
                    highlight=False,
                    soft_wrap=True,
                )
            else:
                console.print(
                    f"mcp-assay proxy listening on {where} (set HTTP_PROXY/HTTPS_PROXY=http://{where})",
                    highlight=False,
                    soft_wrap=True,
                )

    companions: list[Any] = [] if credentials is None else [UpstreamCredentials(*credentials, assay=assay)]
    master.addons.add(*companions, assay.injector, assay.server_probe, assay, Announce())
    try:
        master.options.update(**{key: value for key, value in options.items()})
        for name, value in settings.items():
            master.options.set(f"{name}={value}")
    except exceptions.OptionsError as exc:
        raise ConfigError(str(exc)) from exc
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, master.shutdown)
    try:
        await master.run()
    except SystemExit as exc:  # mitmproxy gives up at startup (e.g. the port is taken); it said why
        return 2 if exc.code not in (0, None) else 0
    if assay.finished is None:
        return 3
    return assay.finished.exit_code
