"""Reading a YAML file the user named on the command line (a config, a baseline).

Bad user input gets one clear error before any work: a file that cannot be read or parsed becomes
a :class:`~mcp_assay.errors.ConfigError` naming the flag and the path, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mcp_assay.errors import ConfigError

__all__ = ["read_yaml"]


def read_yaml(path: str | Path, flag: str) -> Any:
    """The parsed document (YAML, so JSON too); ``flag`` names the option in the error (``--config``)."""
    try:
        return yaml.safe_load(Path(path).expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{flag} {path}: cannot read it ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{flag} {path}: not valid YAML or JSON ({exc})") from None
