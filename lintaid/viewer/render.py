"""The templates (package data, autoescaped) and the helpers they use.

Everything a page shows is escaped unless a helper here builds it from escaped pieces
(``highlight``, ``annotate``): a captured turn may hold any HTML, and it is shown as text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from lintaid_client import models
from lintaid_client.models import Claim, Hit

from ..capture.record import REQUEST, RESULT, TURN, sections
from ..policy.sentences import split_sentences

STATUS_TEXT = {
    models.CURRENT: "current",
    models.PARTLY_SUPERSEDED: "partly superseded",
    models.CONFLICTED: "conflicted",
    models.SUPERSEDED: "superseded",
    models.EXPIRED: "expired",
    models.FORGOTTEN: "forgotten",
}
REVISION_TEXT = {
    "exact-match": "the current revision",
    "captured-revision-is-ancestor": "an ancestor of the current revision",
    "diverged": "not an ancestor of the current revision (another branch, or rewritten)",
    "unknown": "unknown relation to the current revision",
}


def when(epoch: float | None) -> str:
    """A time as people read it, in UTC (the time filters read UTC too)."""
    if epoch is None:
        return "—"
    try:
        return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return "—"


def short(value: str | None, keep: int = 12) -> str:
    if not value:
        return "—"
    return value if len(value) <= keep else value[:keep] + "…"


def summary(text: str | None, chars: int = 160) -> str:
    """The first line that says something, cut to ``chars``."""
    for line in (text or "").splitlines():
        line = " ".join(line.split())
        if line and line != "---":
            return line if len(line) <= chars else line[: chars - 1] + "…"
    return ""


def headline(hit: Hit) -> tuple[str, str | None]:
    """How the timeline titles a record: a captured turn by its request, beside what was
    decided (the result's first statement that says more than an acknowledgement such as
    "Done."); anything else by its first line."""
    if hit.doc_type != TURN:
        return summary(hit.content), None
    parts = sections(hit.content)
    request = summary(parts.get(REQUEST)) or summary(hit.content)
    said = [" ".join(s.text.split()) for s in split_sentences(parts.get(RESULT, ""))]
    said = [s for s in said if s.strip("-*• ")]
    first = next((s for s in said if len(s.split()) >= 3), said[0] if said else None)
    return request, summary(first) if first else None


def highlight(text: str, stems: Sequence[str]) -> Markup:
    """``text`` escaped, with every word that starts with one of ``stems`` in ``<mark>``."""
    if not stems:
        return escape(text)
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(s) for s in stems) + r")\w*",
                         re.IGNORECASE)
    out: list[str] = []
    at = 0
    for match in pattern.finditer(text):
        out.append(escape(text[at:match.start()]))
        out.append(Markup("<mark>%s</mark>") % match.group())
        at = match.end()
    out.append(escape(text[at:]))
    return Markup("").join(out)


_SPAN_CLASS = {models.SUPERSEDED: "retired", models.CONFLICTED: "conflict"}


def annotate(content: str, claims: Sequence[Claim]) -> Markup:
    """The record's text escaped, each claim's sentence wrapped in a span marked with its
    status (a retired one struck through, a conflicted one marked) and linked to its row."""
    spans = sorted(((max(0, c.start), min(len(content), c.end), c) for c in claims
                    if c.end > c.start), key=lambda span: (span[0], span[1], span[2].claim_id))
    out: list[str] = []
    at = 0
    for start, end, claim in spans:
        if start < at:  # overlapping claims: the first one keeps the text
            continue
        out.append(escape(content[at:start]))
        css = _SPAN_CLASS.get(claim.status, "claim")
        out.append(Markup('<a class="span %s" href="#claim-%s" title="%s">%s</a>') % (
            css, claim.claim_id, STATUS_TEXT.get(claim.status, claim.status),
            content[start:end]))
        at = end
    out.append(escape(content[at:]))
    return Markup("").join(out)


PLOT_W, PLOT_H, PLOT_PAD = 640, 160, 28


def ledger_plot(days: Sequence[dict[str, Any]]) -> Markup:
    """An SVG of the ledger over time, oldest day first: a bar per day for the tokens
    injected, and a dot for the share of judged injections that were used (0 to 100%)."""
    rows = sorted(days, key=lambda d: str(d.get("day") or ""))
    if not rows:
        return Markup("")
    most = max(int(d.get("tokens") or 0) for d in rows) or 1
    step = (PLOT_W - 2 * PLOT_PAD) / len(rows)
    inner = PLOT_H - 2 * PLOT_PAD
    parts = [Markup('<svg class="plot" role="img" viewBox="0 0 %d %d" width="%d" height="%d">'
                    '<title>%s</title>') % (PLOT_W, PLOT_H, PLOT_W, PLOT_H,
                                            "tokens injected per day, and the share used")]
    for n, day in enumerate(rows):
        x = PLOT_PAD + n * step
        height = inner * int(day.get("tokens") or 0) / most
        parts.append(Markup(
            '<rect class="tokens" x="%.1f" y="%.1f" width="%.1f" height="%.1f">'
            '<title>%s: %s tokens, %s injections</title></rect>') % (
            x + step * 0.15, PLOT_H - PLOT_PAD - height, step * 0.7, height,
            day.get("day"), day.get("tokens"), day.get("injections")))
        share = day.get("used_share")
        if share is not None:
            parts.append(Markup(
                '<circle class="used" cx="%.1f" cy="%.1f" r="4"><title>%s: %d%% used'
                '</title></circle>') % (x + step / 2, PLOT_H - PLOT_PAD - inner * share,
                                        day.get("day"), round(100 * share)))
    parts.append(Markup('<text x="%d" y="%d">%s</text><text x="%d" y="%d">%s</text>'
                        '</svg>') % (PLOT_PAD, PLOT_H - 8, rows[0].get("day"),
                                     PLOT_W - PLOT_PAD - 70, PLOT_H - 8, rows[-1].get("day")))
    return Markup("").join(parts)


def environment() -> Environment:
    env = Environment(loader=PackageLoader("lintaid.viewer", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(when=when, short=short, summary=summary, highlight=highlight,
                       annotate=annotate, ledger_plot=ledger_plot)
    env.globals.update(status_text=STATUS_TEXT, revision_text=REVISION_TEXT, headline=headline)
    return env


class Renderer:
    def __init__(self) -> None:
        self.env = environment()

    def page(self, name: str, **context: Any) -> str:
        return self.env.get_template(name).render(**context)
