"""Split a project file into searchable chunks with true 1-based line ranges.

Markdown is cut at headings (a hit then names its section) with the frontmatter parsed apart;
Python at top-level ``def``/``class``; other code at top-level blocks; prose at blank lines.
Small blocks are merged into windows of about 40-80 lines so one hit carries enough context,
and no window outgrows ``MAX_LINES``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Final

MIN_LINES: Final = 40
MAX_LINES: Final = 80

MARKDOWN_EXTS: Final = frozenset({".md", ".markdown", ".mdx", ".mdown", ".mkd"})
PYTHON_EXTS: Final = frozenset({".py", ".pyi", ".pyw"})
CODE_EXTS: Final = frozenset({
    ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".go", ".java", ".js", ".jsx", ".mjs", ".cjs",
    ".ts", ".tsx", ".rs", ".rb", ".php", ".swift", ".kt", ".kts", ".scala", ".sh", ".bash",
    ".zsh", ".lua", ".pl", ".r", ".sql", ".toml", ".yaml", ".yml", ".json", ".ini", ".cfg",
    ".proto", ".tf", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".dart", ".vue", ".svelte",
})

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+>]|\d+[.)])(?:\s|$)")
_PY_TOP = re.compile(r"^(?:async[ \t]+def|def|class)\b|^@")
_CLOSER = re.compile(r"^[})\]]|^end\b")
_FM_KEY = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:[ \t]*(.*)$")
_FM_ITEM = re.compile(r"^[ \t]+-[ \t]+(.*)$|^-[ \t]+(.*)$")


@dataclass(frozen=True)
class Chunk:
    path: str
    start_line: int
    end_line: int
    heading: str | None
    text: str
    sha256: str

    @property
    def chunk_id(self) -> str:
        return f"{self.path}:{self.start_line}"


@dataclass
class ChunkedFile:
    path: str
    chunks: list[Chunk]
    frontmatter: dict[str, Any] = field(default_factory=dict)
    body: str = ""  # the text without frontmatter: what claims are extracted from
    body_start_line: int = 1

    @property
    def headings(self) -> list[str]:
        return [c.heading for c in self.chunks if c.heading]


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def decode(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def split_lines(text: str) -> list[str]:
    """Lines as editors number them: only ``\\n`` (with an optional ``\\r``) ends a line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def chunk_file(path: str, text: str) -> ChunkedFile:
    """Chunk ``text`` of the file at relative posix ``path``."""
    lines = split_lines(text)
    ext = _ext(path)
    if ext in MARKDOWN_EXTS:
        frontmatter, body_start = parse_frontmatter(lines)
        spans = _markdown_spans(lines, body_start)
    else:
        frontmatter, body_start = {}, 0
        blocks = _python_blocks(lines) if ext in PYTHON_EXTS else _blocks(
            lines, code=ext in CODE_EXTS)
        spans = [(None, s, e) for s, e in _windows(lines, blocks)]
    chunks = []
    for heading, start, end in spans:
        start, end = _trim(lines, start, end)
        if start > end:
            continue
        body = "\n".join(lines[start:end + 1])
        chunks.append(Chunk(path, start + 1, end + 1, heading, body, sha256_text(body)))
    return ChunkedFile(
        path=path, chunks=chunks, frontmatter=frontmatter,
        body="\n".join(lines[body_start:]), body_start_line=body_start + 1,
    )


def _ext(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    dot = name.rfind(".")
    return name[dot:] if dot > 0 else ""


def _trim(lines: list[str], start: int, end: int) -> tuple[int, int]:
    while start <= end and not lines[start].strip():
        start += 1
    while end >= start and not lines[end].strip():
        end -= 1
    return start, end


# -- frontmatter ----------------------------------------------------------------------------------
def parse_frontmatter(lines: list[str]) -> tuple[dict[str, Any], int]:
    """Parse a leading ``---`` block of ``key: value`` lines; return (fields, body start index).

    A deliberately small YAML subset: scalars (quotes stripped), ``[a, b]`` flow lists and
    ``- item`` block lists. Anything fancier is kept as the raw string.
    """
    if not lines or lines[0].strip() != "---":
        return {}, 0
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return {}, 0
    out: dict[str, Any] = {}
    key: str | None = None
    for raw in lines[1:end]:
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        item = _FM_ITEM.match(raw)
        if item and key is not None:
            value = _unquote(item.group(1) if item.group(1) is not None else item.group(2))
            current = out.get(key)
            out[key] = [*current, value] if isinstance(current, list) else [value]
            continue
        match = _FM_KEY.match(raw)
        if not match:
            continue
        key, value = match.group(1).lower(), match.group(2).strip()
        if value.startswith("[") and value.endswith("]"):
            out[key] = [_unquote(v) for v in value[1:-1].split(",") if v.strip()]
        elif value:
            out[key] = _unquote(value)
        else:
            out[key] = []
    return out, end + 1


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def frontmatter_list(frontmatter: dict[str, Any], key: str) -> list[str]:
    value = frontmatter.get(key)
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v]
    return []


# -- markdown ----------------------------------------------------------------------------------
def _markdown_spans(lines: list[str], start: int) -> list[tuple[str | None, int, int]]:
    """Heading sections; a heading with no text of its own joins the section after it."""
    heads: list[tuple[int, str]] = []  # (first line of the heading, text)
    fence: str | None = None
    for i in range(start, len(lines)):
        line = lines[i]
        marker = _FENCE.match(line)
        if marker:
            if fence is None:
                fence = marker.group(1)[0] * 3
            elif marker.group(1).startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        atx = _ATX.match(line)
        if atx:
            heads.append((i, (atx.group(2) or "").strip()))
        elif (_SETEXT.match(line) and i > start and lines[i - 1].strip()
              and not _ATX.match(lines[i - 1]) and not _FENCE.match(lines[i - 1])
              and not _LIST_ITEM.match(lines[i - 1])):
            heads.append((i - 1, lines[i - 1].strip()))
    sections: list[tuple[str | None, int, int]] = []
    bounds = [(start, None)] + [(i, text) for i, text in heads]
    for n, (first, heading) in enumerate(bounds):
        last = (bounds[n + 1][0] if n + 1 < len(bounds) else len(lines)) - 1
        if last >= first:
            sections.append((heading or None, first, last))
    merged: list[tuple[str | None, int, int]] = []
    carry: int | None = None
    for heading, first, last in sections:
        first = carry if carry is not None else first
        if heading is not None and not _has_content_after_heading(lines, first, last):
            carry = first
            continue
        carry = None
        merged.append((heading, first, last))
    if carry is not None:
        merged.append((sections[-1][0], carry, len(lines) - 1))
    out: list[tuple[str | None, int, int]] = []
    for heading, first, last in merged:
        if last - first + 1 <= MAX_LINES:
            out.append((heading, first, last))
        else:
            blocks = _blocks_in(lines, first, last, code=False)
            out.extend((heading, s, e) for s, e in _windows(lines, blocks))
    return out


def _has_content_after_heading(lines: list[str], first: int, last: int) -> bool:
    """True when a section holds more than heading lines (and setext underlines)."""
    for i in range(first, last + 1):
        line = lines[i]
        if not line.strip() or _ATX.match(line) or _SETEXT.match(line):
            continue
        if i + 1 <= last and _SETEXT.match(lines[i + 1]):
            continue
        return True
    return False


# -- code and text -------------------------------------------------------------------------------
def _python_blocks(lines: list[str]) -> list[tuple[int, int]]:
    """Top-level def/class blocks; decorators and comments just above belong to the def."""
    starts = [0]
    for i, line in enumerate(lines):
        if i == 0 or not _PY_TOP.match(line):
            continue
        if lines[i - 1].startswith("@"):
            continue  # a decorator above already opened this block
        j = i
        while j > 0 and lines[j - 1].startswith("#"):
            j -= 1
        if j > starts[-1]:
            starts.append(j)
    return _to_blocks(starts, len(lines))


def _blocks(lines: list[str], *, code: bool) -> list[tuple[int, int]]:
    return _blocks_in(lines, 0, len(lines) - 1, code=code)


def _blocks_in(lines: list[str], first: int, last: int, *, code: bool) -> list[tuple[int, int]]:
    """Blank-line separated blocks; for code only a new top-level (column 0) line starts one."""
    starts = [first]
    for i in range(first + 1, last + 1):
        line = lines[i]
        if not line.strip() or lines[i - 1].strip():
            continue
        if code and (line[0].isspace() or _CLOSER.match(line)):
            continue
        starts.append(i)
    rel = _to_blocks([s - first for s in starts], last - first + 1)
    return [(s + first, e + first) for s, e in rel]


def _to_blocks(starts: list[int], n: int) -> list[tuple[int, int]]:
    bounds = sorted(set(starts))
    return [(s, (bounds[k + 1] if k + 1 < len(bounds) else n) - 1)
            for k, s in enumerate(bounds) if s < n]


def _windows(lines: list[str], blocks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge consecutive blocks into windows of at most MAX_LINES; split oversized blocks."""
    out: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for start, end in blocks:
        if end - start + 1 > MAX_LINES:
            if cur is not None:
                out.append(cur)
                cur = None
            pieces = _split_long(lines, start, end)
            out.extend(pieces[:-1])
            cur = pieces[-1]
            continue
        if cur is not None and end - cur[0] + 1 > MAX_LINES:
            out.append(cur)
            cur = None
        cur = (start, end) if cur is None else (cur[0], end)
    if cur is not None:
        out.append(cur)
    return out


def _split_long(lines: list[str], start: int, end: int) -> list[tuple[int, int]]:
    """Cut a long block into pieces, preferring a blank line in the back half of each piece."""
    pieces = []
    while end - start + 1 > MAX_LINES:
        cut = start + MAX_LINES - 1
        for i in range(cut, start + MIN_LINES - 1, -1):
            if not lines[i].strip():
                cut = i
                break
        pieces.append((start, cut))
        start = cut + 1
    pieces.append((start, end))
    return pieces
