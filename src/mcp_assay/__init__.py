"""mcp-assay: judge whether MCP servers, clients and gateways speak the protocol correctly.

One product in three parts feeding one report: a passive mitmproxy addon and stdio tap
(:mod:`mcp_assay.addon`), an active conformance suite (:mod:`mcp_assay.suite`), and the
revisions, schemas and requirement catalogue every check cites (:mod:`mcp_assay.spec`).
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
