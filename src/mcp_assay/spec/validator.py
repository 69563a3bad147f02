"""Validate one MCP message against the one definition that applies to it.

The schema's unions are too permissive to validate against directly (``ServerResult`` contains a
bare ``Result``; ``CallToolResultResponse`` lets ``{"resultType": "complete"}`` through its
``InputRequiredResult`` branch). So the validator dispatches in code: requests and notifications
by ``method``; results by the method of the request they answer and, where the revision has
multi round-trip results, by ``resultType``; errors by ``error.code``. The method-to-definition
maps are read from the schema itself.

Integers are checked strictly (``1.0`` is not an integer id), formats are enforced (``uri``,
``uri-template``, and base64 ``byte``), and the registry is empty, so no ``$ref`` is ever
retrieved from the network.

A compiled validator (:mod:`mcp_assay.spec.fastschema`) is asked first and only its *valid* is
taken; every issue a report shows comes from :mod:`jsonschema`.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import referencing
from jsonschema import Draft202012Validator, FormatChecker, validators
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from mcp_assay.spec.errata import REQUIRED_MARK
from mcp_assay.spec.fastschema import FastValidators
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire import jsontext
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message

__all__ = ["FORMAT_CHECKER", "MessageValidator", "SchemaIssue", "StrictValidator", "Validation"]


def _is_strict_integer(checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


StrictValidator: type[Validator] = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_strict_integer),
)
"""Draft 2020-12 where ``1.0`` is not an integer (JSON-RPC ids and ``ttlMs`` depend on it)."""

FORMAT_CHECKER = FormatChecker()


@FORMAT_CHECKER.checks("byte", raises=(binascii.Error, ValueError))
def _is_base64(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    base64.b64decode(instance, validate=True)
    return True


class SchemaIssue(NamedTuple):
    """One way a message fails its definition."""

    path: str
    """Where in the message, e.g. ``result.tools[0].inputSchema``; empty for the message itself."""
    message: str
    erratum: str | None = None
    """The erratum whose correction the message fails, if the issue comes from one."""

    def render(self) -> str:
        where = f"{self.path}: " if self.path else ""
        tag = f" (erratum {self.erratum})" if self.erratum else ""
        return f"{where}{self.message}{tag}"


@dataclass(frozen=True, slots=True)
class Validation:
    """The outcome of validating one message."""

    definition: str | None
    """The ``$defs`` entry the message was judged against (``None``: nothing applicable)."""
    issues: tuple[SchemaIssue, ...] = ()
    note: str = ""
    """Why the validation was partial, e.g. the method is not defined by this revision."""

    @property
    def ok(self) -> bool:
        return not self.issues


def _render_path(prefix: str, parts: Iterable[Any]) -> str:
    text = prefix
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _erratum_of(error: ValidationError) -> str | None:
    if error.validator == "required" and isinstance(error.schema, dict):
        marks = error.schema.get(REQUIRED_MARK)
        match = re.match(r"^'(.+)' is a required property$", error.message)
        if isinstance(marks, dict) and match and match.group(1) in marks:
            return str(marks[match.group(1)])
    candidates: list[Any] = [error.schema]
    if isinstance(error.schema, dict):
        for key in ("anyOf", "allOf", "oneOf"):
            branch = error.schema.get(key)
            if isinstance(branch, list):
                candidates.extend(branch)
    for candidate in candidates:
        if isinstance(candidate, dict):
            marker = candidate.get("$comment")
            if isinstance(marker, str) and marker.startswith("mcp-assay erratum "):
                return marker.removeprefix("mcp-assay erratum ")
    return None


def _explain(error: ValidationError) -> list[ValidationError]:
    """Replace an ``anyOf`` failure by the errors of the branch the instance most plausibly meant.

    The plausible branch is one whose own ``required`` members are all present (the instance has
    that branch's discriminating fields), with the fewest errors; errata markers are preserved by
    keeping the union error when no branch stands out.
    """
    if error.validator not in ("anyOf", "oneOf") or not error.context:
        return [error]
    branches: dict[int, list[ValidationError]] = {}
    for sub in error.context:
        index = sub.schema_path[0] if sub.schema_path and isinstance(sub.schema_path[0], int) else -1
        branches.setdefault(index, []).append(sub)
    if _erratum_of(error) is not None:
        return [error]

    def top_level_required(errors: list[ValidationError]) -> bool:
        return any(e.validator == "required" and len(e.path) == 0 for e in errors)

    candidates = [errors for errors in branches.values() if not top_level_required(errors)]
    if len(candidates) != 1:
        return [error]
    return [leaf for sub in candidates[0] for leaf in _explain(sub)]


def _short(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


class MessageValidator:
    """Validators for one revision's schema, compiled once per definition."""

    def __init__(self, revision: str, document: Mapping[str, Any]) -> None:
        self.revision = revision
        self.document = document
        self._issues: dict[tuple[str, str, bytes | str | None], tuple[SchemaIssue, ...]] = {}
        self._fast = FastValidators(document, FORMAT_CHECKER)
        defs: Mapping[str, Any] = document.get("$defs", {})
        self.defs = defs
        self.request_defs: dict[str, str] = {}
        self.notification_defs: dict[str, str] = {}
        self.embedded_defs: dict[str, str] = {}
        for name, definition in defs.items():
            if not isinstance(definition, dict):
                continue
            props = definition.get("properties", {})
            method = props.get("method", {}).get("const") if isinstance(props, dict) else None
            if not isinstance(method, str):
                continue
            if "jsonrpc" not in props:
                self.embedded_defs.setdefault(method, name)
            elif "id" in props:
                self.request_defs.setdefault(method, name)
            else:
                self.notification_defs.setdefault(method, name)
        self.client_requests = self._union_methods("ClientRequest")
        self.server_requests = self._union_methods("ServerRequest")
        self.client_notifications = self._union_methods("ClientNotification")
        self.server_notifications = self._union_methods("ServerNotification")
        self.result_defs = {method: self._result_def(name) for method, name in self.request_defs.items()}
        self.input_required_methods = self._input_required_methods()
        self.error_response_defs, self.error_object_defs = self._error_defs()

    # -- maps read from the schema ---------------------------------------------------------------
    def _union_methods(self, union: str) -> frozenset[str]:
        definition = self.defs.get(union)
        if not isinstance(definition, dict):
            return frozenset()
        members = [definition]
        if isinstance(definition.get("anyOf"), list):
            members = [self._deref(item) for item in definition["anyOf"]]
        methods = set()
        for member in members:
            const = member.get("properties", {}).get("method", {}).get("const")
            if isinstance(const, str):
                methods.add(const)
        return frozenset(methods)

    def _deref(self, node: Any) -> dict[str, Any]:
        if isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/"):
            target = self.defs.get(node["$ref"].removeprefix("#/$defs/"), {})
            return target if isinstance(target, dict) else {}
        return node if isinstance(node, dict) else {}

    def _result_def(self, request_def: str) -> str:
        candidate = request_def.removesuffix("Request") + "Result"
        if candidate in self.defs:
            return candidate
        return "EmptyResult" if "EmptyResult" in self.defs else "Result"

    def _input_required_methods(self) -> frozenset[str]:
        methods = set()
        for method, result_def in self.result_defs.items():
            response = self.defs.get(result_def + "Response")
            if not isinstance(response, dict):
                continue
            branches = response.get("properties", {}).get("result", {}).get("anyOf", [])
            refs = {item.get("$ref") for item in branches if isinstance(item, dict)}
            if "#/$defs/InputRequiredResult" in refs:
                methods.add(method)
        return frozenset(methods)

    def _error_defs(self) -> tuple[dict[int, str], dict[int, str]]:
        whole: dict[int, str] = {}
        bare: dict[int, str] = {}
        for name, definition in self.defs.items():
            if not isinstance(definition, dict):
                continue
            props = definition.get("properties", {})
            if not isinstance(props, dict):
                continue
            code = props.get("code", {}).get("const") if isinstance(props.get("code"), dict) else None
            if isinstance(code, int) and "message" in props:
                bare[code] = name
                continue
            error = props.get("error")
            if isinstance(error, dict):
                for part in error.get("allOf", []):
                    const = part.get("properties", {}).get("code", {}).get("const") if isinstance(part, dict) else None
                    if isinstance(const, int):
                        whole[const] = name
        return whole, bare

    # -- validation ------------------------------------------------------------------------------
    @lru_cache(maxsize=512)  # noqa: B019 - one validator per definition for the life of the object
    def _compiled(self, definition: str) -> Validator:
        schema = {
            "$schema": self.document.get("$schema"),
            "$defs": self.defs,
            "$ref": f"#/$defs/{definition}",
        }
        return StrictValidator(schema, format_checker=FORMAT_CHECKER, registry=referencing.Registry())

    def validate_def(self, definition: str, instance: Any, prefix: str = "") -> tuple[SchemaIssue, ...]:
        """All issues of ``instance`` against ``$defs/<definition>``, paths prefixed with ``prefix``.

        Traffic repeats itself (a client lists the same tools again and again), so the issues of a
        body already validated are reused: the key is the body's text with a request id of a valid
        type written as a placeholder of that type, which no schema tells apart."""
        return self._validate_text(definition, instance, prefix, _fingerprint(instance))

    def _validate_text(
        self, definition: str, instance: Any, prefix: str, text: bytes | str | None
    ) -> tuple[SchemaIssue, ...]:
        """:meth:`validate_def` of an instance whose text (the key its issues are remembered by) is known already."""
        if definition not in self.defs:
            return (SchemaIssue(prefix, f"the schema has no definition {definition!r}"),)
        key = (definition, prefix, text)
        memo = self._issues
        found = memo.get(key) if text is not None else None
        if found is None:
            if isinstance(text, bytes) and self._fast.valid(definition, instance):
                found = ()  # a clean value the compiled validator passes (see fastschema)
            else:
                found = self._validate_def(definition, instance, prefix)
            if text is not None:
                if len(memo) >= MEMO_SIZE:
                    memo.clear()
                memo[key] = found
        return found

    def _validate_def(self, definition: str, instance: Any, prefix: str) -> tuple[SchemaIssue, ...]:
        errors = sorted(
            (leaf for error in self._compiled(definition).iter_errors(instance) for leaf in _explain(error)),
            key=lambda e: [str(part) for part in e.absolute_path],
        )
        return tuple(
            SchemaIssue(_render_path(prefix, error.absolute_path), _short(error.message), _erratum_of(error))
            for error in errors
        )

    def definition_for_request(self, method: str) -> str | None:
        return self.request_defs.get(method)

    def result_definition(self, method: str, result: Any) -> str | None:
        """The result definition for an answer to ``method``, chosen by ``resultType`` where it matters."""
        base = self.result_defs.get(method)
        if base is None:
            return None
        if (
            isinstance(result, dict)
            and result.get("resultType") == "input_required"
            and "InputRequiredResult" in self.defs
        ):
            return "InputRequiredResult"
        return base

    def validate(self, message: Message, request: Message | None = None) -> Validation:
        """Validate a parsed message; ``request`` is the request a response answers, when known."""
        if message.payload is MISSING or message.kind in (Kind.UNPARSEABLE, Kind.BATCH, Kind.INVALID):
            return Validation(None, note="not a single JSON-RPC message; judged by the JSON-RPC rules")
        if message.kind is Kind.REQUEST:
            return self._validate_call(message, self.request_defs, "JSONRPCRequest")
        if message.kind is Kind.NOTIFICATION:
            return self._validate_call(message, self.notification_defs, "JSONRPCNotification")
        if message.kind is Kind.RESULT:
            return self._validate_result(message, request)
        return self._validate_error(message)

    def _validate_call(self, message: Message, table: Mapping[str, str], generic: str) -> Validation:
        method = message.method or ""
        definition = table.get(method)
        if definition is None:
            issues = self.validate_def(generic, message.payload)
            return Validation(generic, issues, note=f"{method} is not defined by {self.revision}")
        note = ""
        if method not in self._allowed_methods(message):
            note = f"{method} is not sent by the {message.sender.value} in {self.revision}"
        return Validation(definition, self.validate_def(definition, message.payload), note=note)

    def _allowed_methods(self, message: Message) -> frozenset[str]:
        """Methods this side may send as this kind of message; empty when the revision defines none."""
        client = message.sender is Side.CLIENT
        if message.kind is Kind.REQUEST:
            return self.client_requests if client else self.server_requests
        return self.client_notifications if client else self.server_notifications

    def _validate_result(self, message: Message, request: Message | None) -> Validation:
        payload, result = message.payload, message.result
        result_text = _fingerprint(result)  # the bulk of the envelope's text too: written once for both
        envelope_text = _envelope_text(payload, result_text)
        if envelope_text is None:
            envelope = self.validate_def("JSONRPCResultResponse", payload)
        else:
            envelope = self._validate_text("JSONRPCResultResponse", payload, "", envelope_text)
        if request is None or request.method is None:
            return Validation("JSONRPCResultResponse", envelope, note="the request it answers was not seen")
        definition = self.result_definition(request.method, result)
        if definition is None:
            return Validation(
                "JSONRPCResultResponse", envelope, note=f"{request.method} is not defined by {self.revision}"
            )
        specific = self._validate_text(definition, result, "result", result_text)
        seen = {(issue.path, issue.message) for issue in specific}
        merged = specific + tuple(issue for issue in envelope if (issue.path, issue.message) not in seen)
        return Validation(definition, merged)

    def _validate_error(self, message: Message) -> Validation:
        code = message.error_code
        whole = self.error_response_defs.get(code) if isinstance(code, int) and not isinstance(code, bool) else None
        definition = whole or "JSONRPCErrorResponse"
        issues = self.validate_def(definition, message.payload)
        bare = self.error_object_defs.get(code) if isinstance(code, int) and not isinstance(code, bool) else None
        if bare is not None and isinstance(message.error, dict):
            seen = {(issue.path, issue.message) for issue in issues}
            extra = tuple(
                issue
                for issue in self.validate_def(bare, message.error, prefix="error")
                if (issue.path, issue.message) not in seen
            )
            issues += extra
            definition = f"{definition} + {bare}"
        return Validation(definition, issues)


MEMO_SIZE = 4096
"""Distinct bodies whose validation is remembered (the memo starts afresh when full)."""
_PLACEHOLDER_IDS = {int: 0, str: ""}


def _fingerprint(instance: Any) -> bytes | str | None:
    """The text a validation is remembered by: bytes for a clean value (:func:`~mcp_assay.wire.jsontext.fingerprint`),
    else the standard library's text; ``None`` for what cannot be written as JSON text."""
    clean = True
    if isinstance(instance, dict) and "jsonrpc" in instance and type(instance.get("id")) in _PLACEHOLDER_IDS:
        ident = instance["id"]
        clean = not isinstance(ident, str) or ident.isascii() or jsontext.fingerprint(ident) is not None
        instance = {**instance, "id": _PLACEHOLDER_IDS[type(ident)]}
    fast = jsontext.fingerprint(instance) if clean else None
    if fast is not None:
        return fast
    try:
        return json.dumps(instance, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None


def _envelope_text(payload: Any, result_text: bytes | str | None) -> bytes | None:
    """The text a result response's validation is remembered by, made of its result's text and the text of the rest
    (the result written as ``0``): one value for one response, as :func:`_fingerprint` of the whole would be; ``None``
    unless both are clean (then the whole is written as before)."""
    if not isinstance(result_text, bytes) or not isinstance(payload, dict) or "result" not in payload:
        return None
    rest = _fingerprint({**payload, "result": 0})
    return rest + b"\x00" + result_text if isinstance(rest, bytes) else None


def canonical(value: Any) -> str:
    """Canonical JSON text, for comparing values regardless of key order."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
