"""Prompts (PRM-): prompt listings, prompts/get requests and results, and their errors.

Whether a ``prompts/get`` names an unknown prompt or leaves out a required argument is read
from the latest complete ``prompts/list`` captured for the same server, or from the cases the suite
sent them as (``unknown-prompt``, ``missing-prompt-argument``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from mcp_assay.cases import prompts as cases
from mcp_assay.spec.checks import Finding, failed, log_check, message_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.pagination import listing_for
from mcp_assay.spec.rules.shared.answers import (
    answer_to,
    expects_invalid_params,
    listing_shape,
    refused_at_envelope,
    reports_internal_error,
    selected_gets_invalid_params,
)
from mcp_assay.spec.rules.shared.selected import selected_for_another, sent_as
from mcp_assay.spec.rules.shared.server_features import (
    capability_declared,
    content_block_issues,
    declared_capability_is_served,
    is_base64,
    is_input_required,
    is_uri,
    listing_consistency,
    shape_finding,
)
from mcp_assay.vocabulary.verdicts import Level, Outcome, Side
from mcp_assay.wire.jsonrpc import Kind, Message

MIME_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(?:\s*;.*)?")
"""``type/subtype`` with RFC 6838 restricted names, optionally followed by parameters."""


def _get_of(message: Message, ctx: Context) -> tuple[Message, dict[str, Any]] | None:
    """For an answer to prompts/get: the request and its params."""
    return answer_to(message, ctx, "prompts/get")


def _prompt_blocks(message: Message, ctx: Context) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, block) for every content block of a complete prompts/get result."""
    if _get_of(message, ctx) is None or is_input_required(message) or not isinstance(message.result, dict):
        return
    messages = message.result.get("messages")
    for position, item in enumerate(messages if isinstance(messages, list) else []):
        if isinstance(item, dict) and isinstance(item.get("content"), dict):
            yield f"result.messages[{position}].content", item["content"]


@message_check(
    requirements="PRM-01",
    level=Level.MUST,
    subject="prompt results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"prompts/list", "prompts/get"},
)
def servers_serving_prompts_declare_prompts(message: Message, ctx: Context) -> Finding | None:
    """A server that serves prompts/list or prompts/get declares the prompts capability."""
    return capability_declared(message, ctx, "prompts", frozenset({"prompts/list", "prompts/get"}))


@message_check(
    requirements="PRM-02",
    level=Level.MUST,
    subject="answers to prompts/list",
    capability="prompts",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods={"prompts/list"},
)
def declared_prompts_are_listed(message: Message, ctx: Context) -> Finding | None:
    """A server declaring prompts answers prompts/list with a result.

    Triggered by any well-formed ``prompts/list`` without a cursor."""
    return declared_capability_is_served(message, ctx, "prompts", "prompts/list")


@log_check(
    requirements="PRM-03",
    level=Level.MUST_NOT,
    subject="repeated prompt listings",
    features={"per_request_version"},
    follows={"prompts/list"},
)
def prompt_lists_do_not_depend_on_the_connection(ctx: Context) -> Iterator[Finding]:
    """The set of prompts does not change with the connection or earlier requests (same credentials).

    Compares complete ``prompts/list`` walks with the same credentials taken within
    ``listing_window_s`` seconds of each other with no list-changed notification between them."""
    yield from listing_consistency(ctx, "prompts/list", order=False)


@message_check(
    requirements="PRM-04",
    level=Level.MUST,
    subject="prompts/list results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"prompts/list"},
)
def prompt_lists_match_the_schema(message: Message, ctx: Context) -> Finding | None:
    """prompts/list results hold Prompt objects (name required; arguments with name and boolean required)."""
    return listing_shape(message, ctx, "prompts/list", "prompts")


@message_check(
    requirements="PRM-05",
    level=Level.MUST,
    subject="prompts/get requests",
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
    methods={"prompts/get"},
)
def prompt_requests_carry_string_arguments(message: Message, ctx: Context) -> Finding | None:
    """prompts/get params carry a string name and arguments whose values are all strings."""
    if message.method != "prompts/get":
        return None
    return shape_finding(message, ctx, roots=(r"params\.name", r"params\.arguments"), what="the prompts/get request")


@message_check(
    requirements="PRM-06",
    level=Level.MUST,
    subject="prompts/get results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"prompts/get"},
)
def prompt_results_match_the_schema(message: Message, ctx: Context) -> Finding | None:
    """prompts/get results hold messages with role "user" or "assistant" and one content block each."""
    if _get_of(message, ctx) is None or is_input_required(message) or not isinstance(message.result, dict):
        return None
    found = shape_finding(
        message,
        ctx,
        roots=(r"result\.messages", r"result\.description"),
        exclude=(r"result\.messages\[\d+\]\.content",),
        what="the prompts/get result",
    )
    revision = ctx.revision(message)
    if found.outcome is not Outcome.PASSED or revision is None:
        return found
    issues = [
        issue
        for path, block in _prompt_blocks(message, ctx)
        for issue in content_block_issues(block, revision, path, base64_data=False, byte_format=False)
        if ".resource." not in issue  # embedded resource payloads are PRM-11's
    ]
    messages = message.result.get("messages")
    for position, item in enumerate(messages if isinstance(messages, list) else []):
        if isinstance(item, dict) and "content" in item and not isinstance(item["content"], dict):
            issues.append(f"result.messages[{position}].content: a content block is an object")
    if issues:
        return failed(message, "the prompts/get result has malformed content: " + "; ".join(issues[:4]))
    return found


def _prompt_definition(request: Message, params: dict[str, Any], ctx: Context) -> tuple[Any, bool] | None:
    listing = listing_for(request, ctx, "prompts/list")
    if listing is None:
        return None
    name = params.get("name")
    return (listing.items.get(name) if isinstance(name, str) else None), listing.complete


def _unknown_prompt(request: Message, params: dict[str, Any], ctx: Context) -> str | None:
    """The name of the prompt a prompts/get names, when it is known not to exist."""
    name = params.get("name")
    if not isinstance(name, str):
        return None
    found = _prompt_definition(request, params, ctx)
    known_missing = found is not None and found[0] is None and found[1]
    return name if known_missing or sent_as(request, ctx, cases.UNKNOWN_PROMPT) else None


def _missing_arguments(request: Message, params: dict[str, Any], ctx: Context) -> list[str] | None:
    """Required arguments a prompts/get leaves out (``None`` when it is not known to leave any out)."""
    arguments = params.get("arguments", {})
    found = _prompt_definition(request, params, ctx)
    missing: list[str] = []
    if found is not None and isinstance(found[0], dict) and isinstance(arguments, dict):
        declared = found[0].get("arguments")
        for argument in declared if isinstance(declared, list) else []:
            if isinstance(argument, dict) and argument.get("required") is True:
                name = argument.get("name")
                if isinstance(name, str) and name not in arguments:
                    missing.append(name)
    if missing or sent_as(request, ctx, cases.MISSING_PROMPT_ARGUMENT):
        return missing
    return None


@message_check(
    requirements="PRM-07",
    level=Level.SHOULD,
    subject="answers to unknown prompts",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods={"prompts/get"},
)
def unknown_prompts_get_invalid_params(message: Message, ctx: Context) -> Finding | None:
    """A prompts/get naming a prompt that does not exist gets -32602.

    Triggered by a ``prompts/get`` sent as the case ``unknown-prompt``, or one naming a
    prompt absent from a complete captured ``prompts/list`` that the server does not serve (an
    unlisted prompt that works is hidden, not unknown)."""
    got = _get_of(message, ctx)
    name = _unknown_prompt(*got, ctx) if got is not None else None
    if got is None or name is None or refused_at_envelope(message):
        return None
    subject = f"prompts/get of the unknown prompt {name[:60]!r}"
    return selected_gets_invalid_params(message, subject, selected=sent_as(got[0], ctx, cases.UNKNOWN_PROMPT))


@message_check(
    requirements="PRM-08",
    level=Level.SHOULD,
    subject="answers to prompts/get missing required arguments",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods={"prompts/get"},
)
def missing_prompt_arguments_get_invalid_params(message: Message, ctx: Context) -> Finding | None:
    """A prompts/get that leaves out a required argument gets -32602.

    Triggered by a ``prompts/get`` without an argument its captured ``prompts/list`` entry marks
    ``required: true``, or one sent as the case ``missing-prompt-argument``."""
    got = _get_of(message, ctx)
    missing = _missing_arguments(*got, ctx) if got is not None else None
    if missing is None or refused_at_envelope(message):
        return None
    what = f"argument {missing[0]!r}" if missing else "a required argument"
    return expects_invalid_params(message, f"prompts/get without the required {what}")


@message_check(
    requirements="PRM-09",
    level=Level.SHOULD,
    subject="failed prompts/get requests",
    sent_by=Side.SERVER,
    kinds={Kind.ERROR},
    methods={"prompts/get"},
)
def failed_prompts_report_internal_errors(message: Message, ctx: Context) -> Finding | None:
    """A failure inside the server while producing a prompt is reported as -32603.

    Errors for unknown prompts and missing arguments are PRM-07's and PRM-08's concern: a get a captured
    listing shows to be one, or one sent as a case those rules pick out (any such case, read from the
    registry)."""
    got = _get_of(message, ctx)
    if got is None or selected_for_another(got[0], ctx, "PRM-09"):
        return None
    if _unknown_prompt(*got, ctx) is not None or _missing_arguments(*got, ctx) is not None:
        return None
    return reports_internal_error(message, "prompts/get")


@message_check(
    requirements="PRM-10",
    level=Level.MUST,
    subject="prompt messages with image or audio",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"prompts/get"},
)
def prompt_media_is_base64_with_a_mime_type(message: Message, ctx: Context) -> Iterator[Finding]:
    """Image and audio content in prompt messages has base64 data and a valid MIME type."""
    for path, block in _prompt_blocks(message, ctx):
        if block.get("type") not in ("image", "audio"):
            continue
        problems = []
        if not is_base64(block.get("data")):
            problems.append(f"{path}.data is not valid base64")
        mime = block.get("mimeType")
        if not isinstance(mime, str) or not MIME_TYPE.fullmatch(mime):
            problems.append(f"{path}.mimeType {mime!r} is not a MIME type")
        yield failed(message, "; ".join(problems)) if problems else passed(message)


@message_check(
    requirements="PRM-11",
    level=Level.MUST,
    subject="embedded resources in prompt messages",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"prompts/get"},
)
def prompt_embedded_resources_are_complete(message: Message, ctx: Context) -> Iterator[Finding]:
    """Embedded resources in prompt messages have a valid uri, a mimeType, and text or base64 blob."""
    for path, block in _prompt_blocks(message, ctx):
        if block.get("type") != "resource":
            continue
        resource = block.get("resource")
        if not isinstance(resource, dict):
            yield failed(message, f"{path}.resource is not an object")
            continue
        problems = []
        if not is_uri(resource.get("uri")):
            problems.append(f"{path}.resource.uri {resource.get('uri')!r} is not a valid URI")
        if not isinstance(resource.get("mimeType"), str):
            problems.append(f"{path}.resource has no mimeType")
        if isinstance(resource.get("text"), str):
            pass
        elif "blob" in resource:
            if not is_base64(resource["blob"]):
                problems.append(f"{path}.resource.blob is not valid base64")
        else:
            problems.append(f"{path}.resource has neither text nor blob")
        yield failed(message, "; ".join(problems)[:400]) if problems else passed(message)
