"""Known defects in the published schemas and examples, corrected before validation.

Each erratum names the requirement the schema fails to express, detects whether the defect is
still present in the file being loaded, and patches a copy of the ``$defs`` only then. Tests
assert that every erratum still applies to the pinned files, so the day upstream fixes one the
test fails and the erratum can be retired instead of silently lingering.

A patched part of the schema carries ``$comment: "mcp-assay erratum <ID>"`` (or, for a property an
erratum makes required, an ``x-mcp-assay-errata-required`` annotation) so a validation error it
causes can be traced back to the erratum and its requirement.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from mcp_assay.vocabulary.protocol import MODERN_REVISION, MetaKey

__all__ = ["ERRATA", "EXAMPLE_ERRATA", "Erratum", "ExampleErratum", "apply_errata"]

Defs = MutableMapping[str, Any]


@dataclass(frozen=True, slots=True)
class Erratum:
    """A schema defect and its correction."""

    id: str
    requirements: tuple[str, ...]
    summary: str
    present: Callable[[Defs], bool]
    patch: Callable[[Defs], None]


REQUIRED_MARK = "x-mcp-assay-errata-required"
"""Annotation on a patched definition: property name -> erratum that made it required."""


def comment(erratum_id: str) -> str:
    return f"mcp-assay erratum {erratum_id}"


def _input_required_present(defs: Defs) -> bool:
    definition = defs.get("InputRequiredResult")
    if not isinstance(definition, dict):
        return False
    constrained = any(key in definition for key in ("anyOf", "oneOf", "allOf", "minProperties"))
    return definition.get("required") == ["resultType"] and not constrained


def _input_required_patch(defs: Defs) -> None:
    defs["InputRequiredResult"] = {
        **defs["InputRequiredResult"],
        "anyOf": [
            {"$comment": comment("E1"), "required": ["inputRequests"]},
            {"$comment": comment("E1"), "required": ["requestState"]},
        ],
    }


def _ack_subscription_present(defs: Defs) -> bool:
    params = defs.get("SubscriptionsAcknowledgedNotificationParams")
    if not isinstance(params, dict):
        return False
    return "_meta" not in params.get("required", [])


def _ack_subscription_patch(defs: Defs) -> None:
    params = dict(defs["SubscriptionsAcknowledgedNotificationParams"])
    properties = dict(params.get("properties", {}))
    properties["_meta"] = {
        "allOf": [
            {"$ref": "#/$defs/NotificationMetaObject"},
            {"$comment": comment("E2"), "required": [MetaKey.SUBSCRIPTION_ID]},
        ]
    }
    params["properties"] = properties
    params["required"] = [*params.get("required", []), "_meta"]
    params[REQUIRED_MARK] = {"_meta": "E2"}
    defs["SubscriptionsAcknowledgedNotificationParams"] = params


ERRATA: tuple[Erratum, ...] = (
    Erratum(
        id="E1",
        requirements=("MRTR-02",),
        summary="InputRequiredResult requires only resultType; the MRTR page requires inputRequests, "
        "requestState or both",
        present=_input_required_present,
        patch=_input_required_patch,
    ),
    Erratum(
        id="E2",
        requirements=("SUB-04",),
        summary="the subscription acknowledgement's _meta (and its subscriptionId) is optional in the schema "
        "although the subscriptions page requires the listen id on it",
        present=_ack_subscription_present,
        patch=_ack_subscription_patch,
    ),
)


@dataclass(frozen=True, slots=True)
class ExampleErratum:
    """An upstream example that contradicts the specification it illustrates."""

    id: str
    revision: str
    path: str
    requirements: tuple[str, ...]
    summary: str


EXAMPLE_ERRATA: tuple[ExampleErratum, ...] = (
    ExampleErratum(
        id="X1",
        revision=MODERN_REVISION,
        path="ReadResourceResultResponse/read-resource-result-response.json",
        requirements=("RES-06",),
        summary="a complete resources/read result without ttlMs and cacheScope; it validates only through the "
        "InputRequiredResult branch of the response union",
    ),
)


def apply_errata(defs: Defs) -> tuple[str, ...]:
    """Patch ``defs`` in place with every erratum whose defect is present; return the ids applied."""
    applied = []
    for erratum in ERRATA:
        if erratum.present(defs):
            erratum.patch(defs)
            applied.append(erratum.id)
    return tuple(applied)
