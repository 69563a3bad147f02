"""Credentials are applied as configured and never shown; settings are checked before the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_assay.suite.config import SuiteConfig, load_arguments, read_config_file
from mcp_assay.suite.credentials import Credentials, parse_header
from mcp_assay.vocabulary.errors import ConfigError

TOKEN = "tok-7f3a9c2e51"


def test_a_token_goes_in_the_authorization_header_by_default() -> None:
    """Tool-defined: -t TOKEN sends Authorization: Bearer TOKEN."""
    headers = Credentials.build(token=TOKEN).apply({"accept": "application/json"})
    assert headers["authorization"] == f"Bearer {TOKEN}"


def test_auth_header_and_scheme_change_where_the_token_goes() -> None:
    """Tool-defined: --auth-header x-api-key --auth-scheme '' sends the bare token in x-api-key."""
    headers = Credentials.build(token=TOKEN, auth_header="x-api-key", auth_scheme="").apply({})
    assert headers == {"x-api-key": TOKEN}


def test_query_mode_puts_the_token_in_the_url_and_none_mode_sends_nothing() -> None:
    """Tool-defined: --auth-mode query|none."""
    query = Credentials.build(token=TOKEN, auth_mode="query")
    assert query.url("http://h/mcp?x=1") == f"http://h/mcp?x=1&token={TOKEN}"
    assert query.apply({}) == {}
    none = Credentials.build(token=TOKEN, auth_mode="none")
    assert none.apply({}) == {} and none.url("http://h/mcp") == "http://h/mcp"


def test_every_configured_secret_is_redacted_wherever_it_appears() -> None:
    """Tool-defined: tokens, secret-looking -H values and tokens already in the URL never reach output."""
    credentials = Credentials.build(token=TOKEN, headers=["X-Api-Key: key-1234567890", "X-Tenant: acme"])
    redactor = credentials.redactor("http://h/mcp?access_token=url-secret-998877")
    text = redactor.text(f"Bearer {TOKEN} key-1234567890 url-secret-998877 acme")
    assert TOKEN not in text and "key-1234567890" not in text and "url-secret-998877" not in text
    assert "acme" in text
    assert "url-secret-998877" not in redactor.url("http://h/mcp?access_token=url-secret-998877")


def test_forged_and_anonymous_credentials_keep_everything_but_the_secrets() -> None:
    """Tool-defined (BEH-05 R3/R4): a forged copy swaps every secret; the anonymous one drops them."""
    own = Credentials.build(token=TOKEN, headers=["X-Api-Key: key-123", "X-Tenant: blue"])
    forged = own.forged("bogus")
    assert forged is not None
    assert forged.apply({}) == {"X-Api-Key": "bogus", "X-Tenant": "blue", "authorization": "Bearer bogus"}
    assert own.anonymous().apply({}) == {"X-Tenant": "blue"}
    assert Credentials.build(headers=["X-Tenant: blue"]).forged("bogus") is None  # nothing to forge


def test_a_header_flag_must_read_name_colon_value() -> None:
    """Tool-defined: -H "name: value"."""
    assert parse_header("X-Tenant:  acme ") == ("X-Tenant", "acme")
    with pytest.raises(ConfigError):
        parse_header("no colon here")


def test_exactly_one_target_is_required() -> None:
    """Tool-defined: -u or -c, not both, not neither."""
    with pytest.raises(ConfigError, match="exactly one target"):
        SuiteConfig()
    with pytest.raises(ConfigError, match="exactly one target"):
        SuiteConfig(url="http://h/mcp", command=("server",))


def test_tool_arguments_come_inline_or_from_a_file_and_are_checked_first(tmp_path: Path) -> None:
    """Tool-defined: --tool-args JSON or @file; malformed input is one clear error before the run."""
    file = tmp_path / "args.json"
    file.write_text('{"search": {"query": "x"}}', encoding="utf-8")
    assert load_arguments("--tool-args", f"@{file}") == {"search": {"query": "x"}}
    assert load_arguments("--tool-args", '{"a": {}}') == {"a": {}}
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_arguments("--tool-args", "{nope")
    with pytest.raises(ConfigError, match="cannot read"):
        load_arguments("--tool-args", f"@{tmp_path / 'missing.json'}")
    with pytest.raises(ConfigError, match="must be a JSON object"):
        SuiteConfig(url="http://h/mcp", tool_args={"search": ["not", "an", "object"]})  # type: ignore[dict-item]
    with pytest.raises(ConfigError, match="strings"):
        SuiteConfig(url="http://h/mcp", prompt_args={"p": {"n": 3}})  # type: ignore[dict-item]


def test_a_config_file_fills_what_the_flags_leave_out_and_flags_win(tmp_path: Path) -> None:
    """Tool-defined: YAML keys are the long flag names; flags override the file."""
    file = tmp_path / "assay.yaml"
    file.write_text(
        "url: http://file/mcp\npage-limit: 3\nheaders: ['X-Tenant: acme']\ntool_args: {echo: {message: hi}}\n",
        encoding="utf-8",
    )
    values = read_config_file(file)
    config = SuiteConfig.from_options({"page_limit": 7, "url": None}, values)
    assert config.url == "http://file/mcp"
    assert config.page_limit == 7
    assert config.headers == (("X-Tenant", "acme"),)
    assert config.tool_args == {"echo": {"message": "hi"}}


def test_unknown_config_keys_are_an_error(tmp_path: Path) -> None:
    """Tool-defined: a misspelt key is reported, with the known ones."""
    file = tmp_path / "assay.yaml"
    file.write_text("url: http://h/mcp\npagelimit: 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown keys pagelimit"):
        read_config_file(file)
