"""What lintaid (or the client) put into the conversation, told apart from what the person
asked.

Clients write injected context back into their transcripts and payloads: Gemini CLI puts a
hook's ``additionalContext`` into the user's message as ``<hook_context>…</hook_context>``
parts and opens every chat with a ``<session_context>`` block (the directory tree and MCP
servers' instructions); Claude Code has ``<system-reminder>`` blocks, Codex
``<environment_context>`` and ``<user_instructions>``; lintaid wraps what it gives Antigravity in
``<LINTAID_UNTRUSTED_MEMORY>``. Read as the person's request, lintaid
captures its own memories again (and mines claims from the copy), so every reader drops them:
the client's context wrappers whole, and lintaid's own blocks (a line opening with
``… (lintaid):``, as every block ``lintaid.integrations.injection`` renders does) from that
line on. A request left with nothing is no request.
"""

from __future__ import annotations

import re
from typing import Final

OWN_MARKER: Final = "(lintaid):"
"""What the first line of every block lintaid injects holds, after a short title."""
UNTRUSTED_TAG: Final = "LINTAID_UNTRUSTED_MEMORY"
"""lintaid's own wrapper, where a client is given memories as a message (Antigravity)."""
CONTEXT_TAGS: Final = ("hook_context", "session_context", "system-reminder",
                       "environment_context", "user_instructions", "loaded_context",
                       UNTRUSTED_TAG)
"""Tags clients (and lintaid) wrap context in that is not the person's words."""

_WRAPPED: Final = re.compile(
    r"<(?P<tag>" + "|".join(map(re.escape, CONTEXT_TAGS)) + r")>.*?(?:</(?P=tag)>|\Z)",
    re.DOTALL)
# lintaid's block: a line "<Title of a few words> (lintaid): ...", to the end of the text.
_OWN_BLOCK: Final = re.compile(r"^[A-Z][^\n]{0,60}? " + re.escape(OWN_MARKER) + r".*\Z",
                               re.DOTALL | re.MULTILINE)


def strip(text: str) -> str:
    """``text`` without client context wrappers and lintaid's own blocks; "" when nothing
    else was there. A wrapper left open (the text was cut) runs to the end."""
    if not text:
        return text
    if "<" not in text and OWN_MARKER not in text:
        return text
    kept = _WRAPPED.sub("", text)
    kept = _OWN_BLOCK.sub("", kept)
    return kept.strip() if kept != text else text


def opens_own_block(text: str) -> bool:
    """True when ``text`` begins with one of lintaid's blocks (its titled first line)."""
    return _OWN_BLOCK.match(text.lstrip()) is not None


def injected_only(text: str) -> bool:
    """True when ``text`` holds something, all of it injected context."""
    return bool(text.strip()) and not strip(text)
