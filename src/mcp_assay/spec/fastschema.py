"""A compiled validator that answers "valid" fast; :mod:`jsonschema` stays the judge of everything else.

Validating a message the schema has not seen before costs :mod:`jsonschema` a hundred microseconds
and more; ``jsonschema-rs`` (compiled) answers in about one. Most messages are valid, so the compiled
validator is asked first, and only its *yes* is taken: for a message it refuses, the reference
validator runs and says why, in its own words and paths, so every issue a report shows is the one it
always showed.

A yes is only worth taking where the two agree on what valid means. They differ, and the differences
are closed here:

* ``1.0`` is an integer to JSON Schema and to ``jsonschema-rs``, but not to mcp-assay (JSON-RPC ids
  and ``ttlMs`` depend on it, see :data:`~mcp_assay.spec.validator.StrictValidator`): every schema
  that allows integers but not numbers carries :data:`STRICT_INTEGER`, a keyword that refuses floats;
* formats are checked by the very functions :data:`~mcp_assay.spec.validator.FORMAT_CHECKER` uses;
* ``jsonschema-rs`` reads ``inf`` as no number at all and refuses lone surrogates, so it is only
  asked about *clean* values (:func:`mcp_assay.wire.jsontext.fingerprint`), and an error of its own is
  a no;
* no ``$ref`` is ever fetched: the retriever refuses, like the reference's empty registry.

``tests/spec/test_fastschema.py`` compares the two on every message of every recording in
``tests/data`` (and on the cases above).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, NoReturn

import jsonschema_rs
from jsonschema import FormatChecker

__all__ = ["STRICT_INTEGER", "FastValidators", "passes", "strict_integers"]

STRICT_INTEGER: Final = "x-mcp-assay-strict-integer"
"""The keyword added to every schema that allows integers but not numbers: it refuses floats."""


class _StrictInteger:
    """:data:`STRICT_INTEGER`: a float is no integer, whatever its value."""

    def __init__(self, parent_schema: Any, value: Any, schema_path: Any) -> None:
        pass

    def validate(self, instance: Any) -> None:
        if isinstance(instance, float):
            raise ValueError("a float where an integer is required")


def _refuse(uri: str) -> NoReturn:
    raise LookupError(f"mcp-assay retrieves no schema ({uri})")


def strict_integers(node: Any) -> Any:
    """A copy of a schema where each subschema whose ``type`` allows integers but not numbers has
    :data:`STRICT_INTEGER`."""
    if isinstance(node, dict):
        copy = {key: strict_integers(value) for key, value in node.items()}
        kinds = node.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if "integer" in kinds and "number" not in kinds:
            copy[STRICT_INTEGER] = True
        return copy
    if isinstance(node, list):
        return [strict_integers(item) for item in node]
    return node


def passes(validator: Any, instance: Any) -> bool:
    """True when a compiled validator (or ``None``: none could be compiled) passes ``instance``; False means *ask
    the reference validator*, never *invalid* (a compiled validator's own error included)."""
    if validator is None:
        return False
    try:
        return bool(validator.is_valid(instance))
    except Exception:
        return False


def _format_checks(checker: FormatChecker) -> dict[str, Callable[[str], bool]]:
    def check(name: str) -> Callable[[str], bool]:
        return lambda value: checker.conforms(value, name)

    return {name: check(name) for name in checker.checkers}


class FastValidators:
    """Compiled validators for the definitions of one schema document, compiled when first asked for."""

    def __init__(self, document: Mapping[str, Any], format_checker: FormatChecker) -> None:
        self._document = document
        self._formats = _format_checks(format_checker)
        self._defs: dict[str, Any] | None = None
        self._compiled: dict[str, Any] = {}

    def _validator(self, definition: str) -> Any:
        """The compiled validator of ``$defs/<definition>``; ``None`` when it cannot be compiled."""
        if definition not in self._compiled:
            if self._defs is None:
                self._defs = strict_integers(dict(self._document.get("$defs", {})))
            schema = {"$schema": self._document.get("$schema"), "$defs": self._defs, "$ref": f"#/$defs/{definition}"}
            try:
                self._compiled[definition] = jsonschema_rs.Draft202012Validator(
                    schema,
                    formats=self._formats,
                    validate_formats=True,
                    keywords={STRICT_INTEGER: _StrictInteger},
                    retriever=_refuse,
                )
            except Exception:  # a schema it cannot compile: the reference judges every message
                self._compiled[definition] = None
        return self._compiled[definition]

    def valid(self, definition: str, instance: Any) -> bool:
        """True when ``instance`` (a clean value) is valid against ``$defs/<definition>``; False means
        *ask the reference*, never *invalid*."""
        return passes(self._validator(definition), instance)
