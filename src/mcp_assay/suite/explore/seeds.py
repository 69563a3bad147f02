"""The seed of an exploration: given (``--seed``) or drawn once per run, and each tool's own, derived from it.

The run's seed is printed whatever happens, so any run can be repeated: the same seed draws the
same arguments for the same tool in the same revision, whatever else the run explores.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace

from mcp_assay.suite.config import SuiteConfig

__all__ = ["seeded", "tool_seed"]


def seeded(config: SuiteConfig) -> SuiteConfig:
    """``config`` with a seed: the given one, else one drawn now, once per run (every revision explores with it)."""
    if not config.explore or config.seed is not None:
        return config
    return replace(config, seed=random.SystemRandom().randrange(2**32))


def tool_seed(seed: int, revision: str, tool: str) -> int:
    """One tool's seed in one revision, derived from the run's."""
    digest = hashlib.sha256(f"{seed}:{revision}:{tool}".encode()).hexdigest()
    return int(digest[:8], 16)
