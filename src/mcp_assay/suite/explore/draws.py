"""Arguments drawn from a tool's ``inputSchema`` by hypothesis, through hypothesis-jsonschema.

The strategy is the maintained one (:func:`hypothesis_jsonschema.from_schema`): it reads the whole
schema (references, combinators, formats, patterns) and hypothesis weights its draws toward small,
boundary and unusual values (empty strings, non-ASCII text, bounds, nesting the schema allows).
Draws are collected first and sent afterwards: hypothesis runs its generate phase alone, seeded, with
no database, and from the seed alone (:mod:`.provider`), so the same seed draws the same arguments
(drawing is CPU work, and stops at the share of ``--explore-time`` it is given: fewer draws then);
hypothesis's own files go to mcp-assay's user cache, never the working folder, and the failing
examples mcp-assay keeps are its own (:mod:`.examples`).

Formats that name a place — URIs, host names, e-mail addresses, IP addresses — are drawn from the
documentation ranges (``example.com``, ``192.0.2.0/24``, ``2001:db8::/32``), so an argument never
points a tool at a real host: exploring sends nothing that leads away from the target.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_assay.suite.explore.examples import explore_cache
from mcp_assay.suite.explore.schemas import canonical, inside
from mcp_assay.vocabulary.errors import ConfigError

__all__ = ["EXTRA", "Drawn", "available", "draw", "require"]

EXTRA = "pip install 'mcp-assay[explore]'"
"""How to add what ``--explore`` needs."""


def available() -> bool:
    """Whether hypothesis and hypothesis-jsonschema can be imported (the ``explore`` extra); hypothesis is readied
    first (:func:`_prepared`), since importing hypothesis-jsonschema already reads and writes hypothesis's files."""
    try:
        _prepared()
        import hypothesis_jsonschema  # noqa: F401
    except ImportError:
        return False
    return True


def require() -> None:
    """Refuse ``--explore`` before any work when the extra is missing (a usage error: exit 2)."""
    if not available():
        raise ConfigError(f"--explore needs hypothesis and hypothesis-jsonschema: {EXTRA}")


@dataclass(frozen=True, slots=True)
class Drawn:
    """What hypothesis drew for one schema, or why it could draw less than asked."""

    arguments: tuple[dict[str, Any], ...]
    reason: str = ""


def _safe_formats() -> dict[str, Any]:
    from hypothesis import strategies as st

    word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=12)
    uri = st.builds(lambda path: f"https://example.com/{path}", word)
    host = st.builds(lambda name: f"{name}.example.com", word)
    return {
        "uri": uri,
        "uri-reference": uri,
        "iri": uri,
        "iri-reference": uri,
        "url": uri,
        "hostname": host,
        "idn-hostname": host,
        "email": st.builds(lambda name: f"{name}@example.com", word),
        "idn-email": st.builds(lambda name: f"{name}@example.com", word),
        "ipv4": st.builds(lambda last: f"192.0.2.{last}", st.integers(0, 255)),
        "ipv6": st.builds(lambda last: f"2001:db8::{last:x}", st.integers(0, 0xFFFF)),
    }


BACKEND = "mcp-assay-seed-only"
"""The name :mod:`.provider` is registered under."""


def _prepared() -> dict[str, Any]:
    """hypothesis readied for a run of mcp-assay: its own files in mcp-assay's user cache, never the working folder
    (unless the user says where, ``HYPOTHESIS_STORAGE_DIRECTORY``), and the provider that draws from the seed alone.
    The settings to add: the backend, when this hypothesis has the hooks it needs."""
    from hypothesis import configuration

    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY") and configuration.__dict__.get(_HOME) is None:
        configuration.set_hypothesis_home_dir(explore_cache() / "hypothesis")
    try:
        from hypothesis.internal.conjecture.providers import AVAILABLE_PROVIDERS

        from mcp_assay.suite.explore import provider  # noqa: F401 - it must import, or hypothesis will fail to
    except ImportError:
        return {}
    AVAILABLE_PROVIDERS.setdefault(BACKEND, "mcp_assay.suite.explore.provider.SeedOnlyProvider")
    return {"backend": BACKEND}


_HOME = "__hypothesis_home_directory"
"""hypothesis's module global naming its storage folder (``None`` until something sets it)."""


class _OutOfTime(Exception):
    """Raised inside the drawing loop once its deadline has passed (hypothesis, generating only, stops at once)."""


def draw(schema: Mapping[str, Any], count: int, seed: int, deadline: float | None = None) -> Drawn:
    """Up to ``count`` distinct argument objects inside ``schema``, the same ones for the same seed; drawing stops
    at ``deadline`` (``time.monotonic()``), with what was drawn by then."""
    extra = _prepared()  # first: importing hypothesis-jsonschema already reads hypothesis's files
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as seeded
    from hypothesis.errors import HypothesisException
    from hypothesis_jsonschema import from_schema

    found: dict[str, dict[str, Any]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overriding the standard formats is deliberate (see the module's text)
        try:
            strategy = from_schema(dict(schema), custom_formats=_safe_formats())
        except Exception as exc:  # noqa: BLE001 - a schema the library cannot draw from is a reason, not a crash
            return Drawn((), f"hypothesis-jsonschema cannot draw from it ({type(exc).__name__}: {str(exc)[:160]})")

        @settings(
            max_examples=max(count, 1), database=None, deadline=None, phases=[Phase.generate], derandomize=False,
            suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False, **extra,
        )  # fmt: skip
        @seeded(seed)
        @given(strategy)
        def collect(value: Any) -> None:
            if deadline is not None and time.monotonic() >= deadline:
                raise _OutOfTime
            if isinstance(value, dict) and inside(schema, value):
                found.setdefault(canonical(value), value)

        reason = ""
        try:
            collect()
        except _OutOfTime:
            reason = f"hypothesis drew {len(found)} argument set(s) in the share of --explore-time drawing may take"
        except HypothesisException as exc:
            reason = f"hypothesis stopped drawing ({type(exc).__name__}: {str(exc)[:160]})"
        except Exception as exc:  # noqa: BLE001 - the library's own failure on an odd schema
            reason = f"hypothesis-jsonschema failed on it ({type(exc).__name__}: {str(exc)[:160]})"
    return Drawn(tuple(list(found.values())[:count]), reason)
