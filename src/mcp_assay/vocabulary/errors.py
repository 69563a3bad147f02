"""Errors mcp-assay raises about itself, never about the software it judges.

Bad output from a server or client under test is data: it becomes a failed verdict with
evidence. These exceptions are for the cases where the tool cannot do its job at all, or cannot
do it for one request (the suite then reports the affected cases *not verified*, naming why)::

    AssayError
    ├── ConfigError          a flag, option, config file or path is wrong (exit 2)
    ├── InsecureTransport    a credential would cross the network in clear text, not allowed (exit 2)
    ├── SpecError            no usable schema for a revision, or a hash that matches no pin (exit 3)
    ├── CatalogueError       a check and the requirement catalogue disagree (a bug in mcp-assay)
    ├── HarnessError         the suite was about to send a message its own schema rejects (a bug in mcp-assay)
    ├── RecordingError       a recording file cannot be read at all (exit 3)
    └── TargetError          the server under test cannot be driven (exit 3)
        ├── TransportFailure     one request could not be carried
        │   ├── Unreachable      refused or dropped before any answer, or the server could not be started
        │   ├── NoAnswer         accepted, never answered in time
        │   └── ServerExited     the stdio server's process ended
        ├── CredentialsRefused   the server answered 401 or 403
        ├── RateLimited          the server kept rate-limiting past the retry budget
        └── SignInFailed         the sign-in stopped (:mod:`mcp_assay.suite.oauth.steps`, where its steps are)
"""

from __future__ import annotations

__all__ = [
    "AssayError",
    "CatalogueError",
    "ConfigError",
    "CredentialsRefused",
    "HarnessError",
    "InsecureTransport",
    "NoAnswer",
    "RateLimited",
    "RecordingError",
    "ServerExited",
    "SpecError",
    "TargetError",
    "TransportFailure",
    "Unreachable",
]


class AssayError(Exception):
    """Base class of every error mcp-assay raises on purpose."""

    exit_code: int = 3


class ConfigError(AssayError):
    """A flag, option, configuration file or path given by the user is unusable."""

    exit_code = 2


class InsecureTransport(AssayError):
    """A credential would go over plain http to a host that is not loopback, and the user did not allow it.

    Said in one line (not a usage error with the command's help): the fix is a flag, or https."""

    exit_code = 2


class SpecError(AssayError):
    """No usable schema for a revision, or a schema that matches no pin."""


class CatalogueError(AssayError):
    """A check cites a requirement the catalogue does not have, or restates its level wrongly."""


class HarnessError(AssayError):
    """The suite was about to send a message its own revision's schema rejects."""


class RecordingError(AssayError):
    """A recording cannot be read at all (missing, not a recording). Bad records inside are data."""


class TargetError(AssayError):
    """The server under test cannot be driven."""


class TransportFailure(TargetError):
    """The target could not be driven for this request (not a protocol finding)."""

    kind = "transport"


class Unreachable(TransportFailure):
    """The connection was refused or dropped before any answer (or the server process could not be started)."""

    kind = "unreachable"

    def __init__(self, detail: str, *, advice: str = "") -> None:
        super().__init__(detail)
        self.advice = advice
        """What the user can check (``is the server running?``), for a run that never reached the target."""


class NoAnswer(TransportFailure):
    """The target accepted the request but never answered within the time allowed."""

    kind = "no-answer"

    def __init__(self, detail: str, exchange: str | None = None) -> None:
        super().__init__(detail)
        self.exchange = exchange
        """Id of the recorded exchange (HTTP) or request line (stdio) that went unanswered."""


class ServerExited(TransportFailure):
    """The stdio server process ended."""

    kind = "exited"

    def __init__(self, detail: str, code: int | None) -> None:
        super().__init__(detail)
        self.code = code


class CredentialsRefused(TargetError):
    """The target answered 401 or 403: what it said is the reason the cases could not run."""

    def __init__(self, status: int, answer: str, challenge: str | None = None) -> None:
        self.status = status
        self.answer = answer
        self.challenge = challenge
        text = f"the server refused the credentials: HTTP {status}"
        if challenge:
            text += f" (WWW-Authenticate: {challenge})"
        if answer:
            text += f": {answer}"
        super().__init__(text)


class RateLimited(TargetError):
    """The target kept rate-limiting past the retry budget."""

    def __init__(self, detail: str, waited: float) -> None:
        super().__init__(detail)
        self.detail = detail
        self.waited = waited
