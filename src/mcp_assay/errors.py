"""Errors mcp-assay raises about itself, never about the software it judges.

Bad output from a server or client under test is data: it becomes a failed verdict with
evidence. These exceptions are for the cases where the tool cannot do its job at all::

    AssayError
    ├── ConfigError      a flag, option, config file or path is wrong (exit 2)
    ├── InsecureTransport  a credential would cross the network in clear text, not allowed (exit 2)
    ├── SpecError        no usable schema for a revision, or a hash that matches no pin (exit 3)
    ├── CatalogueError   a check and the requirement catalogue disagree (a bug in mcp-assay)
    ├── RecordingError   a recording file cannot be read at all (exit 3)
    └── TargetError      the server under test cannot be driven (exit 3)
        └── TargetUnreachable
"""

from __future__ import annotations

__all__ = [
    "AssayError",
    "CatalogueError",
    "ConfigError",
    "InsecureTransport",
    "RecordingError",
    "SpecError",
    "TargetError",
    "TargetUnreachable",
]


class AssayError(Exception):
    """Base class of every error mcp-assay raises on purpose."""

    exit_code: int = 3


class ConfigError(AssayError):
    """A flag, option, configuration file or path given by the user is unusable."""

    exit_code = 2


class InsecureTransport(AssayError):
    """A credential would go over plain http to a host that is not loopback, and the user did not allow it.

    Said in one line (not a usage error with the command's help): the fix is a flag, or https."""

    exit_code = 2


class SpecError(AssayError):
    """No usable schema for a revision, or a schema that matches no pin."""


class CatalogueError(AssayError):
    """A check cites a requirement the catalogue does not have, or restates its level wrongly."""


class RecordingError(AssayError):
    """A recording cannot be read at all (missing, not a recording). Bad records inside are data."""


class TargetError(AssayError):
    """The server under test cannot be driven."""


class TargetUnreachable(TargetError):
    """The target refused or dropped the connection before any MCP exchange."""
