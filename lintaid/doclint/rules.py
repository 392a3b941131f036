"""The rules, as pure functions of the pages, the policy's facts and the settings.

Each rule returns ``Finding``s; ``run`` runs the enabled ones over the pages linted (every
page, or those ``include``/``exclude`` leave), while links *from* every page count (a page
linked only from an excluded one is no orphan).
"""

from __future__ import annotations

import difflib
import fnmatch
import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Final

from lintaid.policy.relations import HIDE
from lintaid.workspace.documents import link_candidates

from . import catalog as c
from .config import LintConfig
from .pages import RST, Link, Page, resolve, split_target

Exists = Callable[[str], bool]
"""Whether a path relative to the root is a file or folder of the project."""


@dataclass
class Finding:
    rule: str
    level: str
    path: str
    line: int
    message: str
    fix: str
    related: list[dict[str, Any]] = field(default_factory=list)  # {path?, line?, message}
    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "level": self.level, "path": self.path, "line": self.line,
                "message": self.message, "fix": self.fix, "related": self.related,
                **({"data": self.data} if self.data else {})}


# -- what the policy knows (filled by ``facts``) ---------------------------------------------
@dataclass(frozen=True)
class Replacement:
    """The statement that replaced one, with where it comes from: a document (``path``,
    ``line``) or a memory (``record_id``, ``created_at``, ``source``, ``session_id``,
    ``client``)."""

    value: str
    evidence: str
    store: str  # "workspace" | "memory"
    path: str | None = None
    line: int | None = None
    record_id: str | None = None
    created_at: float | None = None
    source: str | None = None
    session_id: str | None = None
    client: str | None = None
    method: str | None = None
    confidence: float | None = None

    def where(self) -> str:
        if self.store == "workspace":
            return f"{self.path}:{self.line}" if self.line else str(self.path)
        bits = [f"memory {self.record_id}"]
        if self.client:
            bits.append(f"from {self.client}")
        if self.session_id:
            bits.append(f"session {self.session_id}")
        if self.created_at is not None:
            bits.append(_date(self.created_at))
        return ", ".join(bits)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class Retired:
    """A document's statement the policy holds as superseded, and by what."""

    path: str
    line: int
    subject: str
    value: str
    evidence: str
    by: Replacement


@dataclass
class Facts:
    retired: list[Retired] = field(default_factory=list)
    superseded_files: dict[str, Replacement] = field(default_factory=dict)


def _date(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%d")


# -- running ---------------------------------------------------------------------------------
def matches(path: str, patterns: Iterable[str]) -> bool:
    """Whether ``path`` matches a glob (``**`` any folders; a pattern without ``/`` matches
    the file name anywhere... and also the path from the root)."""
    for pattern in patterns:
        if fnmatch.fnmatchcase(path, pattern) or ("/" not in pattern and fnmatch.fnmatchcase(
                path.rsplit("/", 1)[-1], pattern)):
            return True
        if pattern.startswith("**/") and fnmatch.fnmatchcase(path, pattern[3:]):
            return True
    return False


def linted(pages: Mapping[str, Page], config: LintConfig) -> list[Page]:
    return [p for path, p in sorted(pages.items())
            if (not config.include or matches(path, config.include))
            and not matches(path, config.exclude)]


def run(pages: Mapping[str, Page], config: LintConfig, exists: Exists,
        facts: Facts | None = None) -> list[Finding]:
    """Every enabled rule over the pages ``config`` lints, sorted by path, line, rule."""
    targets = linted(pages, config)
    graph = LinkGraph(pages, exists)
    found: list[Finding] = []
    on = config.enabled
    if c.BROKEN_LINK in on or c.BROKEN_ANCHOR in on:
        found += broken_links(targets, graph, config)
    if c.ORPHAN in on:
        found += orphans(targets, graph, config)
    if c.MISSING_XREF in on:
        found += missing_xrefs(pages, targets, graph, config)
    if c.TERMINOLOGY in on:
        found += terminology(targets, config)
    facts = facts or Facts()
    if c.SUPERSEDED in on:
        found += superseded_statements(targets, facts, config, explicitly_superseded(pages))
    if c.ADR_STATUS in on:
        found += adr_status(pages, targets, graph, facts, config)
    found = [f for f in found if f.rule in on]
    for f in found:
        f.level = config.level(f.rule)
    found.sort(key=lambda f: (f.path, f.line, f.rule, f.message))
    return found


# -- links -----------------------------------------------------------------------------------
@dataclass
class LinkGraph:
    """Where each page's links lead: resolved targets and the pages among them."""

    pages: Mapping[str, Page]
    exists: Exists
    by_stem: dict[str, str] = field(default_factory=dict)
    by_title: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # reST label -> page
    outgoing: dict[str, set[str]] = field(default_factory=dict)
    incoming: dict[str, set[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for path, page in sorted(self.pages.items()):
            self.by_stem.setdefault(page.stem.lower(), path)
            if page.title:
                self.by_title.setdefault(page.title.lower(), path)
            if page.syntax == RST:
                for anchor in page.anchors:
                    self.labels.setdefault(anchor.lower(), path)
        for path, page in self.pages.items():
            out = self.outgoing.setdefault(path, set())
            for link in page.links:
                target = self.page_of(page, link)
                if target and target != path:
                    out.add(target)
                    self.incoming.setdefault(target, set()).add(path)

    def page_of(self, page: Page, link: Link) -> str | None:
        """The page a link leads to, if it leads to one."""
        if link.external:
            return None
        if link.style == "wiki":
            name = split_target(link.target)[0].strip().lower()
            return self.by_stem.get(name) or self.by_title.get(name) or self.by_stem.get(
                posixpath.basename(name).rsplit(".", 1)[0])
        if link.style == "ref":
            return self.labels.get(_ref_label(link.target))
        path, _ = split_target(link.target)
        if not path:
            return None
        return self.find(page, path, doc=link.style in ("doc", "toctree"))

    def find(self, page: Page, path: str, doc: bool = False) -> str | None:
        """The page at a link's path: itself, its folder's README or index, or (as Sphinx
        and many site generators write links) the path with a page extension added."""
        for base in self._bases(page, path, doc):
            if base is None:
                continue
            for candidate in (base, f"{base}.md", f"{base}.rst", f"{base}/README.md",
                              f"{base}/index.md", f"{base}/index.rst", f"{base}/README.rst"):
                if candidate in self.pages:
                    return candidate
        return None

    def _bases(self, page: Page, path: str, doc: bool) -> list[str | None]:
        path = path.rstrip("/")
        if not (doc and path.startswith("/")):
            return [resolve(page.path, path)]
        # Sphinx: "/x" is from the documentation's source folder, some folder above the page
        folder, out = posixpath.dirname(page.path), list[str | None]()
        while True:
            out.append(posixpath.normpath(posixpath.join(folder, path.lstrip("/"))))
            if not folder:
                return out
            folder = posixpath.dirname(folder)

    def target_exists(self, page: Page, path: str, doc: bool = False) -> bool:
        if self.find(page, path, doc) is not None:
            return True
        for base in self._bases(page, path, doc):
            if base is not None and self.exists(base):
                return True
        return False


def _ref_label(target: str) -> str:
    m = re.match(r"^(.*?)\s*<([^>]+)>$", target)
    return (m.group(2) if m else target).strip().lower()


def _anchor_ok(page: Page, fragment: str) -> bool:
    if not fragment:
        return True
    anchors = {a.lower() for a in page.anchors}
    return fragment.lower() in anchors or fragment.lower().lstrip("-") in anchors


def broken_links(targets: Sequence[Page], graph: LinkGraph,
                 config: LintConfig) -> list[Finding]:
    out: list[Finding] = []
    for page in targets:
        for link in page.links:
            if link.external or matches(link.target, config.allow_links):
                continue
            if link.style == "ref":
                if graph.page_of(page, link) is None:
                    out.append(Finding(c.BROKEN_ANCHOR, "", page.path, link.line,
                                       f"reference label '{_ref_label(link.target)}' is "
                                       "defined nowhere", "Define the label (.. _name:) or "
                                       "refer to one that exists."))
                continue
            if link.style == "wiki":
                if graph.page_of(page, link) is None:
                    out.append(_missing(page, link, link.target, graph))
                continue
            path, fragment = split_target(link.target)
            if not path:  # within the page
                if fragment and not _anchor_ok(page, fragment):
                    out.append(_bad_anchor(page, link, page, fragment))
                continue
            doc = link.style in ("doc", "toctree")
            if not (doc and path.startswith("/")):  # Sphinx's "/x": see LinkGraph._bases
                resolved = resolve(page.path, path)
                if resolved is None:
                    out.append(Finding(c.BROKEN_LINK, "", page.path, link.line,
                                       f"link to '{link.target}' leads outside the project",
                                       "Link to a file inside the project, or use its URL."))
                    continue
                if matches(resolved, config.allow_links):
                    continue
            if not graph.target_exists(page, path, doc):
                out.append(_missing(page, link, path, graph))
                continue
            target = graph.find(page, path, doc)
            if fragment and target is not None and not re.fullmatch(r"L\d+(-L?\d+)?", fragment):
                if not _anchor_ok(graph.pages[target], fragment):
                    out.append(_bad_anchor(page, link, graph.pages[target], fragment))
    return out


def _missing(page: Page, link: Link, path: str, graph: LinkGraph) -> Finding:
    name = posixpath.basename(path.rstrip("/")).rsplit(".", 1)[0].lower()
    near = graph.by_stem.get(name)
    fix = (f"Point the link at {near}" if near and near != page.path
           else "Fix the path, or remove the link if the file is gone.")
    return Finding(c.BROKEN_LINK, "", page.path, link.line,
                   f"link to '{link.target}': no such file in the project", fix,
                   data={"target": link.target})


def _bad_anchor(page: Page, link: Link, target: Page, fragment: str) -> Finding:
    near = _closest(fragment.lower(), sorted(target.anchors))
    where = "this page" if target.path == page.path else target.path
    fix = f"Use #{near}" if near else f"Link to a heading that exists in {where}."
    return Finding(c.BROKEN_ANCHOR, "", page.path, link.line,
                   f"link to '{link.target}': {where} has no heading or anchor "
                   f"'#{fragment}'", fix, data={"target": link.target})


def _closest(word: str, options: Sequence[str]) -> str | None:
    found = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return found[0] if found else None


# -- orphans ---------------------------------------------------------------------------------
def orphans(targets: Sequence[Page], graph: LinkGraph, config: LintConfig) -> list[Finding]:
    out = []
    for page in targets:
        if page.is_index or matches(page.path, config.allow_orphans):
            continue
        if graph.incoming.get(page.path):
            continue
        folder = posixpath.dirname(page.path)
        index = next((p for p in (f"{folder}/README.md" if folder else "README.md",
                                  f"{folder}/index.md" if folder else "index.md")
                      if p in graph.pages and p != page.path), None)
        fix = (f"Link to it from {index}" if index else "Link to it from a page that "
               "readers reach (an index or README)") + \
            ", or allow it in [tool.lintaid.lint.allow] orphans."
        out.append(Finding(c.ORPHAN, "", page.path, 1,
                           f"no page links to {page.path}"
                           + (f" ('{page.title}')" if page.title else ""), fix))
    return out


# -- missing cross-references ----------------------------------------------------------------
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def concepts(pages: Mapping[str, Page], config: LintConfig) -> dict[tuple[str, ...], str]:
    """Each page's title (and frontmatter ``aliases``) as words, mapped to the page; a title
    two pages share names neither."""
    allowed = {tuple(_words(t)) for t in config.allow_xref}
    owners: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for path, page in pages.items():
        names = [page.title] if page.title else []
        aliases = page.frontmatter.get("aliases")
        names += [aliases] if isinstance(aliases, str) else \
            [a for a in aliases if isinstance(a, str)] if isinstance(aliases, list) else []
        for name in names:
            words = tuple(_words(name or ""))
            if len(words) >= config.min_title_words and words not in allowed \
                    and any(len(w) > 2 for w in words):
                owners[words].add(path)
    return {words: next(iter(paths)) for words, paths in owners.items() if len(paths) == 1}


def missing_xrefs(pages: Mapping[str, Page], targets: Sequence[Page], graph: LinkGraph,
                  config: LintConfig) -> list[Finding]:
    names = concepts(pages, config)
    by_first: dict[str, list[tuple[tuple[str, ...], str]]] = defaultdict(list)
    for words, path in names.items():
        by_first[words[0]].append((words, path))
    for options in by_first.values():
        options.sort(key=lambda o: -len(o[0]))  # the longest name first
    out = []
    for page in targets:
        linked = graph.outgoing.get(page.path, set())
        seen: set[str] = set()
        for line, text in page.prose:
            said = _words(text)
            for k, word in enumerate(said):
                for name, path in by_first.get(word, ()):
                    if path == page.path or path in linked or path in seen:
                        continue
                    if tuple(said[k:k + len(name)]) == name:
                        seen.add(path)
                        title = pages[path].title or path
                        rel = posixpath.relpath(path, posixpath.dirname(page.path) or ".")
                        out.append(Finding(
                            c.MISSING_XREF, "", page.path, line,
                            f"mentions '{title}' ({path}) without linking it",
                            f"Link the first mention: [{title}]({rel})",
                            related=[{"path": path, "line": 1, "message": f"'{title}'"}]))
                        break
    return out


# -- terminology -----------------------------------------------------------------------------
# A word or compound, not part of a path, an option, an address or a call: those are
# spelled as the code spells them.
_TOKEN = re.compile(r"(?<![./\\@$%=#:\w-])[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*"
                    r"(?![/\\@=(\w-])(?!\.\w)")
_COMPOUND = re.compile(r"[_-]|[a-z][A-Z]")
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
SNAKE, KEBAB, CAMEL, JOINED, SPACED = "snake", "kebab", "camel", "joined", "spaced"


def _parts(token: str) -> tuple[list[str], str] | None:
    """The words of a compound token and how they are joined; None for a plain word."""
    if "_" in token or "-" in token:
        parts = re.split(r"[_-]", token)
        style = SNAKE if "_" in token and "-" not in token else KEBAB if "_" not in token \
            else ""
        if not style:
            return None
    elif re.search(r"[a-z][A-Z]", token):
        parts, style = list(_CAMEL.findall(token)), CAMEL
    else:
        return None
    if len(parts) < 2 or not all(len(p) >= 2 and p.isalpha() for p in parts):
        return None
    return [p.lower() for p in parts], style


def _tokens(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(text)]


def terminology(targets: Sequence[Page], config: LintConfig) -> list[Finding]:
    allowed = {re.sub(r"[\s_-]", "", t.lower()) for t in config.allow_terms}
    keys: set[str] = set()
    lines: list[tuple[str, int, str, list[tuple[int, int, str]]]] = []
    for page in targets:  # compounds first: only their words are looked for as words
        for line, text in page.prose:
            tokens = _tokens(text)
            lines.append((page.path, line, text, tokens))
            for _s, _e, token in tokens:
                if _COMPOUND.search(token):
                    parts = _parts(token)
                    if parts:
                        keys.add("".join(parts[0]))
    keys -= allowed
    if not keys:
        return []
    uses: dict[str, Counter[str]] = defaultdict(Counter)
    styles: dict[tuple[str, str], str] = {}
    first: dict[tuple[str, str, str], int] = {}  # (key, form, path) -> line
    pages_of: dict[tuple[str, str], set[str]] = defaultdict(set)

    def note(key: str, form: str, style: str, path: str, line: int) -> None:
        uses[key][form] += 1
        styles[(key, form)] = style
        first.setdefault((key, form, path), line)
        pages_of[(key, form)].add(path)

    for path, line, text, tokens in lines:
        previous: tuple[int, str] | None = None
        for start, end, token in tokens:
            parts = _parts(token) if _COMPOUND.search(token) else None
            if parts:
                key = "".join(parts[0])
                if key in keys:
                    note(key, token, JOINED if parts[1] == CAMEL else parts[1], path, line)
                previous = None
                continue
            word = token.lower()
            if word in keys:
                note(word, token, JOINED, path, line)
            if previous is not None and text[previous[0]:start] == " ":
                pair = previous[1].lower() + word
                if pair in keys:
                    note(pair, f"{previous[1]} {token}", SPACED, path, line)
            previous = (end, token) if token.isalpha() else None
    out = []
    for key, spelled in uses.items():
        # A spelling is how the words are joined; case is no spelling ("OpenClaw" and
        # "openclaw" are one, a product and its command).
        by_style: dict[str, Counter[str]] = defaultdict(Counter)
        for form, n in spelled.items():
            by_style[styles[(key, form)]][form] += n
        if len(by_style) < 2 or set(by_style) <= {KEBAB, SPACED}:
            continue  # one spelling, or only English hyphenation ("well-known", "well known")
        ranked = sorted(((style, sum(forms.values()), forms.most_common(1)[0][0])
                         for style, forms in by_style.items()), key=lambda s: (-s[1], s[0]))
        _style, best_count, best = ranked[0]
        listed = ", ".join(f"'{shown}' ({n})" for _s, n, shown in ranked)
        for style, _n, _shown in ranked[1:]:
            for form in sorted(by_style[style]):
                for path in sorted(pages_of[(key, form)]):
                    out.append(Finding(
                        c.TERMINOLOGY, "", path, first[(key, form, path)],
                        f"'{form}' spells a concept written '{best}' {best_count} time"
                        f"{'s' if best_count != 1 else ''} across the documents (spellings: "
                        f"{listed})", f"Write '{best}' (or allow the term in "
                        "[tool.lintaid.lint.allow] terms)",
                        data={"concept": key, "spellings": {shown: n
                                                            for _s, n, shown in ranked}}))
    return out


# -- what the memory knows -------------------------------------------------------------------
_STATUS_LINE = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*|__)?status(?:\*\*|__)?\s*:\s*(?:\*\*|__)?"
                          r"\s*(.+?)\s*$", re.IGNORECASE)
STANDING: Final = frozenset({"accepted", "approved", "active", "adopted", "decided", "current",
                             "agreed", "done", "implemented", "final"})
_HISTORICAL = re.compile(r"supersed|deprecat|replaced|obsolete|rejected|withdrawn|retired",
                         re.IGNORECASE)


def adr_status_line(page: Page) -> tuple[str, int] | None:
    """A decision record's status and the line that states it: frontmatter ``status:``, a
    ``Status: ...`` line, or the first line under a "Status" heading."""
    status = page.frontmatter.get("status")
    if isinstance(status, str) and status.strip():
        return status.strip(), 1  # the frontmatter block (the index keeps its fields only)
    for h in page.headings:
        if h.text.strip().lower() == "status":
            for n in range(h.line + 1, min(len(page.lines), h.line + 8) + 1):
                text = page.lines[n - 1].strip()
                if set(text) <= set("=-~^") and text:
                    continue
                if text:
                    return text.strip("*_ "), n
    for n, text in enumerate(page.lines, 1):
        m = _STATUS_LINE.match(text)
        if m:
            return m.group(1).strip("*_ "), n
    return None


def is_decision_record(page: Page, config: LintConfig) -> bool:
    return matches(page.path, config.adr_paths) or bool(
        re.match(r"^(?:adr|ADR)[-_ ]?\d+", page.stem))


def _standing(status: str) -> bool:
    first = _words(status)[:1]
    return bool(first) and first[0] in STANDING and not _HISTORICAL.search(status)


def explicitly_superseded(pages: Mapping[str, Page]) -> set[str]:
    """Pages a later page retires by its frontmatter ``supersedes:`` (resolved as the
    workspace resolves it: beside the file first, then from the root)."""
    out = set()
    for path, page in pages.items():
        for candidate in link_candidates(path, page.frontmatter):
            if candidate in pages:
                out.add(candidate)
                break
    return out


def superseded_statements(targets: Sequence[Page], facts: Facts, config: LintConfig,
                          historical: Collection[str] = ()) -> list[Finding]:
    """Statements the policy retired, in pages that are not history themselves: a page a
    later one explicitly supersedes is kept as the record of what was, and a decision
    record is the ADR rule's to speak for."""
    lintable = {p.path: p for p in targets}
    out = []
    for r in facts.retired:
        page = lintable.get(r.path)
        if page is None or r.line in page.ignored or r.path in historical \
                or is_decision_record(page, config):
            continue
        by = r.by
        certain = by.confidence is None or by.confidence >= HIDE
        out.append(Finding(
            c.SUPERSEDED, "", r.path, r.line,
            f"states {r.subject} is '{r.value}' (\"{_clip(r.evidence)}\"), which "
            f"{'was' if certain else 'was likely'} superseded: now '{by.value or '?'}' per "
            f"{by.where()} (\"{_clip(by.evidence)}\")",
            f"Replace '{r.value}' with '{by.value}'" if by.value else
            "Bring the statement in line with the current one, or mark it as history",
            related=[_related(by)],
            data={"subject": r.subject, "value": r.value, "replaced_by": by.as_dict()}))
    return out


def adr_status(pages: Mapping[str, Page], targets: Sequence[Page], graph: LinkGraph,
               facts: Facts, config: LintConfig) -> list[Finding]:
    retired_in: dict[str, list[Retired]] = defaultdict(list)
    for r in facts.retired:
        retired_in[r.path].append(r)
    out = []
    for page in targets:
        if not is_decision_record(page, config):
            continue
        found = adr_status_line(page)
        if found is None or not _standing(found[0]):
            continue
        status, line = found
        reason, related, data = _replaced(page, pages, graph, facts, retired_in[page.path])
        if reason is None:
            continue
        out.append(Finding(
            c.ADR_STATUS, "", page.path, line,
            f"status reads '{status}' but {reason}",
            f"Set the status to 'Superseded by {related[0].get('path') or 'the newer decision'}'"
            if related and related[0].get("path") else
            "Set the status to 'Superseded' (naming what replaced it)",
            related=related, data=data))
    return out


def _replaced(page: Page, pages: Mapping[str, Page], graph: LinkGraph, facts: Facts,
              retired: list[Retired]) -> tuple[str | None, list[dict[str, Any]],
                                                dict[str, Any]]:
    whole = facts.superseded_files.get(page.path)
    if whole is not None:
        return (f"{whole.where()} supersedes the whole record", [_related(whole)],
                {"replaced_by": whole.as_dict()})
    if retired:
        first = retired[0]
        return (f"its decision '{first.subject}: {first.value}' was superseded by "
                f"'{first.by.value}' per {first.by.where()}",
                [_related(r.by) for r in retired[:5]],
                {"retired": [{"line": r.line, "subject": r.subject, "value": r.value,
                              "replaced_by": r.by.as_dict()} for r in retired]})
    # A later page that says, next to a link to this record, that it supersedes it.
    for source in sorted(graph.incoming.get(page.path, ())):
        other = pages[source]
        for link in other.links:
            if graph.page_of(other, link) != page.path:
                continue
            text = other.lines[link.line - 1] if link.line <= len(other.lines) else ""
            if re.search(r"\b(supersedes|replaces|supersede|overrides)\b", text, re.I) and \
                    other.mtime >= page.mtime:
                return (f"{source}:{link.line} says it supersedes it",
                        [{"path": source, "line": link.line, "message": _clip(text.strip())}],
                        {"superseded_by": source})
    return None, [], {}


def _related(by: Replacement) -> dict[str, Any]:
    out: dict[str, Any] = {"message": f"now: {_clip(by.evidence)} ({by.where()})"}
    if by.path:
        out["path"] = by.path
        if by.line:
            out["line"] = by.line
    return out


def _clip(text: str, width: int = 120) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[:width - 3] + "..."
