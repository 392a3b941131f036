"""A document as the lint rules see it: title, headings and anchors, links, prose lines.

Built from the workspace index's chunks (their true line numbers; the blank lines between
chunks and a Markdown file's frontmatter come back as empty lines), so a finding names the
line an editor shows. Markdown follows CommonMark where it matters here (fenced code is not
prose; inline code is not a link; ATX and setext headings; GitHub's heading anchors);
reStructuredText is read for section titles, ``.. _label:`` targets, roles (``:doc:``,
``:ref:``), hyperlinks with embedded targets, and the directives that name files.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import unquote

MARKDOWN: Final = "markdown"
RST: Final = "rst"
MARKDOWN_EXTS: Final = frozenset({".md", ".markdown", ".mdx", ".mdown", ".mkd"})
RST_EXTS: Final = frozenset({".rst", ".rest"})
PAGE_EXTS: Final = MARKDOWN_EXTS | RST_EXTS
INDEX_STEMS: Final = frozenset({"readme", "index", "_index"})

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_INLINE_LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
                          r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
_REF_LINK = re.compile(r"(?<![\]!])\[([^\[\]]+)\]\[([^\[\]]*)\]")
_REF_DEF = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*<?(\S+?)>?(?:\s+.*)?$")
_WIKI = re.compile(r"\[\[([^\[\]|#]+)(#[^\[\]|]*)?(?:\|[^\[\]]*)?\]\]")
_HTML_ATTR = re.compile(r"""<(?:a|img|link|source)\b[^>]*?\b(?:href|src)\s*=\s*["']([^"']+)["']""",
                        re.IGNORECASE)
_HTML_ANCHOR = re.compile(r"""<[a-z][^>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
_CUSTOM_ID = re.compile(r"\s*\{#([\w.:-]+)\}\s*$")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_URL = re.compile(r"(?:https?|ftp|file|mailto):[^\s<>()\[\]`]+|www\.[^\s<>()\[\]`]+")

_RST_UNDERLINE = re.compile(r"""^([=\-~^"'`*+#<>:._!$%&,/;?@\\|])\1{2,}\s*$""")
_RST_LABEL = re.compile(r"^\.\.\s+_([^:`]+|`[^`]+`):\s*(\S*)\s*$")
_RST_ROLE = re.compile(r":(doc|ref|download):`([^`]+)`")
_RST_EMBEDDED = re.compile(r"`([^`<]*?)\s*<([^`>]+)>`__?")
_RST_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:-]+)::\s*(.*?)\s*$")
_RST_FILE_DIRECTIVES: Final = frozenset({"include", "literalinclude", "image", "figure",
                                        "csv-table", "raw"})
_RST_CODE_DIRECTIVES: Final = frozenset({"code", "code-block", "sourcecode", "literalinclude",
                                        "math", "raw", "highlight", "parsed-literal"})


@dataclass(frozen=True)
class Link:
    """A link as written: ``target`` (path and ``#fragment`` as given, decoded), its line,
    and how it was written (``markdown``, ``image``, ``reference``, ``wiki``, ``html``,
    ``doc``, ``ref``, ``directive``, ``toctree``, ``rst``)."""

    target: str
    line: int
    style: str
    text: str = ""

    @property
    def external(self) -> bool:
        return bool(_SCHEME.match(self.target)) or self.target.startswith("//")


@dataclass(frozen=True)
class Heading:
    line: int
    level: int
    text: str
    anchor: str


@dataclass
class Page:
    """One document. ``lines[i]`` is line ``i + 1``. ``prose``: (line, text) of the lines the
    prose rules read (no code, inline or fenced; no headings, no ignored section; link
    targets and URLs blanked). ``ignored``: the lines of ignored sections."""

    path: str
    syntax: str
    lines: list[str]
    frontmatter: dict[str, Any] = field(default_factory=dict)
    mtime: float = 0.0
    title: str | None = None
    headings: list[Heading] = field(default_factory=list)
    anchors: set[str] = field(default_factory=set)
    links: list[Link] = field(default_factory=list)
    prose: list[tuple[int, str]] = field(default_factory=list)
    ignored: set[int] = field(default_factory=set)

    @property
    def stem(self) -> str:
        name = self.path.rsplit("/", 1)[-1]
        return name.rsplit(".", 1)[0]

    @property
    def is_index(self) -> bool:
        return self.stem.lower() in INDEX_STEMS

    def section_of(self, line: int) -> str | None:
        """The heading a line sits under (None before the first)."""
        found = None
        for h in self.headings:
            if h.line > line:
                break
            found = h.text
        return found


def syntax_of(path: str) -> str | None:
    name = path.rsplit("/", 1)[-1].lower()
    dot = name.rfind(".")
    ext = name[dot:] if dot > 0 else ""
    return MARKDOWN if ext in MARKDOWN_EXTS else RST if ext in RST_EXTS else None


def assemble(chunks: Iterable[tuple[int, str]]) -> list[str]:
    """A file's lines from its chunks ``(start_line, text)``; lines no chunk covers are
    empty (the blank lines between chunks, a Markdown file's frontmatter)."""
    lines: list[str] = []
    for start, text in sorted(chunks):
        for offset, line in enumerate(text.split("\n")):
            n = start - 1 + offset
            while len(lines) <= n:
                lines.append("")
            lines[n] = line
    return lines


def parse(path: str, lines: list[str], frontmatter: dict[str, Any] | None = None,
          mtime: float = 0.0, ignore_sections: Sequence[str] = ()) -> Page:
    """The page at ``path`` (its syntax told by its extension)."""
    page = Page(path, syntax_of(path) or MARKDOWN, lines, dict(frontmatter or {}), mtime)
    if page.syntax == RST:
        _parse_rst(page)
    else:
        _parse_markdown(page)
    fm_title = page.frontmatter.get("title")
    if isinstance(fm_title, str) and fm_title.strip():
        page.title = fm_title.strip()
    _mark_ignored(page, ignore_sections)
    if page.ignored:
        page.prose = [(n, t) for n, t in page.prose if n not in page.ignored]
        page.links = [link for link in page.links if link.line not in page.ignored]
    return page


# -- anchors ---------------------------------------------------------------------------------
def github_slug(text: str) -> str:
    """The anchor GitHub (and most Markdown renderers) give a heading: lowercase, markup and
    punctuation dropped (``-`` and ``_`` kept), spaces to ``-``."""
    text = _plain(text).strip().lower()
    out = []
    for ch in text:
        if ch in " -_" or ch.isalnum() or unicodedata.category(ch).startswith("M"):
            out.append("-" if ch == " " else ch)
    return "".join(out)


def docutils_slug(text: str) -> str:
    """The id docutils gives a section title: lowercase words of letters and digits joined
    by ``-``."""
    words = re.findall(r"[^\W_]+", unicodedata.normalize("NFKD", _plain(text)).lower())
    return "-".join(words)


def _plain(text: str) -> str:
    """Heading text without Markdown markup: code spans, links, emphasis, HTML tags."""
    text = _CODE_SPAN.sub(lambda m: m.group(2), text)
    text = _INLINE_LINK.sub(lambda m: m.group(2), text)
    text = re.sub(r"<[^>]+>", "", text)
    return re.sub(r"[*_~]{1,3}(?=\S)|(?<=\S)[*_~]{1,3}", "", text)


def _unique(slug: str, seen: dict[str, int]) -> str:
    count = seen.get(slug, 0)
    seen[slug] = count + 1
    return slug if count == 0 else f"{slug}-{count}"


# -- markdown --------------------------------------------------------------------------------
def _blank_code_spans(line: str) -> str:
    """The line with its code spans blanked: code is spelled as the code spells it, and a
    link inside one is no link."""
    if "`" not in line:
        return line
    return _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def _parse_markdown(page: Page) -> None:
    lines = page.lines
    fence: str | None = None
    seen: dict[str, int] = {}
    in_comment = False
    for i, raw in enumerate(lines):
        n = i + 1
        if fence is not None:
            stripped = raw.strip()
            if stripped.startswith(fence) and set(stripped) <= set(fence[0]):
                fence = None
            continue
        opened = _FENCE.match(raw)
        if opened:
            fence = opened.group(1)
            continue
        if in_comment:
            in_comment = "-->" not in raw
            continue
        if raw.lstrip().startswith("<!--"):
            in_comment = "-->" not in raw
            continue
        heading = _heading(lines, i)
        no_code = _blank_code_spans(raw)
        if "<" in no_code:
            page.anchors.update(_HTML_ANCHOR.findall(no_code))
        if heading is not None:
            level, text = heading
            custom = _CUSTOM_ID.search(text)
            if custom:
                text = text[:custom.start()]
            slug = custom.group(1) if custom else _unique(github_slug(text), seen)
            page.headings.append(Heading(n, level, _plain(text).strip(), slug))
            page.anchors.add(slug)
            if page.title is None and level == 1:
                page.title = _plain(text).strip()
            _links_in(page, no_code, n)
            continue
        if _SETEXT.match(raw) and i > 0 and page.headings and page.headings[-1].line == i:
            continue  # the underline of a setext heading
        _links_in(page, no_code, n)
        definition = _REF_DEF.match(no_code)
        prose = no_code if definition is None else ""
        prose = _blank_targets(prose)
        if prose.strip():
            page.prose.append((n, prose))
    if page.title is None and page.headings:
        page.title = min(page.headings, key=lambda h: (h.level, h.line)).text


def _heading(lines: list[str], i: int) -> tuple[int, str] | None:
    """(level, text) when line ``i`` is an ATX heading, or the text of a setext one."""
    line = lines[i]
    if "#" in line[:4]:
        atx = _ATX.match(line)
        if atx:
            return len(atx.group(1)), (atx.group(2) or "").strip()
    following = lines[i + 1].lstrip()[:1] if i + 1 < len(lines) else ""
    if following in ("=", "-") and line.strip() and not line.startswith(("    ", "\t")):
        under = _SETEXT.match(lines[i + 1])
        text = lines[i].strip()
        if under and not _FENCE.match(lines[i]) and not text.startswith(("-", "*", "+", ">", "|")):
            if under.group(1)[0] == "-" and len(under.group(1)) < 2:
                return None
            return (1 if under.group(1)[0] == "=" else 2), text
    return None


def _links_in(page: Page, text: str, n: int) -> None:
    if "[" not in text and "<" not in text:
        return
    for m in _INLINE_LINK.finditer(text):
        target = m.group(3).strip("<>").strip()
        if target:
            page.links.append(Link(unquote(target), n, "image" if m.group(1) else "markdown",
                                   m.group(2)))
    definition = _REF_DEF.match(text)
    if definition and not definition.group(1).startswith("^"):  # not a footnote
        page.links.append(Link(unquote(definition.group(2)), n, "reference",
                               definition.group(1)))
    for m in _WIKI.finditer(text):
        page.links.append(Link(m.group(1).strip() + (m.group(2) or ""), n, "wiki",
                               m.group(1).strip()))
    for target in _HTML_ATTR.findall(text):
        page.links.append(Link(unquote(target), n, "html"))


def _blank_targets(text: str) -> str:
    """Prose without what no one reads as words: link targets, URLs, HTML tags."""
    if "](" not in text and ":" not in text and "<" not in text and "www." not in text:
        return text
    text = _INLINE_LINK.sub(lambda m: m.group(2).ljust(len(m.group(0))), text)
    text = _URL.sub(lambda m: " " * len(m.group(0)), text)
    return re.sub(r"<[^>]+>", lambda m: " " * len(m.group(0)), text)


# -- reStructuredText ------------------------------------------------------------------------
def _parse_rst(page: Page) -> None:
    lines = page.lines
    seen: dict[str, int] = {}
    levels: list[str] = []
    code_indent: int | None = None  # inside a literal block or code directive: its indent
    toctree_indent: int | None = None
    skip = set()
    for i, raw in enumerate(lines):
        n = i + 1
        indent = len(raw) - len(raw.lstrip())
        if code_indent is not None:
            if not raw.strip() or indent > code_indent:
                continue
            code_indent = None
        if toctree_indent is not None:
            if not raw.strip():
                continue
            if indent > toctree_indent:
                entry = raw.strip()
                if not entry.startswith(":"):
                    m = re.match(r"^(?:.*?<(.+)>|(.+))$", entry)
                    target = (m.group(1) or m.group(2) or "").strip() if m else ""
                    if target and target != "self" and not target.startswith("glob"):
                        page.links.append(Link(target, n, "toctree"))
                continue
            toctree_indent = None
        if i in skip:
            continue
        title = _rst_title(lines, i)
        if title is not None:
            text, marker, consumed = title
            if marker not in levels:
                levels.append(marker)
            slug = _unique(docutils_slug(text), seen)
            page.headings.append(Heading(n, levels.index(marker) + 1, text, slug))
            page.anchors.add(slug)
            if page.title is None:
                page.title = text
            skip.update(consumed)
            continue
        label = _RST_LABEL.match(raw)
        if label:
            name = label.group(1).strip("`").strip()
            page.anchors.add(name.lower())
            page.anchors.add(docutils_slug(name))
            if label.group(2):
                page.links.append(Link(label.group(2), n, "rst"))
            continue
        directive = _RST_DIRECTIVE.match(raw)
        if directive:
            name, arg = directive.group(2).lower(), directive.group(3)
            if name in _RST_FILE_DIRECTIVES and arg and name != "raw":
                page.links.append(Link(arg, n, "directive"))
            if name == "toctree":
                toctree_indent = indent
            elif name in _RST_CODE_DIRECTIVES:
                code_indent = indent
            else:
                _rst_links(page, raw, n)
            continue
        if raw.lstrip().startswith(".. "):  # a comment or a target of another kind
            _rst_links(page, raw, n)
            continue
        _rst_links(page, raw, n)
        if raw.rstrip().endswith("::"):
            code_indent = indent
        prose = _RST_ROLE.sub(lambda m: " " * len(m.group(0)), raw)
        prose = _RST_EMBEDDED.sub(lambda m: m.group(1).ljust(len(m.group(0))), prose)
        prose = re.sub(r"``[^`]+``", lambda m: " " * len(m.group(0)), prose)
        prose = _URL.sub(lambda m: " " * len(m.group(0)), prose)
        if prose.strip():
            page.prose.append((n, prose))


def _rst_title(lines: list[str], i: int) -> tuple[str, str, list[int]] | None:
    """(title, adornment style, the adornment lines' indexes) when line ``i`` is a section
    title (underlined, or over- and underlined)."""
    text = lines[i].rstrip()
    if not text.strip() or _RST_UNDERLINE.match(text) or i + 1 >= len(lines):
        return None
    under = _RST_UNDERLINE.match(lines[i + 1])
    if not under or len(lines[i + 1].rstrip()) < len(text.strip()):
        return None
    over = i > 0 and _RST_UNDERLINE.match(lines[i - 1]) is not None \
        and lines[i - 1].strip()[0] == under.group(1)
    marker = ("o" if over else "u") + under.group(1)
    return text.strip(), marker, [i + 1]


def _rst_links(page: Page, text: str, n: int) -> None:
    for role, body in _RST_ROLE.findall(text):
        m = re.match(r"^(.*?)\s*<([^>]+)>$", body)
        target = m.group(2) if m else body
        page.links.append(Link(target.strip(), n, role))
    for label, target in _RST_EMBEDDED.findall(text):
        if not target.endswith("_"):  # `text <name_>`_ names a target, not an address
            page.links.append(Link(unquote(target.strip()), n, "rst", label))


# -- ignored sections ------------------------------------------------------------------------
def _mark_ignored(page: Page, patterns: Sequence[str]) -> None:
    """Lines of sections whose heading matches one of ``patterns`` (case-insensitive globs),
    with their subsections; and lines between ``lintaid-lint: off`` and ``on`` comments."""
    wanted = [p.lower() for p in patterns]
    n_lines = len(page.lines)
    for k, h in enumerate(page.headings):
        if not any(fnmatch.fnmatchcase(h.text.lower(), p) for p in wanted):
            continue
        end = next((o.line for o in page.headings[k + 1:] if o.level <= h.level), n_lines + 1)
        page.ignored.update(range(h.line, end))
    off: int | None = None
    for i, raw in enumerate(page.lines):
        mark = re.search(r"lintaid-lint:\s*(off|on)\b", raw)
        if mark and mark.group(1) == "off":
            off = i + 1
        elif mark and off is not None:
            page.ignored.update(range(off, i + 2))
            off = None
    if off is not None:
        page.ignored.update(range(off, n_lines + 1))


# -- resolving -------------------------------------------------------------------------------
def split_target(target: str) -> tuple[str, str | None]:
    """(path, fragment) of a link target; path "" for a link within the page."""
    path, _, fragment = target.partition("#")
    path = path.split("?", 1)[0]
    return path, (fragment if "#" in target else None)


def resolve(page_path: str, path: str) -> str | None:
    """A link's path relative to the root (posix, normalised); None when it leaves the root.
    A leading ``/`` starts from the root."""
    base = posixpath.dirname(page_path)
    joined = path.lstrip("/") if path.startswith("/") else posixpath.join(base, path)
    norm = posixpath.normpath(joined) if joined else ""
    if norm == ".":
        return ""
    if norm == ".." or norm.startswith("../"):
        return None
    return norm
