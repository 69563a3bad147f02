"""Click parameter types built on :mod:`mcp_assay.userinput.values`: every command checks a kind of value one way.

A flag and its ``MCP_ASSAY_*`` twin are converted by click before the command runs, so a bad
value is a usage error (exit 2) before any work, and click knows which parameter it was; the
command group names the environment variable instead of the flag when that is where the value
came from (:mod:`mcp_assay.cli`). ``run``'s flags take their kinds from the config schema
(:data:`mcp_assay.suite.config.SETTINGS`), so a flag and the config key of the same name
accept exactly the same values.
"""

from __future__ import annotations

import os
from typing import Any

import click

from mcp_assay.report import check_writable
from mcp_assay.spec.sources import parse_spec_path
from mcp_assay.userinput.files import expanded
from mcp_assay.userinput.values import HEADER, MAX_SECONDS, URL, BadValue, Kind, Number, port
from mcp_assay.vocabulary.errors import ConfigError

__all__ = [
    "HEADER_LINES",
    "SECRET_LINES",
    "SECONDS_OR_NONE",
    "URL_TYPE",
    "Checked",
    "ReportSpec",
    "SpecPath",
    "WritableFile",
    "checked_port",
    "readable_file",
    "setting",
]


class Checked(click.ParamType):  # type: ignore[type-arg]
    """A click type that converts with a :class:`~mcp_assay.userinput.values.Kind` and fails with its one line."""

    def __init__(self, kind: Kind, name: str = "value", *, keep: bool = False) -> None:
        self.kind = kind
        self.name = name
        self.keep = keep
        """Check only: the command gets the text as given (a library function parses it again)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            converted = self.kind(value)
        except BadValue as exc:
            self.fail(str(exc), param, ctx)
        return value if self.keep else converted


def setting(name: str) -> Checked:
    """The click type of ``run``'s setting ``name``: the config schema's kind for it."""
    from mcp_assay.suite.config import SETTINGS  # the run's settings: only the commands that take them pay for them

    return Checked(SETTINGS[name], name.replace("_", "-"))


def checked_port(low: int = 1) -> Checked:
    """A TCP port; ``low=0`` allows 0 (any free port)."""
    return Checked(port(low), "port")


URL_TYPE = Checked(URL, "url")
SECONDS_OR_NONE = Checked(Number(0, MAX_SECONDS, whole=True, unit="seconds"), "seconds")
"""Whole seconds, where 0 means no limit."""


class _HeaderLines(Checked):
    """``-H "name: value"``; in the environment twin, one header per line (CRLF line ends too)."""

    envvar_list_splitter = "\n"

    def split_envvar_value(self, rv: str) -> list[str]:
        return [line.removesuffix("\r") for line in rv.split("\n") if line.strip()]


HEADER_LINES = _HeaderLines(HEADER, "header")


class _SecretLines(click.ParamType):  # type: ignore[type-arg]
    """``--secret VALUE``: any text is a secret. In the environment twin (``MCP_ASSAY_SECRETS``) one secret per
    line, so a secret holding spaces is scrubbed whole instead of word by word (CRLF line ends too)."""

    name = "text"
    envvar_list_splitter = "\n"

    def split_envvar_value(self, rv: str) -> list[str]:
        return [line.removesuffix("\r") for line in rv.split("\n") if line.strip()]


SECRET_LINES = _SecretLines()


def readable_file(**extra: Any) -> click.Path:
    """An existing file mcp-assay can read (not a folder)."""
    return click.Path(exists=True, dir_okay=False, readable=True, **extra)


class WritableFile(click.Path):
    """A file mcp-assay will write: not a folder, in a folder that exists, and writable now."""

    def __init__(self, **extra: Any) -> None:
        super().__init__(dir_okay=False, **extra)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if "\x00" in os.fsdecode(value):  # no file is named so (a config file can spell it; argv cannot)
            self.fail("a path holds no NUL character", param, ctx)
        converted = super().convert(value, param, ctx)
        try:
            path = expanded(os.fsdecode(converted), "")
        except ConfigError as exc:
            self.fail(str(exc).strip(), param, ctx)
        folder = path.resolve().parent
        if not folder.is_dir():
            self.fail(f"folder {path.parent} does not exist", param, ctx)
        existed = path.exists()
        try:  # the one sure test: open it for appending (never truncating), and leave no new file behind
            with path.open("a"):
                pass
        except OSError as exc:
            self.fail(f"{path} cannot be written ({exc.strerror or exc})", param, ctx)
        if not existed:
            path.unlink(missing_ok=True)
        return converted


class ReportSpec(click.ParamType):  # type: ignore[type-arg]
    """``--report FORMAT[:PATH]``: the format is known and a report can be written at the path (tried now); the text
    is kept as given."""

    name = "format[:path]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            check_writable(str(value))
        except ConfigError as exc:
            self.fail(str(exc).removeprefix("--report "), param, ctx)
        return value


class SpecPath(click.ParamType):  # type: ignore[type-arg]
    """``--spec-path [REVISION=]PATH``: a readable file whose revision is named or is its folder's name."""

    name = "[revision=]path"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            parse_spec_path(str(value))
        except ConfigError as exc:
            self.fail(str(exc).removeprefix("--spec-path "), param, ctx)
        return value
