"""How the sign-in tells the user what it does, and keeps what it learns out of what it says.

Every step is told as it happens, because registering a client creates state on somebody else's
authorization server and that should never happen quietly. The :class:`Narrator` prints through
the run's event stream and holds every secret the flow handles (client secrets, codes, verifiers,
tokens) the moment it has one, so nothing it says afterwards can carry it. A step that cannot go
on raises :class:`SignInFailed` naming itself and the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from mcp_assay.recording.redaction import Redactor
from mcp_assay.vocabulary.errors import TargetError

__all__ = ["Line", "Narrator", "SignInFailed", "Step"]


class Step(StrEnum):
    """The steps of a sign-in, in order: a failure names the one it stopped at."""

    CHALLENGE = "challenge"
    RESOURCE_METADATA = "protected resource metadata"
    SERVER_METADATA = "authorization server metadata"
    GRANT = "choosing a grant"
    REDIRECT = "loopback redirect"
    REGISTRATION = "client registration"
    AUTHORIZATION = "authorization"
    TOKEN = "token request"


class Line(StrEnum):
    """What a printed line is."""

    START = "start"
    """The endpoint's 401, which starts a sign-in."""
    STEP = "step"
    NOTE = "note"
    URL = "url"
    """The authorization URL, alone on its line so it can be copied (or read by a test)."""
    FAILED = "failed"
    DONE = "done"


class SignInFailed(TargetError):
    """The sign-in stopped at ``step`` for ``why``."""

    def __init__(self, step: Step, why: str) -> None:
        super().__init__(f"{step}: {why}")
        self.step = step
        self.why = why


class Narrator:
    """Prints the sign-in's lines (secrets scrubbed) and keeps the secrets it met."""

    def __init__(self, say: Callable[[Line, str], None], redactor: Redactor | None = None) -> None:
        self._say = say
        self.redactor = redactor or Redactor()
        self.secrets: list[str] = []

    def secret(self, value: str | None) -> None:
        """Remember a secret before anything else is said."""
        if value:
            self.secrets.append(value)
            self.redactor.add_secret(value)

    def tell(self, kind: Line, text: str) -> None:
        self._say(kind, self.redactor.text(text))

    def step(self, text: str) -> None:
        self.tell(Line.STEP, text)

    def note(self, text: str) -> None:
        self.tell(Line.NOTE, f"note: {text}")
