"""The top-level commands, named without importing them: each is imported when it is run or asked for help.

Every ``mcp-assay`` process runs one command, and the tests start hundreds of them. Importing every
command's module (and what each pulls in: the suite, the proxy's fault families, the scale-out
machinery) cost each process about 0.3 s of CPU for code it never ran. The group knows each
command's name, where it lives and its one-line summary; ``mcp-assay --help`` lists them from that
table, and a command's module is imported the first time the command itself is looked up.
tests/cli/test_lazy.py holds the table to the commands it names (same name, same summary).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass

import click

__all__ = ["LazyCommands", "Named"]


@dataclass(frozen=True, slots=True)
class Named:
    """A command known by name before its module is imported."""

    name: str
    module: str
    attribute: str
    summary: str
    """The command's ``short_help``, word for word: what the group's help lists."""


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's commands by name, in the order given; a named command is imported when it is first looked up.

    Iterating, ``len`` and ``in`` never import; ``[name]`` (and so click's ``get_command``) imports the
    one module that defines the command, hands the command to ``adopt`` once, and keeps it.
    """

    def __init__(self, named: tuple[Named, ...], adopt: Callable[[click.Command], None]) -> None:
        self._named = {entry.name: entry for entry in named}
        self._loaded: dict[str, click.Command] = {}
        self._order = [entry.name for entry in named]
        self._adopt = adopt

    def __getitem__(self, name: str) -> click.Command:
        loaded = self._loaded.get(name)
        if loaded is not None:
            return loaded
        entry = self._named[name]  # KeyError for a name the group does not have, as a dict would
        command = getattr(importlib.import_module(entry.module), entry.attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{entry.module}.{entry.attribute} is not a click command")
        self._adopt(command)
        self._loaded[name] = command
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        if name not in self._named and name not in self._loaded:
            self._order.append(name)
        self._named.pop(name, None)
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self._named and name not in self._loaded:
            raise KeyError(name)
        self._named.pop(name, None)
        self._loaded.pop(name, None)
        self._order.remove(name)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, name: object) -> bool:
        return name in self._named or name in self._loaded

    def summary(self, name: str, limit: int) -> tuple[str, bool]:
        """The line the group's help lists for ``name``, and whether the command is hidden, without importing it."""
        loaded = self._loaded.get(name)
        if loaded is not None:
            return loaded.get_short_help_str(limit), loaded.hidden
        return self._named[name].summary, False
