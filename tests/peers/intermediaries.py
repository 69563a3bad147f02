"""Published MCP intermediaries, each with the exact command that puts it in front of a reference server.

``tests/peers/setup.sh`` installs them, pinned, under ``tests/peers/intermediaries/``. Each recipe says
where the intermediary sits (HTTP to HTTP, stdio to HTTP: it spawns the server; HTTP to stdio: the client
spawns it), which revisions its front speaks (the Python SDK client modes that cross it), and how to start
it in front of the Python SDK server (``sdk_server.py``, or ``witness_server.py`` for tests that need to
see the back hop). ``running(name)`` starts the upstream and the intermediary on free 127.0.0.1 ports and
stops both when the block ends.

What mcp-assay finds each one doing, on either hop, is pinned with its justification in
``tests/e2e/intermediaries_expected.yaml`` (``tests/e2e/test_intermediaries_e2e.py`` keeps it true).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.peers.process import HERE, free_port, http_server
from tests.peers.topology import Hop, StdioHop, upstream_command, upstream_server, url_of

INSTALLED = HERE / "intermediaries"
NODE = INSTALLED / "node" / "node_modules"


@dataclass(frozen=True)
class Intermediary:
    name: str
    package: str
    direction: str
    modes: tuple[str, ...]
    """The Python SDK client modes that cross it (its front's revisions)."""
    entry: Path
    """An installed file the recipe needs (missing: run setup.sh)."""
    note: str = ""

    def command(self, port: int, upstream: str) -> list[str]:
        """The launch command: ``upstream`` is the server's URL (HTTP back) or its command line (stdio back)."""
        raise NotImplementedError


@dataclass(frozen=True)
class FastMcp(Intermediary):
    def command(self, port: int, upstream: str) -> list[str]:
        return [str(self.entry), "run", upstream, "--transport", "http", "--host", "127.0.0.1",
                "--port", str(port), "--no-banner", "--log-level", "WARNING"]  # fmt: skip


@dataclass(frozen=True)
class McpProxyPy(Intermediary):
    def command(self, port: int, upstream: str) -> list[str]:
        return [str(self.entry), "--port", str(port), "--host", "127.0.0.1", "--log-level", "WARNING", "--",
                *shlex.split(upstream)]  # fmt: skip


@dataclass(frozen=True)
class SuperGateway(Intermediary):
    stateful: bool = False

    def command(self, port: int, upstream: str) -> list[str]:
        command = ["node", str(self.entry), "--stdio", upstream, "--outputTransport", "streamableHttp",
                   "--port", str(port), "--logLevel", "none"]  # fmt: skip
        return [*command, "--stateful"] if self.stateful else command


@dataclass(frozen=True)
class McpProxyNpm(Intermediary):
    def command(self, port: int, upstream: str) -> list[str]:
        return [str(self.entry), "--port", str(port), "--host", "127.0.0.1", "--", *shlex.split(upstream)]


@dataclass(frozen=True)
class McpRemote(Intermediary):
    def command(self, port: int, upstream: str) -> list[str]:
        return ["node", str(self.entry), upstream, "--transport", "http-only"]


ALL_MODES = ("auto", "legacy", "2026-07-28")
RECIPES: dict[str, Intermediary] = {
    recipe.name: recipe
    for recipe in (
        FastMcp("fastmcp", "fastmcp==4.1.6 (PyPI)", "http-to-http", ALL_MODES,
                INSTALLED / "venv-fastmcp" / "bin" / "fastmcp",
                "`fastmcp run URL` (FastMCP.as_proxy): both revisions at the front, mirrored per request upstream"),
        McpProxyPy("mcp-proxy-py", "mcp-proxy==0.13.0 (PyPI, sparfenyuk)", "stdio-to-http", ("auto", "legacy"),
                   INSTALLED / "venv-mcp-proxy" / "bin" / "mcp-proxy",
                   "built on the Python SDK 1.30: 2025-11-25 only (a 2026 request gets 400)"),
        SuperGateway("supergateway", "supergateway@4.0.0 (npm)", "stdio-to-http", ("auto", "legacy"),
                     NODE / "supergateway" / "dist" / "index.js",
                     "stateless (the default): a new stdio server for every request (so the tests drive it in two"
                     " modes, auto negotiating 2026-07-28); binds every interface"),
        SuperGateway("supergateway-stateful", "supergateway@4.0.0 (npm) --stateful", "stdio-to-http", ALL_MODES,
                     NODE / "supergateway" / "dist" / "index.js", "one stdio server per session", stateful=True),
        McpProxyNpm("mcp-proxy-npm", "mcp-proxy@6.7.19 (npm, punkpeye)", "stdio-to-http", ALL_MODES,
                    NODE / ".bin" / "mcp-proxy",
                    "TypeScript SDK v2: 2026-07-28 at the front, 2025-11-25 toward the stdio server"),
        McpRemote("mcp-remote", "mcp-remote@0.15.1 (npm)", "http-to-stdio", ALL_MODES,
                  NODE / "mcp-remote" / "dist" / "proxy.js",
                  "the client spawns it (stdio) and it talks Streamable HTTP to the server"),
    )
}  # fmt: skip


@dataclass
class Running:
    """A running intermediary: its HTTP front (``url``) or, for an HTTP-to-stdio bridge, the command a client spawns."""

    recipe: Intermediary
    url: str | None
    stdio: list[str] | None
    upstream_url: str | None
    env: dict[str, str] = field(default_factory=dict)


def installed(recipe: Intermediary) -> None:
    if not recipe.entry.exists():
        pytest.skip(f"{recipe.package} missing: run `bash tests/peers/setup.sh` ({recipe.entry} not found)")


@contextmanager
def running(
    name: str,
    upstream: str = "sdk",
    config_dir: Path | None = None,
    *,
    front: Hop | None = None,
    back: Hop | None = None,
    stdio_back: StdioHop | None = None,
) -> Iterator[Running]:
    """The upstream server (``sdk`` or ``witness``) and ``name`` in front of it, until the block ends; ``front``,
    ``back`` and ``stdio_back`` put a watcher on a hop, as in ``topology.gateway_chain``."""
    recipe = RECIPES[name]
    installed(recipe)
    with ExitStack() as stack:
        env = {"MCP_REMOTE_CONFIG_DIR": str(config_dir)} if config_dir is not None else {}
        upstream_url: str | None = None
        if recipe.direction == "stdio-to-http":
            command = upstream_command(upstream)
            target = shlex.join(stdio_back(command) if stdio_back is not None else command)
        else:
            upstream_url = stack.enter_context(upstream_server(upstream)).url
            target = url_of(stack.enter_context(back(upstream_url))) if back is not None else upstream_url
        if recipe.direction == "http-to-stdio":
            yield Running(recipe, None, recipe.command(0, target), upstream_url, env)
            return
        port = free_port()
        url = stack.enter_context(http_server(recipe.command(port, target), port, env=env)).url
        if front is not None:
            url = url_of(stack.enter_context(front(url)))
        yield Running(recipe, url, None, upstream_url, env)
