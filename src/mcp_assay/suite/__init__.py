"""The active half: a conformance run against one MCP server over Streamable HTTP or stdio.

The suite chooses the revision the server serves (``server/discover``, then ``initialize``), sends
probe families that only produce traffic, and lets the same rules that judge passive traffic judge
its exchanges (:mod:`mcp_assay.spec.rules`). :func:`run` yields :mod:`~mcp_assay.suite.events` as it
goes; the last one carries the :class:`~mcp_assay.report.model.Report`.
"""

from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.runner import arun, judge_suite_log, run

__all__ = ["SuiteConfig", "arun", "judge_suite_log", "run"]
