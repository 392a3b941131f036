"""Relations between claims: pairwise by topic and value, and explicit links.

``relate`` is a pure function of two claims and the similarity of their topics
(``lintaid.policy.topics``): the engine calls it for every pair of candidates
(``lintaid.policy.engine``), so what a record's claims relate to never depends on the order
records arrived in.

- The same value on the same topic confirms.
- A transition in the newer statement that names the older value ("instead of 3.10", "from
  Jenkins to ...", "back to goose" against the value it undoes) supersedes it (0.95); so does
  a removal ("we no longer use Redis").
- A different value on the same topic supersedes it when the newer statement says it changed
  something (its own change or revert cue, 0.95, or its turn's intent: a turn asked to "bump"
  or "loosen" states its new values without saying so, 0.92); a newer decision document
  supersedes an older memory (0.90: the project's documents inform memory).
- Otherwise two values for one thing disagree: ``conflicts_with`` (0.75), into the review
  queue, when the topics are close enough to be sure it is one thing.

"Newer" is a later effective time; on equal effective times, a later ``created_at``, which the
store stamps from its clock. Memories and decision documents are two kinds of source; a
teammate's memory is a kind of its own (``scope.source_kind``), so it never silently retires
another person's statement without a cue.

A pair a person rejected in review (``claim_pair_id``) is skipped by the engine: neither claim
relates to the other, whatever the rules would say.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from . import topics
from .kinds import kind_of
from .topics import near_similarity, shape, shaped_contrasting, shaped_strong_overlap
from .values import CODE, DURATION, NUMBER, VERSION, compatible, duration_units

VALUE = "value"  # a setting's value: of whatever kind its canonical form shows

HIDE = 0.90
"""A supersedes relation at or above this confidence hides the older claim."""
CONFLICT = 0.65
"""A conflicts_with relation at or above this confidence marks both sides conflicted; a
supersedes relation between this and HIDE marks its older side conflicted (likely retired,
waiting for review) and leaves the newer current."""
LIKELY = 0.8
"""A newer statement of a different value, same kind of source, no cue: likely superseding."""

CONFIRMS = "confirms"
SUPERSEDES = "supersedes"
CONFLICTS_WITH = "conflicts_with"

EXPLICIT = "explicit"
"""Method of a record-level link's relations."""
DOCUMENT = "document"
MEMORY = "memory"


@dataclass(frozen=True)
class ClaimRef:
    """A claim as the relation engine sees it: where it sits, what it says, when it held."""

    claim_id: str
    record_id: str
    scope: str
    subject: str
    predicate: str
    value: str
    effective_at: float | None = None
    source_kind: str = MEMORY
    cue: bool = False
    replaces: str | None = None
    order_key: tuple[float, str, int] = (0.0, "", 0)
    evidence: str = ""
    start: int = 0
    end: int = 0
    weak: bool = False
    external: bool = False  # another store's claim (a document's, read by memory): never stated
    topic: tuple[tuple[str, float], ...] = ()
    cue_kind: str = ""
    peers: str = ""


@dataclass(frozen=True)
class Relation:
    """``source_claim`` is the newer (confirming/superseding) side, ``target_claim`` the older."""

    kind: str
    source_claim: str
    target_claim: str
    source_record: str
    target_record: str
    confidence: float
    method: str
    evidence: str


def chain_order(claim: ClaimRef) -> tuple[int, float, int, tuple[float, str, int]]:
    """Undated first, then by effective time; on a tie a claim carrying a correction counts as
    the later one (it knows about the other value); then record creation time and ids."""
    dated = claim.effective_at is not None
    corrective = claim.cue or claim.replaces is not None
    return (int(dated), claim.effective_at or 0.0, int(corrective), claim.order_key)


def _changed(newer: ClaimRef, older: ClaimRef) -> str:
    return f"{newer.subject} changed from '{older.value}' to '{newer.value}'"


def is_newer(newer: ClaimRef, older: ClaimRef) -> bool:
    """Strictly later: effective time, then creation time (``order_key[0]``); undated never."""
    if newer.effective_at is None or older.effective_at is None:
        return False
    return (newer.effective_at, newer.order_key[0]) > (older.effective_at, older.order_key[0])


def outranks(newer_kind: str, older_kind: str) -> bool:
    """Whether a strictly newer source of ``newer_kind`` supersedes one of ``older_kind``
    without a cue: the same kind, or a document over a memory (see the module docstring)."""
    return newer_kind == older_kind or (newer_kind == DOCUMENT and older_kind == MEMORY)


def pair_id(scope: str, subject: str, predicate: str, a: tuple[str, str],
            b: tuple[str, str]) -> str:
    """The id of the pair of statements ``a`` and ``b``, each ``(record_id, value)``, about
    (scope, subject, predicate) of the newer side, whichever comes first: a review item's
    id, the same after any rebuild."""
    sides = sorted(f"{record}\x1e{value}" for record, value in (a, b))
    key = "\x1f".join((scope, subject, predicate, *sides))
    return "rv" + hashlib.sha256(key.encode()).hexdigest()[:22]


def claim_pair_id(a: ClaimRef, b: ClaimRef) -> str:
    """The review id of ``a`` (the newer claim) and ``b``."""
    return pair_id(a.scope, a.subject, a.predicate, (a.record_id, a.value),
                   (b.record_id, b.value))


def pseudo_claim_id(record_id: str) -> str:
    """Stands for a whole record in an explicit link when it has no claims of its own."""
    return f"{record_id}::record"


def explicit_relations(links: list[tuple[str, str]],
                       claims_by_record: dict[str, list[ClaimRef]]) -> list[Relation]:
    """Record-level supersession (frontmatter ``supersedes:``, the API's ``supersedes``).

    It retires every claim of the old record regardless of content. The source side is the new
    record's claim about the same thing (same subject and kind of value) when it has one, else
    its first claim, else the record.
    """
    out: list[Relation] = []
    for new_id, old_id in sorted(set(links)):
        if new_id == old_id:
            continue
        new_claims = claims_by_record.get(new_id, [])
        old_claims = claims_by_record.get(old_id, [])
        evidence = f"{new_id} explicitly supersedes {old_id}"
        targets: list[tuple[str, tuple[str, str] | None]] = [
            (c.claim_id, (c.subject, c.predicate)) for c in old_claims] or [
            (pseudo_claim_id(old_id), None)]
        for target_id, key in targets:
            source = next((c for c in new_claims if (c.subject, c.predicate) == key), None)
            if source is None and new_claims:
                source = new_claims[0]
            source_id = source.claim_id if source else pseudo_claim_id(new_id)
            out.append(Relation(SUPERSEDES, source_id, target_id, new_id, old_id, 1.0,
                                EXPLICIT, evidence))
    return out


# ---------------------------------------------------------------------------------------------
# Statements related pairwise, by topic and value (``lintaid.policy.beliefs``)

RELATE_AT = 0.5
"""Topic similarity at which two claims with values of compatible types are about one thing
(a confirmation needs this much)."""
CUE_AT = 0.3
"""A statement that says it changed a value of a specific kind (a duration, a rate, a version,
a URL, a handle ...) needs only this much topic: its cue says such a value was replaced."""
GENERIC_CUE_AT = 0.55
"""The same for values of common kinds (numbers, names, identifiers), which many things have."""
INTENT_AT = 0.5
"""A statement whose turn set out to change something, without saying so itself."""
SPECIFIC_TYPES = frozenset({"duration", "rate", "schedule", "percent", "version", "url",
                            "handle", "size", "email", "host", "default"})
CONFLICT_AT = 0.6
"""A cue-less disagreement is a conflict only this close: below it, likely two things."""
TRANSITION_AT = 0.2
"""A transition naming the older value ("instead of X") needs only this much topic."""
SAME_RECORD_AT = 0.9
"""Two statements of one record relate only when they are about the very same thing."""

INTENT = "intent"
"""Cue kind of a claim whose turn was asked to change something (``cues.turn_intent``)."""
CONTEXT = "context"
"""Cue kind of a value a request stated and the result did not confirm: never a belief; a
later belief on its topic retires it (see ``relate``)."""
REMOVED = "-"
"""The value of a claim that only retires what it names ("we no longer use Redis")."""
SEP = "\x1f"
"""Between the values of ``replaces`` when a statement names more than one."""


def replaced(replaces: str | None) -> set[str]:
    """The old values a claim's statement names."""
    return set(replaces.split(SEP)) if replaces else set()


def _numeric(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def names_value(replaces: str | None, value: str, vtype: str, new_value: str = "",
                evidence: str = "") -> bool:
    """Whether a statement's old values name ``value``: the same canonical form, or the bare
    number it was written with: for a percentage ("60 (was 70)" names 70%), and for a
    duration in the unit the statement's own value (``new_value``, as its ``evidence``
    writes it) has ("now 600 seconds instead of 300" names 300s, "10 minutes instead of 5"
    names 5 minutes, not 5 seconds)."""
    olds = replaced(replaces)
    if value in olds:
        return True
    if vtype == "percent" and (x := _numeric(value)) is not None:
        return any((y := _numeric(o)) is not None and abs(y - 100 * x) < 1e-9 for o in olds)
    if vtype in (DURATION, VALUE) and (x := _seconds(value)) is not None \
            and _seconds(new_value) is not None:
        bare = [y for o in olds if (y := _numeric(o)) is not None and y > 0]
        return any(abs(y * unit - x) < 1e-9
                   for y in bare for unit in duration_units(evidence, new_value))
    return False


def _seconds(value: str) -> float | None:
    """A canonical duration ("300s") in seconds (a setting's value, ``VALUE``, has its
    kind in its form)."""
    return _numeric(value[:-1]) if value.endswith("s") else None


SLOT_AT = 0.6
"""The similarity two claims are given when they fill one slot (``same_slot``)."""


def _slot_terms(subject: str) -> set[str]:
    return {t for t in topics.words(subject) if t not in topics.GENERIC and len(t) > 1}


def same_slot(newer: ClaimRef, older: ClaimRef) -> bool:
    """Whether two claims name the same setting by their keys: the words of the shorter
    claim's subject (what its statement says the value is of: "automated backups", "target
    cpu", "nvmrc") are all in the longer one's ("backup_retention_period ... automated
    backups", "target cpu utilization"), at least two words, or one written as an
    identifier (``max_conns``). Values of compatible types only."""
    if not compatible(newer.predicate, older.predicate):
        return False
    keyed = _keys_of(newer.evidence, newer.value)
    if keyed and keyed & _keys_of(older.evidence, older.value):
        return True  # "(`DB_POOL_SIZE=20`)" then "(`DB_POOL_SIZE=40`)": one setting's values
    a, b = _slot_terms(newer.subject), _slot_terms(older.subject)
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    if not short or not short <= long:
        return False
    if len(short) >= 2:
        return True
    (only,) = short
    return only in _identifier_terms(newer.subject, older.subject) or only in (
        _identifier_terms(newer.evidence, dotfiles=True)
        & _identifier_terms(older.evidence, dotfiles=True))


_KEYED = re.compile(r"(?<![\w.-])([A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+)`?\s*[=:]\s*[`\"']?"
                    r"([^\s`\"',;)]+)")


def _keys_of(evidence: str, value: str) -> set[str]:
    """The setting keys a statement writes ``value`` as the value of ("DB_POOL_SIZE=40",
    "max_conns: 40", "pool.size = 40"), lower-cased: keys written as identifiers only (a
    word and a colon is a label, not a key)."""
    folded = value.strip().lower()
    if not folded:
        return set()
    return {m.group(1).lower() for m in _KEYED.finditer(evidence)
            if m.group(2).strip().lower() == folded}


def named_setting(newer: ClaimRef, older: ClaimRef) -> bool:
    """Whether two claims on one subject name one setting, so the newer statement of it
    holds without a cue: a named slot (``same_slot``), and for a bare number a key written
    as an identifier too ("retry_limit: 3"; "Thread 3 note 7" numbers things, it sets
    nothing)."""
    if not same_slot(newer, older):
        return False
    if newer.predicate != NUMBER:
        return True
    return bool(_identifier_terms(newer.subject, older.subject)
                or _keys_of(newer.evidence, newer.value) & _keys_of(older.evidence, older.value))


# A number that is a parameter of a code value: a run of digits (a version's dots kept) that
# ends the token it is in ("q_60", "+1.74", "=40"), not one inside an identifier
# ("SCRATCH_8_PORT" names another setting than "SCRATCH_13_PORT").
_PARAMETER = re.compile(r"\d+(?:\.\d+)*(?![\w.])")
TEMPLATE_CHARS = 6
"""The fewest characters a code value's template keeps besides its numbers."""


def value_template(value: str) -> str:
    """A code value with each parameter number a placeholder (``f_auto,q_#,w_<width>``), or
    "" when it has none or too little besides its numbers to be one setting's template."""
    out = _PARAMETER.sub("#", value)
    if "#" not in out or sum(1 for ch in out if ch.isalpha()) < TEMPLATE_CHARS // 2 \
            or len(out.replace("#", "")) < TEMPLATE_CHARS:
        return ""
    return out


def same_template(a: str, b: str) -> bool:
    """Whether two code values are one setting written with two numbers
    (``f_auto,q_60,w_<width>`` and ``f_auto,q_75,w_<width>``; ``cargo +1.74 check`` and
    ``cargo +1.80 check``): the same ``value_template``, and different numbers."""
    return a != b and bool(value_template(a)) and value_template(a) == value_template(b)


def _identifier_terms(*texts: str, dotfiles: bool = False) -> set[str]:
    """Terms written as identifiers in a subject (``max_conns``, ``TRANSFORM_WH``), and with
    ``dotfiles`` a file named by its dot (``.nvmrc``: the subject keeps no dot, so the
    statements are read, and the term must be written so in both)."""
    pattern = r"[A-Za-z][\w.]*[_.][\w.]+" + (r"|(?<![\w.])\.[A-Za-z][\w-]+" if dotfiles else "")
    out: set[str] = set()
    for s in texts:
        for tok in re.findall(pattern, s):
            out.update(topics.words(tok))
    return out


def _contains(a: str, b: str) -> bool:
    """One value holds the other as a word ("lightgbm" in "lightgbm==4.5.0")."""
    if a == b or not a or not b or a == REMOVED or b == REMOVED:
        return False
    short, long = (a, b) if len(a) < len(b) else (b, a)
    if len(short) < 3 or not short[0].isalpha():
        return False
    return re.search(rf"(?<![\w-]){re.escape(short)}(?![\w])", long) is not None


_QUALIFIED = re.compile(r"[\w@-]+(?:[./:][\w@-]+)+")


def _qualified(value: str) -> bool:
    """A value that names one thing wherever it is said: a module path, a URL, a host, a
    dotted package ("go.uber.org/zap"). Its removal ("dropped go.uber.org/zap") retires it
    whatever the two statements' other words; so does that of a known tool of a kind
    ("the Opsgenie integration is switched off"), unless the removal says where from."""
    return len(value) >= 6 and _QUALIFIED.fullmatch(value) is not None


def _scoped(evidence: str, value: str) -> bool:
    """Whether a removal of ``value`` says where it was removed from ("dropped Redis from the
    test setup"): it then retires the tool only where the topics meet."""
    return re.search(rf"(?<![\w]){re.escape(value)}(?![\w])[^.;:]{{0,40}}?\b(?:from|in|for|on)\s+"
                     rf"(?:the|our|its|their|this)\b", evidence, re.IGNORECASE) is not None


_RELEASE = re.compile(r"(?:^|\s)v?\d+\.\d+\.\d+")
_WHOLE = re.compile(r"\d{3,}")


def _port_and_release(a: ClaimRef, b: ClaimRef) -> bool:
    """A whole number of three digits or more (a port, a count: 8080) and a release of three
    parts (1.14.0) are no two choices for one thing, though a number and a version may be
    ("3.10" said alone, "Python 3.11")."""
    if {a.predicate, b.predicate} != {NUMBER, VERSION}:
        return False
    number, version = (a, b) if a.predicate == NUMBER else (b, a)
    return bool(_WHOLE.fullmatch(number.value.strip())
                and _RELEASE.search(version.value.strip()))


def relate(newer: ClaimRef, older: ClaimRef, similarity: float) -> Relation | None:
    """The relation of two claims, ``newer`` later in order; None when they are about
    different things. Pure: it depends on the two claims and their topic similarity only.

    Same value: confirms. A transition in ``newer`` naming ``older``'s value, or a change or
    revert cue (its own, or its turn's): supersedes. A newer decision document over an older
    memory: supersedes (0.90). Otherwise a disagreement: a conflict, when close enough.
    """
    def rel(kind: str, confidence: float, method: str, evidence: str) -> Relation:
        return Relation(kind, newer.claim_id, older.claim_id, newer.record_id, older.record_id,
                        confidence, method, evidence)

    if newer.record_id == older.record_id and (newer.start, newer.end) == (older.start,
                                                                             older.end):
        return None
    if older.value == REMOVED or newer.cue_kind == CONTEXT:
        return None
    same_key = (newer.subject == older.subject and newer.predicate == older.predicate
                and bool(newer.topic) and len(newer.subject) > 2
                and newer.subject != newer.predicate)
    sim = 1.0 if same_key else similarity
    names = names_value(newer.replaces, older.value, older.predicate, newer.value,
                        newer.evidence)
    if newer.record_id == older.record_id and older.cue_kind == CONTEXT \
            and newer.cue_kind in ("change", "revert", INTENT) \
            and newer.predicate == older.predicate and newer.predicate in SPECIFIC_TYPES \
            and newer.value != older.value and sim >= CUE_AT \
            and shaped_strong_overlap(shape(newer.topic), shape(older.topic)):
        # "Since the 90s change the feed query doubled" answered by "TTL back to 5m": the
        # request quoted the value its own turn then changed.
        return rel(SUPERSEDES, 0.90, "context", _changed(newer, older))
    if newer.record_id == older.record_id and sim < SAME_RECORD_AT and not names:
        return None
    if newer.value == REMOVED:
        if names and (sim >= TRANSITION_AT or _qualified(older.value)
                      or (kind_of(older.value) and not _scoped(newer.evidence, older.value))):
            return rel(SUPERSEDES, 0.95, "removal", f"{newer.subject}: '{older.value}' removed")
        # "zap" beside "go.uber.org/zap" in its statement: one thing said two ways, removed
        # with it.
        alias = [v for v in replaced(newer.replaces) & replaced(older.peers)
                 if _qualified(v) and _contains(older.value, v)]
        if alias:
            return rel(SUPERSEDES, 0.90, "removal",
                       f"{newer.subject}: '{alias[0]}' ({older.value}) removed")
        return None
    if not (compatible(newer.predicate, older.predicate) or same_key) \
            or _port_and_release(newer, older):
        return None
    a, b = shape(newer.topic), shape(older.topic)
    # One code setting with another number in it is one slot whatever words surround it.
    templated = newer.predicate == older.predicate == CODE \
        and newer.record_id != older.record_id and same_template(newer.value, older.value)
    if not names and not templated and shaped_contrasting(a, b):
        return None
    if _contains(newer.value, older.value) and not names:
        return None  # "LightGBM" and "lightgbm==4.5.0": one choice, said two ways
    if older.value in replaced(newer.peers) and not names:
        return None  # the newer statement still states the older value beside its own
    strong = same_key or templated or shaped_strong_overlap(a, b)
    if older.cue_kind == CONTEXT:
        # A request's unconfirmed value: a newer belief on its topic says what holds.
        if newer.value != older.value and (names or (strong and sim >= RELATE_AT)):
            return rel(SUPERSEDES, 0.90, "context", _changed(newer, older))
        return None
    if newer.value == older.value:
        if sim >= RELATE_AT and strong:
            return rel(CONFIRMS, 0.95, "same_value", "same value on the same topic")
        return None
    if names and sim >= TRANSITION_AT:
        return rel(SUPERSEDES, 0.95, "transition", _changed(newer, older))
    cue = newer.cue_kind
    if newer.value in replaced(older.replaces) and cue in ("change", "revert", INTENT) \
            and sim >= TRANSITION_AT:
        # "replace goose with Atlas", later "back to goose": the newer undoes the older
        return rel(SUPERSEDES, 0.95, "undo", f"{newer.subject}: back to '{newer.value}'")
    if not strong:
        return None
    if newer.replaces and cue in ("change", "revert", INTENT) and not templated:
        # its statement says which value it replaced, and it is not this one (of one code
        # template it named the number: "quality 60 -> 75 (`f_auto,q_75`)")
        return None
    specific = newer.predicate in SPECIFIC_TYPES
    need = CUE_AT if specific else GENERIC_CUE_AT
    if not specific:
        # a plain number, name or identifier: what is said right beside it must agree too
        sim = min(sim, near_similarity(a, b)) if not same_key else sim
    if templated or same_slot(newer, older):
        sim = max(sim, SLOT_AT)
    if cue in ("change", "revert") and sim >= need:
        return rel(SUPERSEDES, 0.95, "correction_cue", _changed(newer, older))
    if cue == INTENT and sim >= (need if specific else max(need, INTENT_AT)):
        return rel(SUPERSEDES, 0.92, "turn_intent", _changed(newer, older))
    named = same_key and named_setting(newer, older)
    if (cue in ("keep", "remove") or (cue == "add" and not named)) or sim < RELATE_AT:
        # "Also, ..." adds to what a topic holds; of one setting named alike ("Additionally,
        # start method names with 'o_'") it is one more statement of its value
        return None
    if is_newer(newer, older) and newer.source_kind == DOCUMENT:
        # The project's decision documents are the documented rule: the newer one holds,
        # over an older document and over older memory alike.
        method = "newer_document" if older.source_kind != DOCUMENT else "newer_same_kind"
        return rel(SUPERSEDES, 0.90, method, _changed(newer, older))
    if sim < CONFLICT_AT or (newer.record_id == older.record_id
                             and not same_slot(newer, older)):
        # one record's two statements with two values are two things it lists (the weekly
        # DAG at 06:00, the daily one at 02:00, both read as of "utc"), unless both name one
        # setting by its key ("retry_limit: 3" and "retry_limit: 4"): that record
        # disagrees with itself
        return None
    if is_newer(newer, older) and newer.source_kind == older.source_kind:
        if named:
            # One setting named alike in both ("attribute names" ending in '_j', later in
            # '_at'; "Artifact bucket is s3://delta", later "s3://epsilon"): the newer
            # statement of the same kind of source holds, as on one chain.
            return rel(SUPERSEDES, 0.90, "newer_same_kind", _changed(newer, older))
        # Said later by the same kind of source, without saying it changed anything, on a
        # topic that is only alike: most likely the newer holds, but nobody said so; a
        # person confirms it in review.
        return rel(SUPERSEDES, LIKELY, "newer_unmarked", _changed(newer, older))
    return rel(CONFLICTS_WITH, 0.75, "disagreement", _changed(newer, older))
