"""Every message against the definition its revision gives it (RES-04, RPC-07, META-11, HS-16 ...).

Dispatch happens in :class:`~mcp_assay.spec.validator.MessageValidator`: by method, by the method
of the request a result answers and its ``resultType``, and by error code. These rules only
decide which messages each requirement covers, so one message is never judged twice.
"""

from __future__ import annotations

from mcp_assay.spec.checks import Finding, failed, message_check
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import schema_finding
from mcp_assay.spec.rules.shared.reads import ANY_SCHEMA
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message


@message_check(
    requirements="RES-04",
    level=Level.MUST,
    subject="results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods=ANY_SCHEMA,
)
def results_match_their_method_definition(message: Message, ctx: Context) -> Finding:
    """Results match the definition for their method (and resultType)."""
    return schema_finding(message, ctx, what="result")


@message_check(
    requirements="RPC-07",
    level=Level.MUST,
    subject="error responses",
    sent_by=Side.SERVER,
    kinds={Kind.ERROR},
    methods=ANY_SCHEMA,
)
def error_responses_match_the_schema(message: Message, ctx: Context) -> Finding:
    """Error responses carry an integer code, a string message and the fields their code requires.

    A null id is left to the RPC-09 rules (ambiguity A1), so it is not a schema failure here."""
    return schema_finding(message, ctx, what="error response", ignore_null_id=True)


@message_check(
    requirements=("PROG-06", "LOG-06", "CAN-05"),
    level=Level.MUST,
    subject="notifications",
    kinds={Kind.NOTIFICATION},
    methods=ANY_SCHEMA,
)
def notifications_match_their_definition(message: Message, ctx: Context) -> Finding | None:
    """Notifications carry the params their definition requires."""
    validation = ctx.validate(message)
    if validation is not None and validation.note and "is not defined by" in validation.note:
        return None  # unknown methods are RPC-23's concern
    return schema_finding(message, ctx, what="notification")


@message_check(
    requirements="META-11",
    level=Level.MUST,
    subject="client requests",
    features={"per_request_version"},
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
    methods=ANY_SCHEMA,
)
def client_requests_match_their_definition(message: Message, ctx: Context) -> Finding | None:
    """Requests match their method's definition, params._meta included."""
    validation = ctx.validate(message)
    if validation is not None and validation.note and "is not defined by" in validation.note:
        return None
    return schema_finding(message, ctx, what="request")


@message_check(
    requirements="HS-16",
    level=Level.MUST,
    subject="client messages and server requests",
    features={"handshake"},
    methods=ANY_SCHEMA,
)
def handshake_era_messages_match_the_negotiated_schema(message: Message, ctx: Context) -> Finding | None:
    """In a negotiated session, client messages and server requests match that revision's schema."""
    if message.sender is Side.SERVER and message.kind is not Kind.REQUEST:
        return None  # server results, errors and notifications are judged by RES-04, RPC-07 and friends
    if message.kind not in (Kind.REQUEST, Kind.NOTIFICATION, Kind.RESULT, Kind.ERROR):
        return None
    validation = ctx.validate(message)
    if validation is not None and validation.note and "is not defined by" in validation.note:
        revision = ctx.revision(message)
        elsewhere = [
            other.name
            for other in ctx.spec.window
            if other is not revision
            and message.method in other.validator.request_defs | other.validator.notification_defs
        ]
        if elsewhere:
            return failed(
                message,
                f"{message.method} belongs to {', '.join(elsewhere)}, but this session negotiated {revision}",
            )
        return None  # a method no revision defines is RPC-23's concern
    return schema_finding(message, ctx, what=message.kind.value)
