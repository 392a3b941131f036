"""Held supersession links (``links``: ``new_id`` supersedes ``old_id``) never make a cycle.

"Y supersedes X" and then "X supersedes Y" would hide both records and the fact with them, so
every path that holds a link (supersede, review acceptance, import, a teammate's link) asks
``closes_cycle`` first and is refused when the answer is yes. Forgotten ends count: a restore
would bring the cycle back.
"""

from __future__ import annotations

import sqlite3


def closes_cycle(conn: sqlite3.Connection, new_id: str, old_id: str) -> bool:
    """Whether holding "``new_id`` supersedes ``old_id``" would close a cycle: ``old_id``
    supersedes ``new_id`` already, directly or through others."""
    if new_id == old_id:
        return True
    row = conn.execute(
        "WITH RECURSIVE reach(id) AS (SELECT old_id FROM links WHERE new_id = ?"
        " UNION SELECT l.old_id FROM links l JOIN reach r ON l.new_id = r.id)"
        " SELECT 1 FROM reach WHERE id = ? LIMIT 1", (old_id, new_id)).fetchone()
    return row is not None


def cycle_message(new_id: str, old_id: str) -> str:
    return (f"{old_id} already supersedes {new_id} (directly or through others): holding "
            f"{new_id} over it too would hide both; forget one, or supersede with new text")
