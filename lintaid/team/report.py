"""The team tier's status in words, for ``lintaid team status``, ``lintaid status`` and
``doctor``. Reads the status the daemon reports; imports nothing of the tier itself."""

from __future__ import annotations

import time
from typing import Any, Final

OUTBOX_WARN: Final = 1000  # rows waiting: worth a word even while online


def _ago(when: float | None) -> str:
    if not when:
        return "never"
    seconds = max(0, int(time.time() - when))
    if seconds < 120:
        return f"{seconds}s ago"
    if seconds < 7200:
        return f"{seconds // 60}m ago"
    if seconds < 172800:
        return f"{seconds // 3600}h ago"
    return f"{seconds // 86400}d ago"


def _lag(value: Any) -> str:
    return "?" if value is None else f"{float(value):.1f}s"


def summary(team: dict[str, Any]) -> str:
    """One line: the state and the queues."""
    if not team.get("joined"):
        return "no team" + (f" ({team['problem']})" if team.get("problem") else "")
    push, pull = team.get("push") or {}, team.get("pull") or {}
    state = team.get("state") or "?"
    if state != "online" and team.get("offline_since"):
        state += f" since {_ago(team['offline_since'])}"
    return (f"{team.get('team')} ({state}): {push.get('pending', 0)} to push "
            f"(lag {_lag(push.get('lag_s'))}), {pull.get('behind') if pull.get('behind') is not None else '?'} "
            f"to pull (lag {_lag(pull.get('lag_s'))})")


def lines(team: dict[str, Any]) -> list[str]:
    """``lintaid team status``."""
    if not team.get("joined"):
        out = ["lintaid team: this project is in no team (`lintaid team join DSN` joins one)"]
        if team.get("problem"):
            out.append(f"  problem     {team['problem']}")
        return out
    push, pull = team.get("push") or {}, team.get("pull") or {}
    state = team.get("state") or "?"
    if state != "online" and team.get("offline_since"):
        state += f" since {_ago(team['offline_since'])}"
    out = [
        f"lintaid team {team.get('team')}: {state}, member {team.get('member')} on "
        f"{team.get('machine')}",
        f"  server      {team.get('dsn')} (schema {team.get('schema') or '?'}; password from "
        f"{team.get('password_source') or '?'})",
        f"  repository  {team.get('repo_key')}",
        f"  push        {push.get('pending', 0)} waiting in the outbox (lag "
        f"{_lag(push.get('lag_s'))}); {push.get('pushed', 0)} pushed by this daemon, last "
        f"{_ago(push.get('last_at'))}",
        f"  pull        {pull.get('behind') if pull.get('behind') is not None else '?'} behind "
        f"(lag {_lag(pull.get('lag_s'))}); {pull.get('pulled', 0)} pulled by this daemon, last "
        f"{_ago(pull.get('last_at'))}, cursor {pull.get('cursor', 0)}",
        f"  private     {', '.join(team.get('private_clients') or []) or 'no client'}; "
        "prompts and `add --private` records are never shared",
    ]
    quarantine = team.get("quarantine") or {}
    if quarantine.get("count"):
        out.append(f"  quarantine  {quarantine['count']} pulled event(s) refused alone (the "
                   "cursor moved past them); the newest:")
        for row in quarantine.get("newest") or []:
            out.append(f"    row {row.get('server_seq')} from {row.get('member')} "
                       f"({row.get('kind')}): {row.get('reason')}")
    if team.get("last_error"):
        out.append(f"  last error  {team['last_error']} ({_ago(team.get('last_error_at'))})")
    if team.get("problem"):
        out.append(f"  problem     {team['problem']}")
    return out


def check(team: dict[str, Any]) -> tuple[bool, bool, str, str]:
    """``doctor``'s judgement of a joined team: (ok, warn, detail, fix)."""
    push = team.get("push") or {}
    pending = push.get("pending", 0)
    state = team.get("state")
    waiting = f"{pending} change(s) wait in the outbox"
    if state == "refused" or (state == "off" and team.get("problem")):
        return (False, False, f"team {team.get('team')}: {team.get('last_error') or team.get('problem')}",
                "pip install -U 'lintaid[team]', then lintaid stop (the next command starts it)")
    if state != "online":
        since = f" since {_ago(team['offline_since'])}" if team.get("offline_since") else ""
        return (True, True, f"team {team.get('team')}: offline{since} "
                f"({team.get('last_error') or 'connecting'}); {waiting}, delivered when the "
                "server answers; local memory works as before",
                f"check that {team.get('dsn')} is up and reachable from here, and the password "
                f"(from {team.get('password_source') or '?'})")
    refused = (team.get("quarantine") or {}).get("count", 0)
    if refused:
        return (True, True, f"team {team.get('team')}: online; {refused} pulled event(s) "
                "were refused and quarantined (a teammate's lintaid wrote what a local write "
                "could not be, or someone wrote rows by hand)",
                "`lintaid team status` lists them with the member and the reason")
    if pending >= OUTBOX_WARN:
        return (True, True, f"team {team.get('team')}: online, but {waiting}",
                "it drains by itself; `lintaid team status` shows the lag")
    return (True, False, f"team {team.get('team')}: online as {team.get('member')}, "
            f"{waiting}, {(team.get('pull') or {}).get('behind', '?')} to pull", "")
