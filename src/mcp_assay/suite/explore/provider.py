"""hypothesis's own generator, drawing from the seed alone.

hypothesis sometimes (one draw in twenty) offers a constant it collected from the source files of
the modules loaded in the process that are neither the standard library nor site-packages: in an
editable install, mcp-assay's own; under pytest, the user's. Then the same seed would draw other
arguments in another process, or later in the same one. This provider is hypothesis's default one
without those local constants, so the same seed and schema always draw the same arguments. It is
imported only by hypothesis, by name, when :mod:`.draws` asks for it (the ``explore`` extra present).
"""

from __future__ import annotations

from functools import cached_property

from hypothesis.internal.conjecture.providers import HypothesisProvider
from hypothesis.internal.constants_ast import Constants

__all__ = ["SeedOnlyProvider"]


class SeedOnlyProvider(HypothesisProvider):
    """hypothesis's provider, without the constants of the process's local modules."""

    @cached_property
    def _local_constants(self) -> Constants:
        return Constants()
