"""The second listener ``mcp-assay proxy --gateway-back`` opens, as plain data.

It lives apart from :mod:`~mcp_assay.addon.serve` so the command line can name it without importing
mitmproxy: every ``mcp-assay`` command parses its options, and only ``proxy`` runs mitmproxy.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BackHop"]


@dataclass(frozen=True, slots=True)
class BackHop:
    """A second listener, at a gateway's back: the gateway's upstream address, forwarding to the real server."""

    port: int
    origin: str
    """The real server's scheme and address (``http://127.0.0.1:8000``)."""
    path: str

    @property
    def mode(self) -> str:
        """Its mitmproxy mode: reverse, to the real server, on its own port."""
        return f"reverse:{self.origin}@{self.port}"
