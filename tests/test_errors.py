"""One error tree: everything mcp-assay raises on purpose is an ``AssayError``, drawn in one docstring.

Tool-defined. The suite's failures to drive a target (unreachable, no answer, exited, refused
credentials, rate limits, a failed sign-in) are ``TargetError``s with exit code 3, and there is
one "unreachable", whether a connection was refused or a server given to ``--serve`` never came up.
"""

from __future__ import annotations

import mcp_assay.vocabulary.errors as errors
from mcp_assay.suite.oauth.steps import SignInFailed, Step
from mcp_assay.vocabulary.errors import (
    AssayError,
    CredentialsRefused,
    HarnessError,
    NoAnswer,
    RateLimited,
    ServerExited,
    TargetError,
    TransportFailure,
    Unreachable,
)


def test_the_docstring_draws_every_error_of_the_tree() -> None:
    doc = errors.__doc__ or ""
    drawn = {line.split("──")[1].split()[0] for line in doc.splitlines() if "──" in line}
    assert set(errors.__all__) - {"AssayError"} <= drawn
    assert "SignInFailed" in drawn


def test_failures_to_drive_the_target_are_target_errors_with_exit_3() -> None:
    failures = [
        Unreachable("refused"), NoAnswer("late"), ServerExited("gone", 1), CredentialsRefused(401, "no"),
        RateLimited("429", 1.0), SignInFailed(Step.CHALLENGE, "why"),
    ]  # fmt: skip
    assert all(isinstance(failure, TargetError) and failure.exit_code == 3 for failure in failures)
    transport = [failure for failure in failures if isinstance(failure, TransportFailure)]
    assert [type(failure) for failure in transport] == [Unreachable, NoAnswer, ServerExited]
    assert isinstance(HarnessError("bug"), AssayError) and not isinstance(HarnessError("bug"), TargetError)


def test_one_unreachable() -> None:
    assert not hasattr(errors, "TargetUnreachable")
    assert Unreachable("x", advice="is it running?").advice == "is it running?"
    assert (Unreachable.kind, str(Unreachable("x"))) == ("unreachable", "x")
