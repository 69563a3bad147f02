"""``_meta`` keys (META-05..08): one key grammar, reserved prefixes, and W3C trace context.

Every ``_meta`` object in either revision follows one key grammar, with prefixes whose second
label is ``modelcontextprotocol`` or ``mcp`` reserved for the protocol; a prefix should be a
reverse-DNS name, and the W3C trace keys keep their W3C syntax.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from mcp_assay.spec.checks import Finding, Result, failed, message_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.envelopes import meta_key_problem, meta_objects
from mcp_assay.spec.rules.shared.reads import ANY_ENVELOPE
from mcp_assay.vocabulary.protocol import MetaKey
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.jsonrpc import Message

RESERVED_LABELS = frozenset({"modelcontextprotocol", "mcp"})
KNOWN_RESERVED_KEYS = frozenset(
    {
        MetaKey.PROTOCOL_VERSION,
        MetaKey.CLIENT_CAPABILITIES,
        MetaKey.CLIENT_INFO,
        MetaKey.LOG_LEVEL,
        MetaKey.SERVER_INFO,
        MetaKey.SUBSCRIPTION_ID,
        MetaKey.RELATED_TASK,
        MetaKey.MODEL_IMMEDIATE_RESPONSE,
    }
)
"""Reserved-prefix keys the specification (or its tasks utility) defines."""

TRACE_KEYS = ("traceparent", "tracestate", "baggage")

# Top-level domains a reverse-DNS prefix plausibly starts with, besides every two-letter country code.
GENERIC_TLDS = frozenset(
    {
        "com", "org", "net", "edu", "gov", "mil", "int", "info", "biz", "name", "pro", "dev", "app", "cloud",
        "tech", "xyz", "online", "site", "page", "run", "tools", "software", "systems", "solutions", "services",
        "company", "global", "world", "studio", "design", "codes", "engineering", "works", "zone", "store",
        "shop", "blog", "io", "ai", "arpa",
    }
)  # fmt: skip


def _reserved_prefix(key: str) -> str | None:
    if "/" not in key:
        return None
    prefix = key.split("/", 1)[0]
    labels = prefix.split(".")
    if len(labels) >= 2 and labels[1].lower() in RESERVED_LABELS:
        return prefix
    return None


def _looks_like_tld(label: str) -> bool:
    lowered = label.lower()
    return (len(lowered) == 2 and lowered.isalpha()) or lowered in GENERIC_TLDS or lowered.startswith("xn--")


REVERSE_DNS, FORWARD_DNS, NO_TLD = 1, 2, 3
"""How a well-formed prefixed key's prefix reads (META-07): reversed, forward, or not starting with a domain."""


class KeyFacts(NamedTuple):
    """What the three key rules ask of one ``_meta`` key, worked out once per distinct key (:func:`key_facts`)."""

    problem: str | None
    """Why the key breaks the grammar (META-05), or ``None``."""
    reserved: str | None
    """The reserved prefix it uses (META-06), or ``None``."""
    dns: int
    """For a well-formed prefixed key (META-07): :data:`REVERSE_DNS`, :data:`FORWARD_DNS` or :data:`NO_TLD`; else 0."""


def key_facts(key: str) -> KeyFacts:
    """The facts of one key: traffic repeats a handful of keys (the protocol's own, a peer's few), so each distinct
    key is read once and remembered (up to :data:`KEYS_KEPT`; the memory starts afresh when full)."""
    facts = _KEY_FACTS.get(key)
    if facts is None:
        facts = _read_key(key)
        if len(_KEY_FACTS) >= KEYS_KEPT:
            _KEY_FACTS.clear()
        _KEY_FACTS[key] = facts
    return facts


def _read_key(key: str) -> KeyFacts:
    problem = meta_key_problem(key)
    dns = 0
    if "/" in key and problem is None:
        labels = key.split("/", 1)[0].split(".")
        if _looks_like_tld(labels[0]):
            dns = REVERSE_DNS
        elif len(labels) > 1 and _looks_like_tld(labels[-1]):
            dns = FORWARD_DNS
        else:
            dns = NO_TLD
    return KeyFacts(problem, _reserved_prefix(key), dns)


KEYS_KEPT = 4096
_KEY_FACTS: dict[str, KeyFacts] = {}
"""The facts of the distinct keys met lately (:func:`key_facts`)."""

# The three key rules below read the same _meta objects (walked once per message, :func:`meta_objects`) and the
# same facts of each key (:func:`key_facts`, looked up inline first: a call per key costs more than the lookup); each
# still judges on its own, and returns its findings as a list (or the one finding, or nothing) rather than a generator
# the engine would have to drain.


@message_check(requirements="META-05", level=Level.MUST, subject="messages with _meta", methods=ANY_ENVELOPE)
def meta_keys_follow_the_key_grammar(message: Message, ctx: Context) -> Result:
    """Every key of every _meta object is an optional reverse-DNS prefix plus '/' and a well-formed name."""
    found: list[Finding] = []
    for path, meta in meta_objects(message):
        problems = [problem for key in meta if (problem := (_KEY_FACTS.get(key) or key_facts(key)).problem) is not None]
        if problems:
            more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
            found.append(failed(message, f"{path}: {problems[0]}{more}"))
        else:
            found.append(passed(message))
    return found[0] if len(found) == 1 else found or None


@message_check(requirements="META-06", level=Level.MUST_NOT, subject="reserved-prefix _meta keys", methods=ANY_ENVELOPE)
def reserved_meta_prefixes_hold_only_defined_keys(message: Message, ctx: Context) -> Result:
    """Keys under a reserved prefix (second label modelcontextprotocol or mcp) are ones MCP defines."""
    found: list[Finding] = []
    for path, meta in meta_objects(message):
        for key in meta:
            prefix = (_KEY_FACTS.get(key) or key_facts(key)).reserved
            if prefix is None:
                continue
            if key in KNOWN_RESERVED_KEYS:
                found.append(passed(message))
            else:
                found.append(
                    failed(
                        message,
                        f"{path} uses {key!r}: the prefix {prefix}/ is reserved for MCP, which defines no such key",
                    )
                )
    return found[0] if len(found) == 1 else found or None


@message_check(requirements="META-07", level=Level.SHOULD, subject="prefixed _meta keys", methods=ANY_ENVELOPE)
def meta_prefixes_are_reverse_dns(message: Message, ctx: Context) -> Result:
    """_meta key prefixes are reverse-DNS names (com.example/, not example.com/)."""
    found: list[Finding] = []
    for path, meta in meta_objects(message):
        for key in meta:
            dns = (_KEY_FACTS.get(key) or key_facts(key)).dns  # 0: no prefix, or malformed (META-05's finding)
            if dns == REVERSE_DNS:
                found.append(passed(message))
            elif dns == FORWARD_DNS:
                found.append(failed(message, f"{path} key {key!r} has a forward-DNS prefix; write it reversed"))
            elif dns == NO_TLD:
                found.append(
                    failed(message, f"{path} key {key!r} has a prefix that does not start with a top-level domain")
                )
    return found[0] if len(found) == 1 else found or None


_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")
_TRACESTATE_KEY = re.compile(r"[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13}")
_TRACESTATE_VALUE = re.compile(r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAGGAGE_VALUE = re.compile(r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*")


def traceparent_problem(value: str) -> str | None:
    match = _TRACEPARENT.fullmatch(value)
    if match is None:
        return "is not version-traceid-parentid-flags in lowercase hex (2-32-16-2 digits)"
    version, trace_id, parent_id, _flags, rest = match.groups()
    if version == "ff":
        return "uses the invalid version ff"
    if version == "00" and rest:
        return "has extra fields after the flags in version 00"
    if set(trace_id) == {"0"}:
        return "has an all-zero trace id"
    if set(parent_id) == {"0"}:
        return "has an all-zero parent id"
    return None


def tracestate_problem(value: str) -> str | None:
    members = [member.strip(" \t") for member in value.split(",")]
    present = [member for member in members if member]
    if len(present) > 32:
        return f"has {len(present)} list members (at most 32)"
    keys: set[str] = set()
    for member in present:
        key, sep, item = member.partition("=")
        if not sep or not _TRACESTATE_KEY.fullmatch(key):
            return f"has a malformed list member {member!r}"
        if not _TRACESTATE_VALUE.fullmatch(item):
            return f"has a malformed value in {member!r}"
        if key in keys:
            return f"repeats the key {key!r}"
        keys.add(key)
    return None


def baggage_problem(value: str) -> str | None:
    for member in value.split(","):
        parts = [part.strip(" \t") for part in member.split(";")]
        key, sep, item = parts[0].partition("=")
        if not sep or not _TOKEN.fullmatch(key.strip(" \t")) or not _BAGGAGE_VALUE.fullmatch(item.strip(" \t")):
            return f"has a malformed list member {member.strip()!r}"
        for prop in parts[1:]:
            name, has_value, prop_value = prop.partition("=")
            if not _TOKEN.fullmatch(name.strip(" \t")) or (
                has_value and not _BAGGAGE_VALUE.fullmatch(prop_value.strip(" \t"))
            ):
                return f"has a malformed property {prop!r}"
    return None


_TRACE_RULES = {"traceparent": traceparent_problem, "tracestate": tracestate_problem, "baggage": baggage_problem}


@message_check(
    requirements="META-08",
    level=Level.MUST,
    subject="trace context _meta values",
    features={"per_request_version"},
    methods=ANY_ENVELOPE,
)
def trace_context_meta_follows_w3c_syntax(message: Message, ctx: Context) -> Result:
    """traceparent, tracestate and baggage in _meta follow the W3C Trace Context and Baggage syntax."""
    found: list[Finding] = []
    for path, meta in meta_objects(message):
        for key, rule in _TRACE_RULES.items():
            if key not in meta:
                continue
            value = meta[key]
            if not isinstance(value, str):
                found.append(failed(message, f"{path}.{key} is a {type(value).__name__}, not a string"))
                continue
            problem = rule(value)
            if problem is not None:
                found.append(failed(message, f"{path}.{key} {value[:80]!r} {problem}"))
            else:
                found.append(passed(message))
    return found[0] if len(found) == 1 else found or None
