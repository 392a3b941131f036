"""Redaction: strip credentials from text before it reaches a store, an index or a log.

Captured transcripts routinely contain pasted keys, ``.env`` lines and auth headers. Anything
that reaches ``memory.db`` is durable and gets injected into later sessions, so we redact at the
capture boundary and err on the side of removing too much. Three passes per line:

1. private key blocks (BEGIN ... PRIVATE KEY through END, or to the end when END is missing);
2. credential *markers* (``api_key``, ``authorization:``, ``password=`` ...): the whole line goes,
   because the secret may sit anywhere in it;
3. credential *formats* (AWS ids, GitHub/GitLab/Slack tokens, JWTs, bearer tokens, password
   assignments, URL passwords ...): replaced inline so the rest of the sentence survives.

A combined pre-check keeps clean text nearly free: most captured prose never enters the passes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

REDACTED: Final = "[REDACTED]"
REDACTED_PRIVATE_KEY: Final = "[REDACTED PRIVATE KEY]"

# Lowercase substrings that make a whole line suspect.
LINE_MARKERS: Final = (
    "api_key",
    "apikey",
    "api key",
    "api-key",
    "access_token",
    "access token",
    "refresh_token",
    "authorization:",
    "bearer ",
    "password=",
    "password:",
    "passwd",
    "secret=",
    "secret:",
    "secret_key",
    "token=",
    "token:",
    "client_secret",
    "private_key",
    "aws_secret_access_key",
)

_MARKER_RE: Final = re.compile("|".join(re.escape(m) for m in LINE_MARKERS), re.IGNORECASE)

_BEGIN_KEY_RE: Final = re.compile(r"-----BEGIN[ A-Z0-9]*PRIVATE KEY", re.IGNORECASE)
_END_KEY_RE: Final = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY", re.IGNORECASE)

# Inline formats: (pattern, replacement). Order matters only where patterns overlap.
_INLINE: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    # Authorization headers and bearer tokens: keep the scheme word, drop the credential.
    (re.compile(r"""(?i)\b(authorization["']?\s*[:=]\s*)\S.*"""), r"\1" + REDACTED),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]{6,}"), r"\1" + REDACTED),
    # Password-like assignments: password = "x", PASSWORD=x, "db_password": "x", pwd: x.
    (
        re.compile(
            r"""(?i)(\b\w*(?:password|passwd|passphrase|pwd)\w*["']?)(\s*[:=]\s*)"""
            r"""("[^"\n]*"|'[^'\n]*'|[^\s,;]+)"""
        ),
        r"\1\2" + REDACTED,
    ),
    # Other secret-named assignments that escaped the line markers (e.g. ``SECRET = 'x'``).
    (
        re.compile(
            r"""(?i)(\b\w*(?:secret|api_?key|access_?key|auth_?token|credential)\w*["']?)"""
            r"""(\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s,;]+)"""
        ),
        r"\1\2" + REDACTED,
    ),
    # URL userinfo passwords: scheme://user:pass@host keeps the user.
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@]+:)[^/\s@]+@"), r"\1" + REDACTED + "@"),
    # AWS access key ids.
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
    # GitHub tokens (classic and fine-grained).
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), REDACTED),
    # GitLab personal access tokens.
    (re.compile(r"\bglpat-[A-Za-z0-9_\-]{16,}"), REDACTED),
    # Slack tokens.
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{8,}"), REDACTED),
    # OpenAI / Anthropic / Stripe style secret keys.
    (re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{8,}"), REDACTED),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"), REDACTED),
    # Google API keys and OAuth access tokens.
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), REDACTED),
    (re.compile(r"\bya29\.[0-9A-Za-z_\-]{16,}"), REDACTED),
    # Hugging Face and npm tokens.
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bnpm_[A-Za-z0-9]{20,}"), REDACTED),
    # JSON Web Tokens: three base64url segments, the header starting ``eyJ``.
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]*"), REDACTED),
)

# Per line: does it need the passes at all? Case-sensitive for token prefixes (``AKIA`` not
# ``akia``), case-insensitive for words.
_PRECHECK_RE: Final = re.compile(
    r"(?i:api.?key|access.?token|refresh.?token|authoriz|bearer|pass(?:word|wd|phrase)|pwd"
    r"|secret|token\s*[:=]|private.?key|credential|access.?key|-----begin)"
    r"|AKIA|ASIA|gh[pousr]_|github_pat_|glpat-|xox[abprs]-|[sr]k_(?:live|test)_|sk-|AIza"
    r"|ya29\.|hf_|npm_|eyJ|://[^/\s:@]+:[^/\s@]+@"
)

# Substrings at least one of which every secret above contains: a scan with ``in`` is several
# times faster than any regex, so clean text pays almost nothing.
_ANCHORS: Final = (
    "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox",
    "k_live_", "k_test_", "sk-", "AIza", "ya29.", "hf_", "npm_", "eyJ",
)
_LOWER_ANCHORS: Final = (
    "key", "token", "authoriz", "bearer", "pass", "pwd", "secret", "credential", "-----begin",
)

# Keys whose values are secrets regardless of what the value looks like.
_SECRET_KEY_PARTS: Final = (
    "api_key",
    "apikey",
    "access_key",
    "authorization",
    "bearer",
    "cookie",
    "credential",
    "client_secret",
    "password",
    "passwd",
    "private_key",
    "secret",
    "token",
)
# Keys that merely count or limit tokens (usage figures), not credentials.
_TOKEN_COUNT_KEY_RE: Final = re.compile(
    r"tokens|token_(?:count|limit|budget|usage|total)|(?:^|_)(?:max|num|n)_token$"
)


def contains_secret(text: str) -> bool:
    """True when ``redact`` would change ``text``: for tests and diagnostics."""
    return bool(text) and redact(text) != text


def redact(text: str) -> str:
    """Return ``text`` with credentials removed (see the module docstring for the rules)."""
    if not text or not _might_hold_secret(text):
        return text
    out: list[str] = []
    in_key = False
    for line in text.split("\n"):
        if in_key:
            if _END_KEY_RE.search(line):
                in_key = False
            continue
        begin = _BEGIN_KEY_RE.search(line)
        if begin:
            out.append(REDACTED_PRIVATE_KEY)
            # A one-line block (escaped newlines) ends on the same line.
            in_key = not _END_KEY_RE.search(line, begin.end())
            continue
        out.append(_redact_line(line))
    return "\n".join(out)


def _might_hold_secret(text: str) -> bool:
    if any(anchor in text for anchor in _ANCHORS):
        return True
    if "://" in text and "@" in text:
        return True
    folded = text.lower()
    return any(anchor in folded for anchor in _LOWER_ANCHORS)


def _redact_line(line: str) -> str:
    if not _PRECHECK_RE.search(line):
        return line
    if _MARKER_RE.search(line):
        return REDACTED
    for pattern, replacement in _INLINE:
        line = pattern.sub(replacement, line)
    return line


def is_secret_key(key: str) -> bool:
    """True for mapping keys whose values are credentials (``api_key``, ``Cookie`` ...)."""
    folded = key.lower().replace("-", "_")
    if not any(part in folded for part in _SECRET_KEY_PARTS):
        return False
    if "token" in folded and _TOKEN_COUNT_KEY_RE.search(folded):
        # ``input_tokens`` and friends: counts, unless another secret word is also present.
        others = [p for p in _SECRET_KEY_PARTS if p != "token" and p in folded]
        return bool(others)
    return True


def redact_value(obj: Any) -> Any:
    """Redact recursively through dicts, lists and tuples; strings go through ``redact``.

    Values under secret-looking keys are replaced whole (a nested dict under ``credentials``
    is gone entirely), except empty values and booleans, which carry no secret.
    """
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, Mapping):
        result: dict[Any, Any] = {}
        for key, value in obj.items():
            if isinstance(key, str) and is_secret_key(key) and _has_payload(value):
                result[key] = REDACTED
            else:
                result[key] = redact_value(value)
        return result
    if isinstance(obj, (list, tuple)):
        return [redact_value(item) for item in obj]
    return obj


def _has_payload(value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return False
    if isinstance(value, (str, bytes, list, tuple, dict)):
        return len(value) > 0
    return True
