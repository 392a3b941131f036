from __future__ import annotations

import json
import os
from pathlib import Path

from lintaid.capture import transcript
from lintaid.capture.transcript import MAX_FIELD_BYTES, cap_bytes, compact, summarize
from lintaid.integrations.claude_code.transcript import parse_line
from tests.transcripts import (
    DEFAULT_CWD,
    FAKE_SECRETS,
    FINAL_REQUEST,
    FINAL_RESULT,
    SECRET_LAST_MESSAGE,
    realistic_turns,
    text,
    thinking,
    tool_result,
    tool_use,
    write_secret_transcript,
    write_transcript,
)


def read_messages(path: Path, **kw: int) -> list[transcript.Message]:
    """Claude Code's transcripts through the generic tail reader."""
    return transcript.read_messages(path, parse_line, **kw)


def test_realistic_session(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", realistic_turns())
    messages = read_messages(path)
    roles = [m.role for m in messages]
    assert "system" not in roles and "progress" not in roles
    texts = [m.text for m in messages]
    assert not any("Caveat" in t for t in texts)  # isMeta skipped
    thoughts = ("The user asks about timeouts", "Plan:", "All good, summarise")
    assert not any(thought in t for thought in thoughts for t in texts)  # no thinking
    assert not any("42 passed" in t for t in texts)  # no tool_result text

    # The first assistant answer spans three lines sharing message.id: merged into one.
    first = next(m for m in messages if m.role == "assistant")
    assert first.text == "Let me look at the retry code."
    assert first.tools == ["Read"]
    assert first.paths == [f"{DEFAULT_CWD}/gateway/retry.py"]
    assert first.timestamp and first.timestamp.startswith("2026-")

    ex = summarize(messages, None)
    assert ex.request == FINAL_REQUEST
    # the result's lines are kept (its list items are statements of their own), blank runs
    # cut to one, trailing spaces off
    assert ex.result == FINAL_RESULT.strip()
    assert "\n- `gateway/retry.py`" in ex.result
    assert ex.tools == ["Edit", "Write", "Bash"]
    assert ex.paths == [f"{DEFAULT_CWD}/gateway/retry.py", f"{DEFAULT_CWD}/tests/test_retry.py"]


def test_last_assistant_message_wins(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", realistic_turns())
    ex = summarize(read_messages(path), "The final word.\n\n  Second line.  ")
    assert ex.result == "The final word.\n\n  Second line."
    assert ex.request == FINAL_REQUEST


def test_request_skips_wrappers_and_notifications(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", [
        ("user", "Real question about caching"),
        ("assistant", "Answer about caching."),
        ("user", "<command-name>/compact</command-name>"),
        ("user", "<local-command-stdout>Compacted</local-command-stdout>"),
        ("user", "<task-notification>done</task-notification>"),
        ("user", [tool_result("output")]),
    ])
    ex = summarize(read_messages(path), None)
    assert ex.request == "Real question about caching"
    assert ex.result == "Answer about caching."


def test_result_only_after_the_request(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", [
        ("user", "first"),
        ("assistant", "first answer"),
        ("user", "second, interrupted"),
    ])
    ex = summarize(read_messages(path), None)
    assert ex.request == "second, interrupted"
    assert ex.result == ""


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    assert read_messages(tmp_path / "nope.jsonl") == []
    assert read_messages(tmp_path) == []  # a directory
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert read_messages(empty) == []
    ex = summarize([], None)
    assert (ex.request, ex.result, ex.tools, ex.paths) == ("", "", [], [])


def test_garbage_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_transcript(path, [("user", "question one")])
    with path.open("a") as handle:
        handle.write("not json at all\n")
        handle.write('{"type": "user", "message": "a string, not an object"}\n')
        handle.write('["user", "assistant"]\n')
        handle.write('{"type": "assistant", "message": {"role": "assistant", "content": 7}}\n')
    write_transcript(path, [("assistant", "answer one")], append=True)
    with path.open("a") as handle:
        handle.write('{"type": "assistant", "message": {"role": "assistant", "content": [{"ty')
    messages = read_messages(path)
    assert [(m.role, m.text) for m in messages] == [("user", "question one"),
                                                    ("assistant", "answer one")]


def test_tool_paths_from_all_path_keys(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", [
        ("user", "do it"),
        ("assistant", [
            tool_use("Grep", {"pattern": "x", "path": "/p/src"}),
            tool_use("NotebookEdit", {"notebook_path": "/p/nb.ipynb", "new_source": ""}),
            tool_use("Bash", {"command": "cat /p/secret.txt"}),
            tool_use("Edit", {"file_path": "/p/src/a.py"}),
            tool_use("Edit", {"file_path": "/p/src/a.py"}),
        ]),
        ("assistant", "done"),
    ])
    ex = summarize(read_messages(path), None)
    assert ex.paths == ["/p/src", "/p/nb.ipynb", "/p/src/a.py"]
    assert ex.tools == ["Grep", "NotebookEdit", "Bash", "Edit"]


def test_compact_and_cap_on_char_boundary() -> None:
    assert compact("  a  \n\n\n\n   b   c \n\n") == "a\n\n   b   c"
    assert compact("- one\n- two") == "- one\n- two"  # a list stays a list
    text_ = "é" * 2000  # 2 bytes each
    capped = compact(text_)
    assert len(capped.encode()) <= MAX_FIELD_BYTES
    assert capped.endswith("...")
    capped.encode("utf-8")  # still valid
    assert cap_bytes("short", 10) == "short"
    assert cap_bytes("€€€€", 8) == "€..."


def test_fields_are_capped(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", [
        ("user", "word " * 1000),
        ("assistant", "reply " * 1000),
    ])
    ex = summarize(read_messages(path), None)
    assert len(ex.request.encode()) <= MAX_FIELD_BYTES and ex.request.endswith("...")
    assert len(ex.result.encode()) <= MAX_FIELD_BYTES and ex.result.endswith("...")


def test_secrets_never_come_back(tmp_path: Path) -> None:
    path = write_secret_transcript(tmp_path / "s.jsonl")
    messages = read_messages(path)
    ex = summarize(messages, SECRET_LAST_MESSAGE)
    blob = json.dumps([m.__dict__ for m in messages]) + json.dumps(ex.__dict__)
    for secret in FAKE_SECRETS:
        assert secret not in blob, secret
    assert "Please fix the deploy script." in ex.request
    assert "Rotated the keys." in ex.result


def test_giant_final_line_is_read(tmp_path: Path) -> None:
    big = "x" * (96 * 1024)
    path = write_transcript(tmp_path / "t.jsonl", [
        ("user", "summarise the log"),
        ("assistant", [thinking("hmm"), text(big)]),
    ])
    assert path.stat().st_size > 96 * 1024
    messages, seen = parsed_bytes(path)
    assert seen >= path.stat().st_size  # the window grew until it held the whole exchange
    ex = summarize(messages, None)
    assert ex.request == "summarise the log"
    assert ex.result.startswith("xxx") and len(ex.result.encode()) <= MAX_FIELD_BYTES


def test_line_bigger_than_the_window_is_skipped(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", [
        ("user", "old question"),
        ("assistant", "old answer"),
        ("user", "y" * (300 * 1024)),  # bigger than max_bytes below: never whole in the window
        ("assistant", "new answer"),
    ])
    messages = read_messages(path, max_bytes=256 * 1024)
    assert [m.text for m in messages] == ["new answer"]
    # With room for it, the big line parses.
    assert len(read_messages(path)) == 4


def parsed_bytes(path: Path) -> tuple[list[transcript.Message], int]:
    """Read ``path`` and count the bytes of the lines handed to the parser: what was read."""
    seen = 0

    def counting(line: bytes) -> transcript.Message | None:
        nonlocal seen
        seen += len(line) + 1
        return parse_line(line)

    return transcript.read_messages(path, counting), seen


def test_large_file_reads_only_the_tail(tmp_path: Path) -> None:
    filler = [("user", f"question {i} " + "lorem ipsum " * 40) for i in range(9000)]
    turns = [t for q in filler for t in (q, ("assistant", "ok " * 60))]
    path = write_transcript(tmp_path / "big.jsonl", [*turns, ("user", "last question"),
                                                     ("assistant", "last answer")])
    assert path.stat().st_size > 4 * 1024 * 1024
    messages, seen = parsed_bytes(path)
    assert seen <= transcript.INITIAL_TAIL_BYTES + 1  # the first window held the exchange
    assert messages[-1].text == "last answer"
    assert len(messages) < 200  # the 64 KiB tail, not the whole file
    ex = summarize(messages, None)
    assert (ex.request, ex.result) == ("last question", "last answer")


def test_large_file_without_an_exchange_stops_at_max_bytes(tmp_path: Path) -> None:
    path = tmp_path / "noise.jsonl"
    write_transcript(path, [("user", "the only question"), ("assistant", "the only answer")])
    noise = json.dumps({"type": "progress", "data": {"type": "bash_progress",
                                                     "output": "z" * 500}}) + "\n"
    with path.open("a") as handle:
        handle.write(noise * 12000)  # about 6 MiB of entries that are not messages
    assert path.stat().st_size > 5 * 1024 * 1024
    messages, seen = parsed_bytes(path)
    assert messages == []  # the exchange lies beyond the 4 MiB limit
    assert seen <= transcript.MAX_TAIL_BYTES + len(noise)  # and nothing before it was read


def test_a_fifo_or_device_as_transcript_yields_nothing_and_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    assert read_messages(fifo) == []
    assert read_messages("/dev/zero") == []
    assert read_messages(tmp_path) == []  # a folder
