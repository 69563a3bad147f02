"""The message path shares its per-message and per-key work: counted (calls made), never timed, and bounded."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from mcp_assay.spec import checks
from mcp_assay.spec.checks import REGISTRY, Finding, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.engine import Judge
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.spec.rules.behaviour import channels
from mcp_assay.spec.rules.envelope import meta_keys
from mcp_assay.spec.rules.shared import envelopes, server_features
from mcp_assay.spec.rules.tools import results as tool_results
from mcp_assay.spec.rules.tools.results import same_json
from mcp_assay.spec.rules.versions import offered
from mcp_assay.spec.validator import canonical
from mcp_assay.vocabulary.verdicts import Outcome, Side
from mcp_assay.wire.jsonrpc import Message, parse_message
from tests.counting import count_calls
from tests.scale.growth import traffic

META_KEY_RULES = (
    "meta_keys_follow_the_key_grammar",
    "reserved_meta_prefixes_hold_only_defined_keys",
    "meta_prefixes_are_reverse_dns",
)


def test_each_distinct_meta_key_is_read_once(spec: SpecSet, monkeypatch: pytest.MonkeyPatch) -> None:
    meta_keys._KEY_FACTS.clear()
    reads = count_calls(monkeypatch, meta_keys, "_read_key")
    judge = Judge(spec, checks=[REGISTRY[name] for name in META_KEY_RULES])
    for exchange in traffic(3):
        judge.add(exchange)
    verdicts = {verdict.check: verdict for verdict in judge.verdicts()}
    judged = sum(verdicts[name].judged for name in META_KEY_RULES)
    assert judged > 300  # the three rules read many keys, of many messages
    assert 0 < len(reads) == len(set(reads)) < 40  # but each distinct key was read once, by whichever rule asked


def test_the_meta_key_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meta_keys, "KEYS_KEPT", 16)
    meta_keys._KEY_FACTS.clear()
    for number in range(100):
        meta_keys.key_facts(f"com.example/key{number}")
        assert len(meta_keys._KEY_FACTS) <= 16
    assert meta_keys.key_facts("com.example/key99").dns == meta_keys.REVERSE_DNS


def _result(text: str) -> Message:
    return parse_message(text, sender=Side.SERVER, time=0.0)


def test_the_meta_walk_stops_once_every_meta_object_the_text_names_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = ",".join(f'{{"name":"t{number}","annotations":{{"a":{{"b":[1,2]}}}}}}' for number in range(200))
    walked = count_calls(monkeypatch, envelopes, "_walk")
    one = _result(f'{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{tools}],"_meta":{{"com.example/k":1}}}}}}')
    assert [path for path, _ in envelopes._meta_objects(one)] == ["result._meta"]
    assert not walked  # the text names one _meta, and the result holds it: nothing is walked

    two = f'{{"_meta":{{}},"tools":[{{"name":"first","_meta":{{}}}},{tools}]}}'
    first = _result(f'{{"jsonrpc":"2.0","id":1,"result":{two}}}')
    assert [path for path, _ in envelopes._meta_objects(first)] == ["result._meta", "result.tools[0]._meta"]
    assert len(walked) <= 3  # the result, its tools and the first tool: nothing past the second _meta

    nested = _result(f'{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{tools},{{"name":"last","_meta":{{}}}}]}}}}')
    walked.clear()
    assert [path for path, _ in envelopes._meta_objects(nested)] == ["result.tools[200]._meta"]
    assert len(walked) > 200  # one _meta, not at the top: walked to where it is

    # a name spelt with escapes is not counted in the text: the walk goes on to the end and finds it
    escaped = _result(f'{{"jsonrpc":"2.0","id":1,"result":{{"_meta":{{}},"tools":[{tools},{{"\\u005fmeta":{{}}}}]}}}}')
    walked.clear()
    assert [path for path, _ in envelopes._meta_objects(escaped)] == ["result._meta", "result.tools[200]._meta"]
    assert len(walked) > 200

    # a string "_meta" counts in the text but is no member: the walk goes on, and finds the same as a whole walk
    worded = _result(f'{{"jsonrpc":"2.0","id":1,"result":{{"_meta":{{}},"note":"_meta","tools":[{tools}]}}}}')
    assert [path for path, _ in envelopes._meta_objects(worded)] == ["result._meta"]


def test_a_message_s_plain_passes_are_one_finding_without_a_lookup() -> None:
    message = _result('{"jsonrpc":"2.0","id":1,"result":{}}')
    first = passed(message)
    checks._PLAIN_PASSES.clear()  # the last pass made is looked at before the kept ones
    assert passed(message) is first
    other = _result('{"jsonrpc":"2.0","id":2,"result":{}}')
    assert passed(other) is not first and passed(other).subject is other
    again = passed(message)  # made anew: the kept ones were let go of
    assert again.subject is message and passed(message) is again
    checks.forget_passes()
    assert checks._LAST_PASS[0].subject is None


TOOL_CALL_RULES = (
    "invalid_arguments_come_back_as_tool_errors",
    "unknown_tools_get_invalid_params",
    "tool_failures_are_results_with_is_error",
    "structured_content_matches_the_output_schema",
    "mirrored_integers_are_safe_integers",
)


def test_a_call_s_tool_is_looked_up_once_for_the_rules_that_ask(spec: SpecSet, monkeypatch: pytest.MonkeyPatch) -> None:
    lookups = count_calls(monkeypatch, channels, "listing_for")
    judge = Judge(spec, checks=[REGISTRY[name] for name in TOOL_CALL_RULES])
    exchanges = traffic(2)
    for exchange in exchanges:
        judge.add(exchange)
    judge.verdicts()
    calls = sum(1 for exchange in exchanges for m in exchange.messages if m.method == "tools/call" and m.id is not None)
    assert calls > 20
    # the request, and its answer when another exchange carries it (stdio): not once per rule that asks
    assert len(lookups) <= 2 * calls
    assert judge.check_calls >= 3 * calls


def test_the_removed_methods_are_worked_out_once_per_set_of_revisions(spec: SpecSet) -> None:
    offered._modern_and_removed.cache_clear()
    judge = Judge(spec, checks=[REGISTRY["modern_clients_do_not_send_removed_methods"]])
    for exchange in traffic(2):
        judge.add(exchange)
    (verdict,) = judge.verdicts()
    assert verdict.judged > 20
    assert offered._modern_and_removed.cache_info().misses == 1


JSON_VALUES = [
    0, 1, -1, 1.0, -0.0, 0.0, 1e16, 10000000000000000, True, False, None, "1", "", "a\\u00e9", float("nan"),
    float("inf"), [], {}, [1, 2], [2, 1], [1.0, 2], {"a": 1, "b": [1, {"c": None}]}, {"b": [1, {"c": None}], "a": 1},
    {"a": 1, "b": [1, {"c": False}]}, {"a": 1}, {"a": 1, "b": 2}, {"a": True}, {"a": 1.0}, [[[]]], [[[0]]],
]  # fmt: skip


def test_same_json_is_the_comparison_of_canonical_texts() -> None:
    for first in JSON_VALUES:
        for second in JSON_VALUES:
            assert same_json(first, second) == (canonical(first) == canonical(second)), (first, second)


def test_structured_content_nested_too_deep_to_compare_is_compared_as_text() -> None:
    deep: Any = 1
    for _ in range(1_000):  # deeper than same_json goes, not than the json module does
        deep = [deep]
    result = {"structuredContent": {"v": deep}, "content": [{"type": "text", "text": canonical({"v": deep})}]}
    with pytest.raises(RecursionError):
        tool_results._mirrored(result)
    assert tool_results._mirrored_as_text(result) is True  # what the rule falls back on
    result["content"] = [{"type": "text", "text": canonical({"v": [deep]})}]
    assert tool_results._mirrored_as_text(result) is False


def test_a_check_that_raised_is_reported_alone_and_called_no_more(spec: SpecSet) -> None:
    calls: list[Message] = []

    def raises_on_the_second(message: Message, ctx: Context) -> Finding:
        calls.append(message)
        if len(calls) == 2:
            raise KeyError("boom")
        return passed(message)

    base = REGISTRY["messages_are_jsonrpc_2_0_objects"]
    breaking = dataclasses.replace(base, name="breaks", func=raises_on_the_second)
    judge = Judge(spec, checks=[breaking, base])
    for exchange in traffic(1):
        judge.add(exchange)
    broken, whole = judge.verdicts()
    assert len(calls) == 2  # not called again once it raised, on any route
    assert broken.outcome is Outcome.NOT_VERIFIED and "the check itself failed" in broken.reason
    assert "boom" in broken.reason
    alone = Judge(spec, checks=[base])
    for exchange in traffic(1):
        alone.add(exchange)
    assert whole == alone.verdicts()[0] and whole.judged > 100  # the other check judged as if alone


class _CountingChecker:
    """A format checker that counts what it is asked (and answers as the real one)."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.asked: list[str] = []

    def conforms(self, value: str, name: str) -> bool:
        self.asked.append(value)
        return bool(self.real.conforms(value, name))


def test_each_distinct_uri_is_read_once_and_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    checker = _CountingChecker(server_features.FORMAT_CHECKER)
    monkeypatch.setattr(server_features, "FORMAT_CHECKER", checker)
    monkeypatch.setattr(server_features, "URIS_KEPT", 8)
    server_features._URIS.clear()
    for _ in range(50):
        assert server_features.is_uri("file:///project/README.md")
        assert not server_features.is_uri("not a uri")
    assert len(checker.asked) == 2  # once per distinct string, not once per ask
    for number in range(100):
        server_features.is_uri(f"file:///{number}")
        assert len(server_features._URIS) <= 8
    assert not server_features.is_uri(None) and not server_features.is_uri(3)
    long = "file:///" + "a" * server_features.URI_KEPT_LENGTH
    assert server_features.is_uri(long) and long not in server_features._URIS  # too long to be kept
