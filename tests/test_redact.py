from __future__ import annotations

import time

import pytest

from lintaid_client.redact import (
    REDACTED,
    REDACTED_PRIVATE_KEY,
    contains_secret,
    is_secret_key,
    redact,
    redact_value,
)
from tests.transcripts import FAKE_SECRETS, PRIVATE_KEY_BLOCK, secret_turns

JWT = FAKE_SECRETS[4]


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("export AWS key AKIAIOSFODNN7EXAMPLE now", "AKIAIOSFODNN7EXAMPLE"),
        ("session ASIAY34FZKBOKMUTVV7A in use", "ASIAY34FZKBOKMUTVV7A"),
        (f"git remote uses {FAKE_SECRETS[1]}", FAKE_SECRETS[1]),
        ("fine-grained github_pat_11ABCDEFG0123456789_abcdefghijKLMNOP here",
         "github_pat_11ABCDEFG0123456789_abcdefghijKLMNOP"),
        (f"gitlab {FAKE_SECRETS[2]} ok", FAKE_SECRETS[2]),
        (f"slack {FAKE_SECRETS[3]} ok", FAKE_SECRETS[3]),
        (f"openai {FAKE_SECRETS[9]}", FAKE_SECRETS[9]),
        ("stripe sk_live_51HfakeFAKEfake0123 used", "sk_live_51HfakeFAKEfake0123"),
        ("restricted rk_live_51HfakeFAKEfake0123 used", "rk_live_51HfakeFAKEfake0123"),
        (f"google {FAKE_SECRETS[10]}", FAKE_SECRETS[10]),
        ("oauth ya29.a0AfH6SMBfakeFAKEfake0123456789 ok", "ya29.a0AfH6SMBfakeFAKEfake0123456789"),
        (f"hf {FAKE_SECRETS[12]}", FAKE_SECRETS[12]),
        (f"npm {FAKE_SECRETS[13]}", FAKE_SECRETS[13]),
        (f"the jwt is {JWT} ok", JWT),
        (f"curl -H 'Authorization: Bearer {FAKE_SECRETS[5]}'", FAKE_SECRETS[5]),
        (f"send bearer {FAKE_SECRETS[5]} along", FAKE_SECRETS[5]),
        ('{"Authorization": "Basic Zm9vOmJhcg=="}', "Zm9vOmJhcg=="),
        ('password = "hunter2"', "hunter2"),
        ("PASSWORD=hunter2", "hunter2"),
        ('{"db_password": "hunter2"}', "hunter2"),
        ("pwd: hunter2", "hunter2"),
        ("clone https://deploy:s3cr3tPa55w0rd@git.example.com/x.git", "s3cr3tPa55w0rd"),
        ("api_key = 'abc123'", "abc123"),
        ("my API key is zzq-998877", "zzq-998877"),
        ("ACCESS_TOKEN=tok-77aa88", "tok-77aa88"),
        ("client_secret: cs-445566", "cs-445566"),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("SECRET = 'abc-secret-value'", "abc-secret-value"),
        ("token: t-123456", "t-123456"),
    ],
)
def test_secret_kinds_are_removed(line: str, secret: str) -> None:
    out = redact(line)
    assert secret not in out
    assert REDACTED in out
    assert contains_secret(line)


def test_inline_formats_keep_the_rest_of_the_line() -> None:
    out = redact("we rotated AKIAIOSFODNN7EXAMPLE yesterday after the incident")
    assert out == f"we rotated {REDACTED} yesterday after the incident"
    url = redact("clone https://deploy:s3cr3t@git.example.com/x.git please")
    assert url == f"clone https://deploy:{REDACTED}@git.example.com/x.git please"


def test_marker_lines_are_removed_whole_and_other_lines_kept() -> None:
    text = "first line\nexport API_KEY=abc\nlast line"
    assert redact(text) == f"first line\n{REDACTED}\nlast line"


def test_private_key_block_is_removed_whole() -> None:
    text = f"before\n{PRIVATE_KEY_BLOCK}\nafter"
    out = redact(text)
    assert out == f"before\n{REDACTED_PRIVATE_KEY}\nafter"


def test_private_key_without_end_redacts_to_the_end() -> None:
    text = "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nmore key\nstill key"
    assert redact(text) == f"before\n{REDACTED_PRIVATE_KEY}"


def test_private_key_on_one_line_with_escaped_newlines() -> None:
    text = '{"key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADAN\\n-----END PRIVATE KEY-----"}\nok'
    out = redact(text)
    assert "MIIEvQIBADAN" not in out
    assert out.endswith("\nok")


@pytest.mark.parametrize(
    "prose",
    [
        "the token budget is 8000 bytes per injection",
        "see the password reset flow docs for details",
        "tokens are counted per message",
        "we keep secrets out of the repository",
        "the task-notification wrapper is skipped",
        "use sk-learn style names sparingly",
        "the upstream returned 502 after three retries",
        "see https://example.com/docs/auth for the design",
        "input_tokens and output_tokens are logged",
    ],
)
def test_ordinary_prose_is_kept(prose: str) -> None:
    assert redact(prose) == prose
    assert not contains_secret(prose)


def test_every_fake_secret_is_removed_from_the_secret_session() -> None:
    blob = "\n".join(
        content if isinstance(content, str) else repr(content)
        for role, content in (t for t in secret_turns() if isinstance(t, tuple))
    )
    out = redact(blob)
    for secret in FAKE_SECRETS:
        assert secret not in out


def test_redact_value_recurses_and_uses_keys() -> None:
    data = {
        "api_key": "plain-looking-value",
        "headers": {"Authorization": "Basic Zm9vOmJhcg==", "Cookie": "sid=abc", "X-Other": "ok"},
        "nested": [{"password": "x1"}, "text with AKIAIOSFODNN7EXAMPLE", 3],
        "usage": {"input_tokens": 120, "output_tokens": 30, "cache_read_input_tokens": 5},
        "max_tokens": 4096,
        "access_token": "opaque",
        "private_key": {"kty": "RSA", "d": "abc"},
        "client_secret": "cs",
        "token": "",
        "enabled": True,
    }
    out = redact_value(data)
    assert out["api_key"] == REDACTED
    assert out["headers"]["Authorization"] == REDACTED
    assert out["headers"]["Cookie"] == REDACTED
    assert out["headers"]["X-Other"] == "ok"
    assert out["nested"][0]["password"] == REDACTED
    assert out["nested"][1] == f"text with {REDACTED}"
    assert out["nested"][2] == 3
    assert out["usage"] == {"input_tokens": 120, "output_tokens": 30, "cache_read_input_tokens": 5}
    assert out["max_tokens"] == 4096
    assert out["access_token"] == REDACTED
    assert out["private_key"] == REDACTED
    assert out["client_secret"] == REDACTED
    assert out["token"] == ""
    assert out["enabled"] is True
    assert data["api_key"] == "plain-looking-value"  # input untouched


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("api_key", True), ("X-Api-Key", True), ("apiKey", True), ("AWS_ACCESS_KEY_ID", True),
        ("refresh_token", True), ("session-token", True), ("client_secret", True),
        ("input_tokens", False), ("max_tokens", False), ("token_count", False),
        ("total_tokens", False), ("name", False), ("path", False),
    ],
)
def test_is_secret_key(key: str, secret: bool) -> None:
    assert is_secret_key(key) is secret


def test_clean_text_is_fast() -> None:
    prose = (
        "The gateway retries three times with exponential backoff; tests cover the edge "
        "cases and the docs describe the configuration in detail.\n"
    ) * 20_000  # about 2.7 MB
    start = time.perf_counter()
    assert redact(prose) is prose
    assert time.perf_counter() - start < 0.5
