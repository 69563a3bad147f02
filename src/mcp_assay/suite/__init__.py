"""The active half: a conformance run against one MCP server over Streamable HTTP or stdio.

The suite chooses the revision the server serves (``server/discover``, then ``initialize``), sends
probe families that only produce traffic, and lets the same rules that judge passive traffic judge
its exchanges (:mod:`mcp_assay.spec.rules`). :func:`run` yields :mod:`~mcp_assay.suite.events` as it
goes; the last one carries the :class:`~mcp_assay.report.model.Report`.

The names below are imported on first use: ``validate``, ``proxy`` and the other commands import a
module of this package (the configuration, the judging) without paying for the whole runner.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_assay.suite.config import SuiteConfig
    from mcp_assay.suite.runner import arun, judge_suite_log, run

__all__ = ["SuiteConfig", "arun", "judge_suite_log", "run"]

_HOMES = {
    "SuiteConfig": "mcp_assay.suite.config",
    "arun": "mcp_assay.suite.runner",
    "judge_suite_log": "mcp_assay.suite.runner",
    "run": "mcp_assay.suite.runner",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value
