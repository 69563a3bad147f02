"""Reading a file the user named on the command line (a config, a baseline, tool arguments).

Bad user input gets one clear error before any work: a file that cannot be read, is not UTF-8
text, is larger than any such file should be (``/dev/zero``) or cannot be parsed becomes one
line naming the flag and the path, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mcp_assay.vocabulary.errors import ConfigError

__all__ = ["MAX_USER_FILE", "UnreadableFile", "expanded", "read_text", "read_yaml"]

MAX_USER_FILE = 16 * 1024 * 1024
"""The largest settings file read: far past any real one, short of exhausting memory."""


class UnreadableFile(ValueError):
    """A named file that cannot be used as text; the message is one line, without the path."""


def expanded(path: str | Path, flag: str) -> Path:
    """``path`` with a leading ``~`` or ``~user`` expanded; a :class:`ConfigError` naming ``flag`` when it names a
    home folder that cannot be found (``~nosuchuser/x``: pathlib raises, which is no reason for a traceback)."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        raise ConfigError(f"{flag} {path}: no home folder is known for {str(path).split('/')[0]}") from None


def read_text(path: str | Path) -> str:
    """The file's text, or :class:`UnreadableFile` saying why not (missing, a folder, binary, huge)."""
    try:
        where = Path(path).expanduser()
    except RuntimeError:
        raise UnreadableFile("it names a home folder that cannot be found") from None
    try:
        with where.open("rb") as handle:
            data = handle.read(MAX_USER_FILE + 1)
    except OSError as exc:
        raise UnreadableFile(f"cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_USER_FILE:
        raise UnreadableFile(f"larger than {MAX_USER_FILE // (1024 * 1024)} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UnreadableFile("not a UTF-8 text file") from None


def read_yaml(path: str | Path, flag: str) -> Any:
    """The parsed document (YAML, so JSON too); ``flag`` names the option in the error (``--config``)."""
    try:
        return yaml.safe_load(read_text(path))
    except UnreadableFile as exc:
        raise ConfigError(f"{flag} {path}: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"{flag} {path}: not valid YAML or JSON ({exc.problem or exc}{where})") from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise ConfigError(f"{flag} {path}: not valid YAML or JSON ({' '.join(str(exc).split())})") from None
