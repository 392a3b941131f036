"""Chunking: Markdown by heading with frontmatter apart, code and text in 40-80 line windows."""

from __future__ import annotations

from lintaid.workspace.chunking import MAX_LINES, chunk_file, parse_frontmatter, split_lines


def _lines_of(text: str, start: int, end: int) -> str:
    return "\n".join(split_lines(text)[start - 1:end])


def test_markdown_sections_keep_heading_and_true_line_ranges() -> None:
    text = (
        "---\n"
        "supersedes: decision-a.md\n"
        "tags: [retry, \"gateway\"]\n"
        "owners:\n"
        "  - platform\n"
        "  - sre\n"
        "---\n"
        "Intro paragraph before any heading.\n"
        "\n"
        "# Gateway Retry Policy\n"
        "\n"
        "Gateway timeout retry attempts: 2.\n"
        "\n"
        "## Backoff\n"
        "Exponential, capped at 30s.\n"
        "\n"
        "```python\n"
        "# not a heading inside a fence\n"
        "```\n"
    )
    chunked = chunk_file("docs/decision-b.md", text)
    assert chunked.frontmatter == {
        "supersedes": "decision-a.md", "tags": ["retry", "gateway"], "owners": ["platform", "sre"],
    }
    assert chunked.body_start_line == 8
    assert not chunked.body.startswith("---")
    got = [(c.start_line, c.end_line, c.heading) for c in chunked.chunks]
    assert got == [(8, 8, None), (10, 12, "Gateway Retry Policy"), (14, 19, "Backoff")]
    for chunk in chunked.chunks:
        assert chunk.text == _lines_of(text, chunk.start_line, chunk.end_line)
        assert chunk.path == "docs/decision-b.md"
        assert len(chunk.sha256) == 64
    assert "supersedes" not in "".join(c.text for c in chunked.chunks)
    assert chunked.chunks[1].chunk_id == "docs/decision-b.md:10"


def test_heading_only_section_joins_the_next_and_setext_headings_count() -> None:
    text = "# Project\n## Install\nRun make.\n\nUsage\n-----\nCall it.\n"
    chunks = chunk_file("README.md", text).chunks
    assert [(c.start_line, c.end_line, c.heading) for c in chunks] == [
        (1, 3, "Install"), (5, 7, "Usage"),
    ]


def test_long_markdown_section_is_windowed_under_its_heading() -> None:
    body = "\n\n".join(f"Paragraph {i} line one.\nParagraph {i} line two." for i in range(60))
    text = f"# Long\n\n{body}\n"
    chunks = chunk_file("long.md", text).chunks
    assert len(chunks) > 1
    assert all(c.heading == "Long" for c in chunks)
    assert all(c.end_line - c.start_line + 1 <= MAX_LINES for c in chunks)
    for chunk in chunks:
        assert chunk.text == _lines_of(text, chunk.start_line, chunk.end_line)


def test_python_splits_at_top_level_defs_into_windows() -> None:
    parts = ["import os\n"]
    for i in range(12):
        body = "\n".join(f"    x{j} = {j}" for j in range(10))
        parts.append(f"# helper {i}\n@decorator\ndef f{i}():\n{body}\n")
    text = "\n".join(parts)
    chunks = chunk_file("pkg/mod.py", text).chunks
    assert len(chunks) >= 2
    lines = split_lines(text)
    for chunk in chunks:
        assert chunk.heading is None
        assert chunk.end_line - chunk.start_line + 1 <= MAX_LINES
        assert chunk.text == _lines_of(text, chunk.start_line, chunk.end_line)
    # Every window after the first starts at a def's leading comment, never inside a body.
    for chunk in chunks[1:]:
        assert lines[chunk.start_line - 1].startswith("# helper")
    # Windows cover every non-blank line exactly once.
    covered = [n for c in chunks for n in range(c.start_line, c.end_line + 1)]
    assert len(covered) == len(set(covered))
    assert {n for n, line in enumerate(lines, 1) if line.strip()} <= set(covered)


def test_plain_text_blank_line_blocks_merge_into_windows() -> None:
    text = "\n\n".join("\n".join(f"block {i} line {j}" for j in range(7)) for i in range(30))
    chunks = chunk_file("notes.txt", text).chunks
    sizes = [c.end_line - c.start_line + 1 for c in chunks]
    assert all(40 <= s <= MAX_LINES for s in sizes[:-1]), sizes
    assert chunks[0].start_line == 1 and chunks[-1].end_line == len(split_lines(text))
    for chunk in chunks:
        assert chunk.text.startswith("block ")


def test_oversized_block_is_split() -> None:
    text = "\n".join(f"line {i}" for i in range(200))
    chunks = chunk_file("data.cfg", text).chunks
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 80), (81, 160), (161, 200)]


def test_crlf_empty_and_whitespace_files() -> None:
    chunks = chunk_file("win.txt", "a\r\nb\r\n\r\nc\r\n").chunks
    assert [(c.start_line, c.end_line, c.text) for c in chunks] == [(1, 4, "a\nb\n\nc")]
    assert chunk_file("empty.md", "").chunks == []
    assert chunk_file("blank.txt", "\n \n\t\n").chunks == []


def test_frontmatter_edge_cases() -> None:
    assert parse_frontmatter(["---", "title: x"]) == ({}, 0)  # never closed: not frontmatter
    assert parse_frontmatter(["# Title", "---"]) == ({}, 0)
    fields, start = parse_frontmatter(["---", "supersedes: 'old.md'", "...", "body"])
    assert fields == {"supersedes": "old.md"} and start == 3
