"""Every secret format of the corpus (``tests/redaction_corpus.py``, over 100) through every
path that stores text: record content, metadata, reasons (forget, restore, review), the hooks'
prompts and transcripts, the spool, project files, an import, the log, an export with its
history, backups and the viewer's pages. Nothing of any secret may be found afterwards, in
any file under ``.lint-ai/`` (or the export), in any search index, or in any page served.

(A teammate's pulled rows are the team's path: ``test_team_hostile.py``.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from lintaid_client import spool
from tests.conftest import Served, wait_for
from tests.redaction_corpus import CLEAN, SECRETS
from tests.test_secrets_at_rest import assert_nothing_secret, secret_piece
from tests.test_viewer import open_viewer
from tests.transcripts import stop_payload, write_transcript

LINES = [line for _name, line, _secrets, _kept in SECRETS]
REASON_BYTES = 2000  # a reason's limit (the forget, restore and decide ops)


def groups(limit: int = REASON_BYTES - 100) -> list[str]:
    """Every line, several to a text of at most ``limit`` bytes (one line each)."""
    out: list[str] = []
    for line in LINES:
        if out and len((out[-1] + "\n" + line).encode()) <= limit:
            out[-1] += "\n" + line
        else:
            out.append(line)
    return out


GROUPS = groups()


def nothing_in(data: bytes, where: str) -> None:
    piece = secret_piece(data)
    assert piece is None, f"{where}: {piece!r}"


def test_the_corpus_has_over_sixty_formats() -> None:
    assert len({name for name, *_ in SECRETS}) >= 60


def test_every_secret_format_is_redacted_on_every_path(
        project: Path, serve: Callable[..., Served], tmp_path: Path) -> None:
    served = serve(project, watch=True)
    # 1. Content and metadata (values, keys, nested), one record per format.
    items = [{"content": f"Note {i} about the deploy: {line}",
              "metadata": {"context": line, "api_key": line[-30:], line: "as a key",
                           "nested": {"note": line}}} for i, line in enumerate(LINES)]
    notes = [r["id"] for r in served.call("add", {"items": items})["results"]]

    # 2. Reasons: notes forgotten with every format in their reasons, then restored so.
    for rid, reason in zip(notes, GROUPS, strict=False):
        served.call("forget", {"id": rid, "reason": reason})
    for rid, reason in zip(notes, GROUPS, strict=False):
        served.call("restore", {"id": rid, "reason": reason})
    # ... and review decisions' reasons, one conflict per group of formats.
    pairs = [{"content": f"{who} owns the billing shard {i}.", "created_at": 1_700_000_000}
             for i in range(len(GROUPS)) for who in ("Dan", "Eve")]  # one time: a conflict
    served.call("add", {"items": pairs})
    queue = wait_for(lambda: (q := served.call("review", {"limit": 500})["results"])
                     and len(q) >= len(GROUPS) and q, 60)
    for item, reason in zip(queue, GROUPS, strict=False):
        served.call("decide", {"id": item["id"], "decision": "reject", "reason": reason})

    # 3. The hooks: prompts holding every format, and a turn holding all of them (Stop).
    for i, text in enumerate(GROUPS):
        served.hook("UserPromptSubmit", {"session_id": f"p{i}", "prompt": f"Please:\n{text}",
                                         "transcript_path": "/nonexistent"})
    transcript = write_transcript(tmp_path / "t.jsonl", [
        ("user", "Here is what I have:\n" + "\n".join(LINES)),
        ("assistant", "I used these:\n" + "\n".join(reversed(LINES)))], cwd=str(project))
    served.hook("Stop", stop_payload(transcript, cwd=str(project)))

    # 4. Project files: each format inside a runbook the workspace indexes.
    docs = project / "docs"
    docs.mkdir()
    for i, line in enumerate(LINES):
        (docs / f"runbook-{i}.md").write_text(
            f"# Runbook {i}\n\nThe deploy of service {i} needs these settings.\n\n{line}\n\n"
            "Ask the platform team before changing them.\n")  # one a file: files that are
    # mostly secrets are not indexed at all, and that is not what this looks at
    served.call("reindex", {"full": False}, timeout=120)  # reconciled: every file read
    # (a file that is mostly secrets is not indexed at all: the PEM blocks' runbooks)
    assert served.call("status")["workspace"]["files"] >= len(LINES) - 10

    # 5. An import: records, a tombstone and audit rows carrying every format.
    rows = [{"type": "header", "format": "lintaid-export", "version": 1}]
    for i, line in enumerate(LINES):
        rows.append({"type": "record", "id": f"mimport{i:04d}", "content": f"Imported: {line}",
                     "kind": "note", "source": "import", "created_at": 1_700_000_000 + i,
                     "metadata": {"why": line}})
        rows.append({"type": "audit", "target": f"mimport{i:04d}", "op": "add",
                     "actor": "elsewhere", "at": 1_700_000_000 + i,
                     "after_content": line, "detail": {"reason": line}})
    (tmp_path / "in.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = served.cli("import", str(tmp_path / "in.jsonl"))
    assert result.exit_code == 0, result.stderr

    # 6. An export with its history, written outside the store.
    out = tmp_path / "export.jsonl"
    assert served.cli("export", "--include-history", "-o", str(out)).exit_code == 0
    nothing_in(out.read_bytes(), "the export")
    assert out.stat().st_size > 10_000  # it holds the records

    # 7. The viewer's pages: the timeline, each record, the audit log, the review page.
    viewer = open_viewer(served)
    pages = ["/", "/audit", "/conflicts", "/status", "/search?q=deploy"]
    pages += [f"/record/{rid}" for rid in notes[::4]]
    for path in pages:
        page = viewer.get(path)
        assert page.status == 200, path
        nothing_in(page.body.encode(), f"the viewer's {path}")
    served.call("forget", {"id": notes[0], "reason": LINES[0][:REASON_BYTES]})
    nothing_in(viewer.get(f"/record/{notes[0]}").body.encode(), "a forgotten record's page")

    # 8. A backup on request; then everything at rest, indexes included.
    served.cli("backup")
    assert_nothing_secret(project)

    # 9. The spool: the daemon down, every format in a prompt and a capture waits on disk.
    served.stop()
    for i, text in enumerate(GROUPS):
        served.hook("UserPromptSubmit", {"session_id": f"d{i}", "prompt": f"Down:\n{text}",
                                         "transcript_path": "/nonexistent"})
    second = write_transcript(tmp_path / "t2.jsonl", [
        ("user", "While it was down:\n" + "\n".join(LINES)),
        ("assistant", "Noted:\n" + "\n".join(LINES))], session_id="down", cwd=str(project))
    served.hook("Stop", stop_payload(second, session_id="down", cwd=str(project)))
    assert len(spool.pending(project)) == len(GROUPS) + 1
    assert_nothing_secret(project)
    served.start()
    wait_for(lambda: not spool.pending(project), 60)
    served.stop()  # the clean stop's backup and the checkpointed WAL
    assert_nothing_secret(project)
    served.start()


def test_benign_identifiers_come_through_every_path_unchanged(
        project: Path, serve: Callable[..., Served], tmp_path: Path) -> None:
    """The other side: SHAs, UUIDs, digests, ``mkdir -p``, ``ssh -p 22`` ... (every line of
    ``CLEAN``) are stored exactly as given on the paths that redact: content, metadata,
    forget and restore reasons, a hook's prompt and a captured turn; nothing over-redacted."""
    served = serve(project)
    items = [{"content": f"Note {i}: {line}", "metadata": {"context": line}}
             for i, line in enumerate(CLEAN)]
    notes = [r["id"] for r in served.call("add", {"items": items})["results"]]
    for rid, line in zip(notes, CLEAN, strict=True):
        got = served.call("get", {"id": rid})
        assert got["content"].endswith(line) and got["metadata"]["context"] == line, line
    reasons = [line for line in CLEAN if len(line.encode()) <= REASON_BYTES]
    for rid, reason in zip(notes, reasons, strict=False):
        served.call("forget", {"id": rid, "reason": reason})
        served.call("restore", {"id": rid, "reason": reason})
        kept = [e["detail"].get("reason") for e in served.call("audit", {"id": rid})["results"]
                if e["event"] in ("FORGET", "RESTORE")]
        assert kept == [reason, reason], reason
    served.hook("UserPromptSubmit", {"session_id": "benign", "prompt": "\n".join(CLEAN),
                                     "transcript_path": "/nonexistent"})
    transcript = write_transcript(tmp_path / "t.jsonl", [
        ("user", "What I have:\n" + "\n".join(CLEAN)),
        ("assistant", "Used:\n" + "\n".join(CLEAN))], session_id="benign-turn",
        cwd=str(project))
    served.hook("Stop", stop_payload(transcript, session_id="benign-turn", cwd=str(project)))
    texts = [h["content"] for kind in ("prompt", "capture")
             for h in served.call("list", {"kind": kind, "limit": 100})["results"]]
    assert len(texts) >= 2
    for text in texts:
        assert "[REDACTED" not in text, text[:300]
    whole = "\n".join(texts)
    assert [line for line in CLEAN if line not in whole] == []
