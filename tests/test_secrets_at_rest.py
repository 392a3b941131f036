"""Nothing secret at rest: after each write path, every file under ``.lint-ai/`` (databases,
WAL, indexes, spool, logs, backups) is searched for a list of fake secrets, and the search
indexes are asked for their words. None may be found anywhere."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import tantivy

from lintaid_client import Memory, paths, spool
from tests.conftest import lintaid_env, run_cli, run_hook, start_daemon, stop_daemon, wait_for
from tests.redaction_corpus import SECRETS
from tests.transcripts import FAKE_SECRETS, stop_payload, write_secret_transcript

CORPUS_LINES = [line for _name, line, _secrets, _kept in SECRETS]
ALL_SECRETS = sorted({s for *_x, secrets, _k in SECRETS for s in secrets} | set(FAKE_SECRETS))
WINDOW = 12  # a piece this long of a secret counts as the secret


def needles() -> list[bytes]:
    """Every piece of a secret that counts as the secret: the whole secret when it is at most
    ``WINDOW`` long, else each ``WINDOW``-long piece of it; lower-cased (found in any case)."""
    out: set[bytes] = set()
    for secret in ALL_SECRETS:
        low = secret.lower().encode()
        out.update([low] if len(low) <= WINDOW else
                   [low[i:i + WINDOW] for i in range(len(low) - WINDOW + 1)])
    return sorted(out)


NEEDLES = needles()
ANCHOR = WINDOW // 2


def _anchors() -> dict[bytes, list[tuple[bytes, int]]]:
    """Each ``ANCHOR``-long piece of a long secret taken at every ``ANCHOR``-th offset, with
    the secret and the offset. Every ``WINDOW``-long piece of a secret holds one of them whole,
    so searching a file for these few finds every piece the ~2,000 needles would (each hit is
    then checked against the needles around it): one pass per anchor instead of per needle."""
    out: dict[bytes, list[tuple[bytes, int]]] = {}
    for secret in sorted({s.lower().encode() for s in ALL_SECRETS}):
        if len(secret) <= WINDOW:
            continue
        for at in range(0, len(secret) - ANCHOR + 1, ANCHOR):
            out.setdefault(secret[at:at + ANCHOR], []).append((secret, at))
    return out


ANCHORS = _anchors()
SHORT = sorted({s.lower().encode() for s in ALL_SECRETS if len(s) <= WINDOW})


def ascending(piece: bytes) -> bool:
    """Each byte one more than the one before ('abcdefghijkl')."""
    return all(b == a + 1 for a, b in zip(piece, piece[1:], strict=False))


def never(piece: bytes) -> bool:
    """Rules no piece out."""
    return False


SECRET_BYTES = frozenset(b for secret in ALL_SECRETS for b in secret.lower().encode())
GAP = bytes([next(b for b in range(256) if b not in SECRET_BYTES)])
# Every needle lies in a run of secrets' bytes at least this long: the rest of a file cannot
# hold one (and runs joined by a byte no secret holds make no needle across the join).
RUNS = re.compile(b"[" + re.escape(bytes(sorted(SECRET_BYTES))) + b"]{%d,}"
                  % min([WINDOW, *map(len, SHORT)]))
LITERALS = frozenset(ANCHORS) | frozenset(SHORT)


def _trie(words: frozenset[bytes]) -> bytes:
    """A regular expression matching the longest of ``words`` that starts at a position: one
    branch per next byte, so every word starting there is a prefix of what it matches."""
    root: dict = {}
    for word in words:
        node = root
        for byte in word:
            node = node.setdefault(byte, {})
        node[None] = {}

    def pattern(node: dict) -> bytes:
        branches = [re.escape(bytes([byte])) + pattern(node[byte])
                    for byte in sorted(b for b in node if b is not None)]
        if not branches:
            return b""
        body = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
        return b"(?:" + body + b")?" if None in node else body

    return pattern(root)


STARTS = re.compile(b"(?=(" + _trie(LITERALS) + b"))")  # at every position, overlaps too


def occurring(lowered: bytes) -> set[bytes]:
    """The anchors and short secrets that occur in ``lowered``, in one pass."""
    found: set[bytes] = set()
    for match in STARTS.finditer(lowered):
        longest = match.group(1)
        found.update(longest[:n] for n in range(1, len(longest) + 1)
                     if longest[:n] in LITERALS)
    return found


_SCANNED: dict[tuple[bytes, Callable[[bytes], bool]], bytes | None] = {}


def secret_piece(data: bytes, skip: Callable[[bytes], bool] = never) -> bytes | None:
    """A needle that occurs in ``data`` (in any case) and that ``skip`` does not rule out, or
    None: the same answer as looking for every needle in turn, in a fraction of the time.

    Only the runs of secrets' bytes long enough to hold a needle are looked at, and in them
    only the anchors and short secrets that occur at all (one pass of a regular expression
    instead of a search for each); the same bytes are not looked at twice (a file that did
    not change since the last look, by its digest)."""
    key = (hashlib.blake2b(data, digest_size=16).digest(), skip)
    if key in _SCANNED:
        return _SCANNED[key]
    lowered = GAP.join(RUNS.findall(data.lower()))
    present = occurring(lowered)
    found = _first_piece(lowered, present, skip)
    if skip in (never, ascending):  # no other function is kept, nor called again
        _SCANNED[key] = found
    return found


def _first_piece(lowered: bytes, present: set[bytes],
                 skip: Callable[[bytes], bool]) -> bytes | None:
    for short in SHORT:
        if short in present and not skip(short):
            return short
    for anchor, places in ANCHORS.items():
        if anchor not in present:
            continue
        at = lowered.find(anchor)
        while at != -1:
            for secret, offset in places:
                # the needles of ``secret`` that hold this anchor: starts offset-6 .. offset
                for start in range(max(0, offset + ANCHOR - WINDOW),
                                   min(offset, len(secret) - WINDOW) + 1):
                    begin = at - (offset - start)
                    piece = secret[start:start + WINDOW]
                    if begin >= 0 and lowered[begin:begin + WINDOW] == piece and not skip(piece):
                        return piece
            at = lowered.find(anchor, at + 1)
    return None


def found_on_disk(root: Path) -> list[str]:
    """``file: piece`` for every piece of a secret in any file under .lint-ai.

    Tantivy's files hold tables of ascending bytes (offsets, ordinals) that read as
    'ABCDEFGHIJKLMNOPQRSTU' whenever a segment's layout puts one there, and 'abcdefghijkl' is a
    piece of three of the fake secrets: in an index's files such a piece is not counted (what
    an index holds is asked of the index itself, ``found_in_indexes``); everywhere else it is.
    """
    hits = []
    top = paths.state_dir(root)
    for path in sorted(top.rglob("*")):
        if not path.is_file():
            continue
        in_index = path.relative_to(top).parts[0] == "index"
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # a running index merged it away after the listing
            continue
        piece = secret_piece(data, ascending if in_index else never)
        if piece is not None:
            hits.append(f"{path.relative_to(root)}: {piece.decode()!r}")
    return hits


def words(secret: str) -> list[str]:
    """The words a search index would hold for a secret (long enough to mean it)."""
    return [w for w in re.split(r"[^0-9a-z]+", secret.lower()) if len(w) >= 10]


def found_in_indexes(root: Path, secrets: list[str] = ALL_SECRETS) -> list[str]:
    """Secret words any search index answers to (its term dictionaries are compressed, so
    reading their bytes alone proves nothing). Every index counts: the workspace's and each
    user's memory index (``index/memory/u<hash>/``), named by the store they belong to."""
    hits = []
    top = paths.state_dir(root) / "index"
    for folder in sorted(meta.parent for meta in top.rglob("meta.json")):
        store = folder.relative_to(top).parts[0]
        index = tantivy.Index.open(str(folder))
        schema = json.loads((folder / "meta.json").read_text())["schema"]
        fields = [f["name"] for f in schema if f["type"] == "text"]
        searcher = index.searcher()
        for secret in secrets:
            for word in words(secret):
                query, _errors = index.parse_query_lenient(word, fields)
                if searcher.search(query, limit=1).hits:
                    hits.append(f"{store}: {word}")
    return hits


def assert_nothing_secret(root: Path) -> None:
    assert found_on_disk(root) == []
    assert found_in_indexes(root) == []


def mcp_add(root: Path, content: str) -> dict:
    """``add_memory`` through the MCP shim as an agent calls it (JSON-RPC over stdio)."""
    calls = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "pytest", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "add_memory", "arguments": {"content": content}}},
    ]
    proc = subprocess.run([sys.executable, "-m", "lintaid_client.mcp", "--project", str(root)],
                          input="".join(json.dumps(c) + "\n" for c in calls), text=True,
                          capture_output=True, env=lintaid_env(), timeout=60)
    replies = {r.get("id"): r for r in map(json.loads, proc.stdout.splitlines())}
    result = replies[2]["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


def test_no_secret_reaches_any_file_on_any_path(project: Path, tmp_path: Path) -> None:
    start_daemon(project)
    try:
        # 1. The Python API: secrets in content, in metadata values and in metadata keys.
        with Memory(project=project) as m:
            for i, line in enumerate(CORPUS_LINES):
                m.add(f"Note {i}: {line}", metadata={
                    "api_key": ALL_SECRETS[i % len(ALL_SECRETS)], "context": line,
                    FAKE_SECRETS[1]: "a token as a key", "nested": {"token": FAKE_SECRETS[9]}})
        assert_nothing_secret(project)

        # 2. The hooks, daemon up: a prompt full of secrets, then a turn captured on Stop.
        for i, line in enumerate(CORPUS_LINES[:12]):
            run_hook(project, "UserPromptSubmit", {"session_id": f"p{i}", "prompt": line})
        transcript = write_secret_transcript(tmp_path / "secret.jsonl", cwd=str(project))
        run_hook(project, "Stop", stop_payload(transcript, cwd=str(project)))
        assert_nothing_secret(project)

        # 3. MCP add_memory.
        for line in CORPUS_LINES[12:20]:
            mcp_add(project, f"Agent note: {line}")
        assert_nothing_secret(project)

        # 4. Backups: one on request.
        run_cli(project, "backup")
        assert_nothing_secret(project)
    finally:
        stop_daemon(project)  # 5. the clean stop's backup and the checkpointed WAL
    assert_nothing_secret(project)

    # 6. The hooks, daemon down: events go to the spool (written by a detached child).
    down = lintaid_env(LINTAID_NO_AUTOSTART="1")
    for i, line in enumerate(CORPUS_LINES[20:30]):
        run_hook(project, "UserPromptSubmit", {"session_id": f"d{i}", "prompt": line},
                 env=down)
    second = write_secret_transcript(tmp_path / "secret2.jsonl", session_id="down-session",
                                     cwd=str(project))
    run_hook(project, "Stop", stop_payload(second, session_id="down-session",
                                           cwd=str(project)), env=down)
    wait_for(lambda: len(spool.pending(project)) == 11, timeout=30)
    assert_nothing_secret(project)

    # 7. The spool drained into the store.
    start_daemon(project)
    try:
        wait_for(lambda: not spool.pending(project), timeout=30)
        assert_nothing_secret(project)
    finally:
        stop_daemon(project)
    assert_nothing_secret(project)


def test_the_search_catches_a_planted_secret(project: Path) -> None:
    """The checks above can fail: a secret written behind the redactor's back is found, on
    disk and in the index."""
    start_daemon(project)
    try:
        run_cli(project, "add", "A harmless note about the gannetcluster deploy.")
    finally:
        stop_daemon(project)
    (paths.state_dir(project) / "logs" / "planted.txt").write_text(f"oops {FAKE_SECRETS[1]}\n")
    found = found_on_disk(project)
    assert len(found) == 1 and found[0].startswith(".lint-ai/logs/planted.txt: ")
    assert found_in_indexes(project, ["gannetcluster"]) == ["memory: gannetcluster"]
    assert found_in_indexes(project, ["cormorantcluster"]) == []


def test_the_quick_search_finds_exactly_what_each_needle_would() -> None:
    """``secret_piece`` answers as looking for every needle in turn would: every needle is
    found, in any case and at any offset, and a needle one byte short of whole is not."""
    filler = b"".join(b"%05d row of plain text; " % i for i in range(20))
    for i, needle in enumerate(NEEDLES):
        cut = (i * 37) % len(filler)
        for piece in (needle, needle.upper()):
            planted = filler[:cut] + piece + filler[cut:]
            assert secret_piece(planted) is not None, piece
        # broken in the middle: no longer a needle (unless it still holds another one)
        broken = filler[:cut] + needle[:WINDOW // 2] + b"\x00" + needle[WINDOW // 2:] + filler
        naive = any(n in broken.lower() for n in NEEDLES)
        assert (secret_piece(broken) is not None) == naive, needle
    assert secret_piece(filler) is None
    # an ascending run is skipped only where asked, and a real piece beside it still counts
    table = bytes(range(0x41, 0x76))  # as a segment's table of ordinals can read
    assert secret_piece(table) is not None
    assert secret_piece(table, ascending) is None
    assert secret_piece(table + NEEDLES[-1], ascending) == NEEDLES[-1]
