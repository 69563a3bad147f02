"""A pytest fixture for mcp-assay: each test that drives your server through it is judged too.

Turn it on in your ``conftest.py``::

    pytest_plugins = ["mcp_assay.pytest_plugin"]

and route a test's client through the proxy the fixture starts::

    def test_tools(mcp_assay_proxy, server_url):
        proxy = mcp_assay_proxy(server_url)     # `mcp-assay proxy --upstream server_url` on a free port
        run_my_client(proxy.url)

Keyword arguments are those of :func:`mcp_assay.testing.assay_proxy`: ``inject="all"`` (or
``"version,hold"`` ...) makes the proxy inject faults toward the client on the server's behalf,
and the client's reactions are judged with the rest; ``probe_server=True`` also probes the server.

When the test ends the proxy stops and writes its report, and a requirement that failed at the
level ``mcp_assay_fail_on`` names (an ini option: ``must``, the default, or ``should``) fails the
test at teardown, listed with its reason. A test that wants the verdicts itself calls
``proxy.stop()`` and then ``proxy.assert_conformant()`` or ``proxy.report``; the fixture then
leaves them alone. Schemas come from ``MCP_ASSAY_SPEC_DIR`` or the cache, as for the CLI.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.testing import AssayProxy, assay_proxy

__all__ = ["mcp_assay_proxy"]

FAIL_ON = "mcp_assay_fail_on"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(FAIL_ON, "mcp-assay: the failures that fail a test, `must` or `should`", default="must")


@pytest.fixture
def mcp_assay_proxy(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., AssayProxy]]:
    """A factory: ``mcp_assay_proxy(upstream_url, **options)`` starts a judging proxy in front of the server."""
    fail_on = str(request.config.getini(FAIL_ON))
    if fail_on not in ("must", "should"):
        raise pytest.UsageError(f"{FAIL_ON} = {fail_on}: choose must or should")
    started: list[AssayProxy] = []
    with ExitStack() as stack:

        def start(upstream: str, **options: Any) -> AssayProxy:
            options.setdefault("report", tmp_path / f"mcp-assay-{len(started) + 1}.json")
            proxy = stack.enter_context(assay_proxy(upstream, **options))
            started.append(proxy)
            return proxy

        yield start
    for proxy in started:
        if not proxy.checked:
            proxy.assert_conformant(fail_on)
