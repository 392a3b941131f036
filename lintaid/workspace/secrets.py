"""Secrets in project files: which files are skipped whole, and how the rest is redacted.

A file that is mostly secrets (``.env*``, private keys, credential JSON) is never indexed:
redacted, it would say nothing. Every other file is redacted before it is chunked, stored or
indexed, with the one redactor (``lintaid_client.redact``). Redaction may fold a multi-line
secret (a key block) into one marker; the lines it folded are kept as blank lines, so every
chunk and every claim keeps the file's line numbers.
"""

from __future__ import annotations

import difflib
from typing import Final

from lintaid_client.redact import redact

SECRET_PREFIXES: Final = (".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")
SECRET_SUFFIXES: Final = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx",
                          ".gpg", ".asc")
SECRET_NAMES: Final = frozenset({".netrc", ".pgpass", ".git-credentials", ".htpasswd",
                                 "credentials", "secrets.yml", "secrets.yaml"})
CREDENTIAL_JSON_WORDS: Final = ("credential", "secret", "service-account", "service_account",
                                "serviceaccount", "token", "keyfile")
MOSTLY: Final = 0.5
MARKER: Final = "[REDACTED"


def is_secret_file(rel: str) -> bool:
    """Whether the file's name says it holds secrets: ``.env*``, key files, ``.netrc``,
    credential JSON (``credentials.json``, ``service-account*.json``, ``*token*.json``)."""
    name = rel.rsplit("/", 1)[-1].lower()
    if name.startswith(SECRET_PREFIXES) or name.endswith(SECRET_SUFFIXES):
        return True
    if name in SECRET_NAMES:
        return True
    return name.endswith(".json") and any(word in name for word in CREDENTIAL_JSON_WORDS)


def redact_keeping_lines(text: str) -> str:
    """``text`` redacted, with as many lines as it had: lines a marker folded come back blank,
    right after the marker's line."""
    red = redact(text)
    if red == text or red.count("\n") == text.count("\n"):
        return red
    before, after = text.split("\n"), red.split("\n")
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for _tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 - i1 <= j2 - j1:
            out.extend(after[j1:j2])
            continue
        # More lines went in than came out: put each redacted line back on its original line,
        # in order, and leave the lines a marker folded blank.
        slots = [""] * (i2 - i1)
        at = i1
        for k in range(j1, j2):
            last = i2 - (j2 - k)  # leave room for the lines still to place
            best = _origin(after[k], before, at, last)
            slots[best - i1] = after[k]
            at = best + 1
        out.extend(slots)
    return "\n".join(out)


def _origin(line: str, before: list[str], first: int, last: int) -> int:
    """Where a redacted ``line`` came from among ``before[first:last + 1]``: a line holding a
    marker from the first line that starts as it does (the secret began there), any other
    from the line it resembles most."""
    head, marked, _ = line.partition(MARKER)
    if marked:
        for i in range(first, last + 1):
            if before[i].startswith(head):
                return i
        return first
    return max(range(first, last + 1), key=lambda i: (
        difflib.SequenceMatcher(None, before[i], line, autojunk=False).ratio(), -i))


def mostly_secrets(text: str, redacted: str) -> bool:
    """Whether redaction took at least half of the text, or changed at least half of its
    non-blank lines: what is left would say nothing worth indexing."""
    if redacted == text:
        return False
    size = len(text.strip())
    if size and len(text.strip()) - len(redacted.strip()) >= MOSTLY * size:
        return True
    lines = [line for line in text.splitlines() if line.strip()]
    kept = set(redacted.splitlines())
    changed = sum(1 for line in lines if line not in kept)
    return bool(lines) and changed >= MOSTLY * len(lines)
