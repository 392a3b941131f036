"""The seam between the stores and the one policy engine.

The stores persist rows and derive nothing; ``lintaid.policy.engine`` derives and stores
nothing. This module adapts each store to the engine's ``PolicyStore`` protocol (rows to policy
types and back) and says when derivation runs, always on the writer thread:

- memory.db: after every writer batch, inside its transaction (``derive_memory``), and in full
  before the writer starts when the rules changed (``ensure_memory``);
- workspace.db: in each writer job that applies file changes (``apply_files``), and in full on
  ``reindex --full`` (``rebuild_workspace``).

Documents meet memory. The project's decision documents inform memory: a memory claim of
project scope also has, as read-only external candidates, the claims of workspace files (of
any file scope) that share a key with it and that the workspace has not retired (a file
another file supersedes by frontmatter takes no part). Memory claims get relations and
statuses against them by the same rules (``lintaid.policy.relations``); nothing is written to
workspace.db from memory. A memory claim a document retires names the file in
``superseded_by`` and keeps the file's value (``superseded_by_value``). Both stores are written
only on the writer thread, so the order is fixed: a job that applies file changes derives the
files, then the memory claims holding the keys of the documents' claims that changed
(``apply_files(..., memory=...)``); ``link_documents`` relates again every memory claim
documents may take part in (or took part in) when the daemon starts or stops reading a
workspace. It skips that when memory
was last derived against the documents as they stand: every write of workspace.db's files
gives it a new generation, and memory.db keeps the generation it is in step with (cleared by
any derivation of memory without the documents, or after a failed batch, which rolls both
back), so a restart with nothing changed costs a lookup.

``DERIVED_VERSION`` is a hash over the code (the syntax tree, without comments and docstrings)
of every module that decides derived state (the policy package's, and the ones
``RULE_MODULES`` adds) and the policy package's data, so it changes whenever the rules do, is
never bumped by hand, and a comment edit re-derives nothing. memory.db derived under other
rules is re-derived at start; workspace.db is emptied and re-read from the files.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import pkgutil
import re
import sys
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

from lintaid_client.models import PROMPT

from . import __version__
from .policy import (
    PROJECT,
    REBUILD_BATCH,
    ClaimRef,
    ClaimState,
    RecordInput,
    RecordState,
    Relation,
    claim_keys,
    derive,
    rebuild,
    staleness,
)
from .policy.engine import NEAREST
from .policy.topics import decode, encode
from .store.derived_tables import INFERRED, DerivedTables
from .store.memory import MemoryStore
from .store.schema import get_meta, set_meta
from .store.workspace import ApplyResult, FileUpdate, WorkspaceStore

RULE_PACKAGES: Final = ("lintaid.policy",)
"""Every module of these packages decides derived state, and so do their data files (the
vocabulary's package list)."""
RULE_MODULES: Final = ("lintaid.workspace.documents", "lintaid.derivation")
"""The modules outside them that decide it too (how documents are read, how rows meet the
engine)."""


def rule_modules(packages: Iterable[str] = RULE_PACKAGES,
                 modules: Iterable[str] = RULE_MODULES) -> list[str]:
    """The names of every module in ``packages`` (sorted), then ``modules``."""
    names: list[str] = []
    for package in packages:
        spec = importlib.util.find_spec(package)
        where = list(spec.submodule_search_locations or []) if spec else []
        names.append(package)
        names += sorted(m.name for m in pkgutil.walk_packages(where, package + "."))
    return names + [m for m in modules if m not in names]


def _without_docstrings(tree: ast.AST) -> ast.AST:
    """``tree`` less every statement that is a bare string (docstrings, the strings that
    document a constant): they change no behaviour."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list) or not body or not isinstance(body[0], ast.stmt):
                continue
            kept = [b for b in body if not (isinstance(b, ast.Expr)
                                            and isinstance(b.value, ast.Constant)
                                            and isinstance(b.value.value, str))]
            setattr(node, field, kept or [ast.Pass()])
    return tree


def code_of(source: bytes) -> bytes:
    """What of a module's source decides behaviour: its syntax tree without comments,
    docstrings, layout or line numbers (``ast.dump``); the raw source if it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source
    return ast.dump(_without_docstrings(tree)).encode()


def _data_files(packages: Iterable[str]) -> list[Path]:
    """The packages' files that are not Python (``policy/data/packages.txt``), sorted."""
    out: list[Path] = []
    for package in packages:
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            out += sorted(p for p in Path(folder).rglob("*") if p.is_file()
                          and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts)
    return out


def _sources(modules: Iterable[str]) -> list[tuple[str, bytes]]:
    """Each module's name and source (empty where it has none)."""
    out = []
    for name in modules:
        spec = importlib.util.find_spec(name)
        try:
            data = Path(spec.origin).read_bytes() if spec and spec.origin else b""
        except OSError:
            data = b""
        out.append((name, data))
    return out


def _rule_inputs(modules: Iterable[str] | None,
                 packages: Iterable[str]) -> tuple[list[tuple[str, bytes]],
                                                   list[tuple[str, bytes]]]:
    names = rule_modules(packages) if modules is None else list(modules)
    data = [(p.name, p.read_bytes()) for p in _data_files(packages)] if modules is None else []
    return _sources(names), data


def _version(sources: list[tuple[str, bytes]], data: list[tuple[str, bytes]]) -> str:
    digest = hashlib.sha256()
    for name, source in sources:
        code = code_of(source) if source else __version__.encode()
        digest.update(name.encode() + b"\0" + code + b"\0")
    for name, content in data:
        digest.update(name.encode() + b"\0" + content + b"\0")
    return digest.hexdigest()[:16]


def rules_version(modules: Iterable[str] | None = None,
                  packages: Iterable[str] = RULE_PACKAGES) -> str:
    """A hash over the code of ``modules`` (default: ``rule_modules()``, and then the data
    files of ``packages`` too): a comment or a docstring edited changes nothing, so it
    re-derives no store; the package version where a source is missing."""
    return _version(*_rule_inputs(modules, packages))


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lintaid" / "derived"


def cached_rules_version(cache_dir: Path | None = None) -> str:
    """``rules_version()``, kept in ``cache_dir`` (default: the user's cache folder) under a
    hash of the raw sources and the Python version (whose ``ast.dump`` it depends on).
    Parsing the rules costs about 0.25 s; a daemon starting again with the same code reads
    16 bytes instead. A cache that cannot be read or written is only not used."""
    sources, data = _rule_inputs(None, RULE_PACKAGES)
    raw = hashlib.sha256(repr(sys.version_info[:2]).encode())
    for name, content in (*sources, *data):
        raw.update(name.encode() + b"\0" + content + b"\0")
    path = (cache_dir or _cache_dir()) / f"rules-{raw.hexdigest()[:32]}"
    try:
        kept = path.read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        kept = ""
    if _VERSION_TEXT.fullmatch(kept):
        return kept
    version = _version(sources, data)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temporary.write_text(version + "\n", "ascii")
        os.replace(temporary, path)
    except OSError:
        pass
    return version


_VERSION_TEXT: Final = re.compile(r"[0-9a-f]{16}")


DERIVED_VERSION: Final = cached_rules_version()


# ---------------------------------------------------------------------------------------------
# Rows <-> policy types


class Row(Protocol):
    """A stored row as the stores return it (``Row``): read by column name."""

    def __getitem__(self, key: str) -> Any: ...


def _claim(row: Row, *, scope: str | None = None, external: bool = False) -> ClaimRef:
    return ClaimRef(
        claim_id=row["claim_id"], record_id=row["record_id"], scope=scope or row["scope"],
        subject=row["subject"], predicate=row["predicate"], value=row["value"],
        effective_at=row["effective_at"], source_kind=row["source_kind"], cue=bool(row["cue"]),
        replaces=row["replaces"], order_key=(row["created_at"], row["record_id"], row["n"]),
        evidence=row["evidence"], start=row["start"], end=row["end"], external=external,
        topic=tuple(sorted(decode(row["topic"]).items())), cue_kind=row["cue_kind"],
        peers=row["peers"],
    )


def _claim_row(c: ClaimRef) -> tuple[Any, ...]:
    created_at, _record, n = c.order_key
    return (c.claim_id, c.record_id, n, created_at, c.source_kind, c.scope, c.subject,
            c.predicate, c.value, c.evidence, c.start, c.end, c.effective_at, int(c.cue),
            c.replaces, encode(dict(c.topic)), c.cue_kind, c.peers)


def _key_rows(claims: Sequence[ClaimRef]) -> list[tuple[Any, ...]]:
    return [(key, c.claim_id, c.record_id, c.scope, int(strong), c.order_key[0])
            for c in claims for key, strong in claim_keys(c).items()]


def _wanted(claim: ClaimRef) -> list[tuple[str, float, bool]]:
    """What ``candidates`` looks up for a claim: each key, where the claim sits in time, and
    whether only strong holders will do (the claim holds it weakly)."""
    return [(key, claim.order_key[0], not strong) for key, strong in claim_keys(claim).items()]


def _candidates(tables: DerivedTables, claims: Sequence[ClaimRef], scopes: set[str] | None,
                external: bool = False) -> dict[str, list[ClaimRef]]:
    """Each claim's candidates among ``tables``' claims (``PolicyStore.candidates``)."""
    found = tables.candidates([w for c in claims for w in _wanted(c)], scopes, NEAREST)
    ids = {i for idl in found.values() for i in idl}
    rows = {r["claim_id"]: _claim(r, external=external) for r in tables.claims_by_id(ids)}
    out: dict[str, list[ClaimRef]] = {}
    for c in claims:
        mine = {i for w in _wanted(c) for i in found.get(w, ())}
        out[c.claim_id] = [rows[i] for i in sorted(mine) if i in rows]
    return out


def _relation(row: Row) -> Relation:
    return Relation(row["kind"], row["source_claim"], row["target_claim"], row["source_record"],
                    row["target_record"], row["confidence"], row["method"], row["evidence"])


def _relation_rows(chain: str | None, relations: Sequence[Relation]) -> list[tuple[Any, ...]]:
    """Explicit ones (``chain`` None) numbered within each link, to be read back in order;
    inferred ones are unordered (0): a pair's relation depends on the pair alone."""
    rows: list[tuple[Any, ...]] = []
    n, link = 0, None
    for r in relations:
        if chain is None and (r.source_record, r.target_record) != link:
            n, link = 0, (r.source_record, r.target_record)
        rows.append((chain, n if chain is None else 0, r.source_claim, r.target_claim,
                     r.source_record, r.target_record, r.kind, r.confidence, r.method,
                     r.evidence))
        n += 1
    return rows


class _DerivedState:
    """The derived-state half of ``PolicyStore``, over a store's derived tables."""

    def __init__(self, tables: DerivedTables) -> None:
        self.tables = tables

    def claims(self, record_ids: Collection[str]) -> list[ClaimRef]:
        return [_claim(r) for r in self.tables.claims(record_ids)]

    def rejected(self, pair_ids: Collection[str]) -> Collection[str]:
        """Nothing is rejected unless the store holds review decisions (memory.db does)."""
        return ()

    def candidates(self, claims: Sequence[ClaimRef]) -> Mapping[str, Sequence[ClaimRef]]:
        return _candidates(self.tables, claims, {c.scope for c in claims})

    def claims_with_keys(self, keys: Collection[str]) -> list[ClaimRef]:
        return [_claim(r) for r in self.tables.claims_with_keys(keys, NEAREST)]

    def explicit_relations(self, record_ids: Collection[str]) -> list[Relation]:
        return [_relation(r) for r in self.tables.explicit_relations(record_ids)]

    def explicit_relations_of_claims(self, claim_ids: Collection[str]) -> list[Relation]:
        return [_relation(r) for r in self.tables.explicit_relations_of_claims(claim_ids)]

    def relations_of_claims(self, claim_ids: Collection[str]) -> list[Relation]:
        return [_relation(r) for r in self.tables.relations_of_claims(claim_ids)]

    def claim_states(self, claim_ids: Collection[str]) -> dict[str, ClaimState]:
        return {r["claim_id"]: ClaimState(r["status"], r["superseded_by_claim"],
                                          r["superseded_by_record"], r["confidence"])
                for r in self.tables.claim_states(claim_ids)}

    def record_states(self, record_ids: Collection[str]) -> dict[str, RecordState]:
        return {r["record_id"]: RecordState(r["status"], r["superseded_by"], r["confidence"],
                                            r["evidence"] or "")
                for r in self.tables.record_states(record_ids)}

    def replace_claims(self, record_ids: Collection[str], claims: Sequence[ClaimRef]) -> None:
        self.tables.replace_claims(record_ids, [_claim_row(c) for c in claims],
                                   _key_rows(claims))

    def replace_explicit_relations(self, record_ids: Collection[str],
                                   relations: Sequence[Relation]) -> None:
        self.tables.replace_explicit_relations(record_ids, _relation_rows(None, relations))

    def replace_inferred_relations(self, claim_ids: Collection[str],
                                   relations: Sequence[Relation]) -> None:
        self.tables.replace_inferred_relations(claim_ids, _relation_rows(INFERRED, relations))

    def write_claim_states(self, states: Sequence[tuple[ClaimRef, ClaimState]]) -> None:
        values = self.external_values([s.superseded_by_claim for _c, s in states
                                       if s.superseded_by_claim])
        self.tables.write_claim_states(
            [(c.claim_id, c.record_id, s.status, s.superseded_by_claim, s.superseded_by_record,
              s.confidence, values.get(s.superseded_by_claim or ""))
             for c, s in states])

    def external_values(self, claim_ids: Collection[str]) -> dict[str, str]:
        """The values of those of ``claim_ids`` that another store holds (none here)."""
        return {}

    def write_record_states(self, states: Mapping[str, RecordState | None]) -> None:
        self.tables.write_record_states(
            [(rid, s.status, s.superseded_by, s.confidence, s.evidence)
             for rid, s in states.items() if s is not None],
            [rid for rid, s in states.items() if s is None])


# ---------------------------------------------------------------------------------------------
# memory.db


class MemoryPolicy(_DerivedState):
    """memory.db as the engine sees it: live records, their held links and the pairs a
    person rejected in review, and on chains of project scope the decision documents'
    standing claims (``documents``: the workspace, when the daemon reads one) as external
    members.

    A prompt takes no part: it is a question or a request, not a statement of the project's
    state, so it yields no claims, supersedes nothing and is never superseded.
    """

    def __init__(self, store: MemoryStore, documents: WorkspaceStore | None = None) -> None:
        super().__init__(store.derived)
        self.store = store
        self.documents = documents

    def records(self, ids: Collection[str]) -> dict[str, RecordInput]:
        me = self.store.outbox.member  # this store's own member name, when in a team
        return {r["id"]: RecordInput(record_id=r["id"], text=r["content"], kind=r["kind"],
                                     user_id=r["user_id"], created_at=r["created_at"],
                                     valid_at=r["valid_at"],
                                     member=r["member"] if r["member"] != me else None)
                for r in self.store.policy_rows(ids) if r["kind"] != PROMPT}

    def links(self, ids: Collection[str]) -> set[tuple[str, str]]:
        return {(r["new_id"], r["old_id"]) for r in self.store.link_rows(ids)}

    def candidates(self, claims: Sequence[ClaimRef]) -> Mapping[str, Sequence[ClaimRef]]:
        own = super().candidates(claims)
        project = [c for c in claims if c.scope == PROJECT]
        if self.documents is None or not project:
            return own
        docs = _candidates(self.documents.derived, project, None, external=True)
        return {cid: [*own.get(cid, ()), *docs.get(cid, ())] for cid in own.keys() | docs.keys()}

    def rejected(self, pair_ids: Collection[str]) -> Collection[str]:
        return self.store.reviews.rejected_items(pair_ids)

    def external_values(self, claim_ids: Collection[str]) -> dict[str, str]:
        if self.documents is None or not claim_ids:
            return {}
        return self.documents.derived.claim_values(claim_ids)


def derive_memory(store: MemoryStore, documents: WorkspaceStore | None = None) -> None:
    """Writer thread, inside a batch's transaction after its jobs: derive what they changed."""
    changed = store.changed_ids()
    if changed:
        store.mark_dirty(derive(MemoryPolicy(store, documents), changed))
        derive_staleness(store, changed)
        if documents is None and get_meta(store.db, DOCUMENTS_SYNCED) not in (None,
                                                                              NO_DOCUMENTS):
            set_meta(store.db, DOCUMENTS_SYNCED, None)  # derived without the documents


# Memory in step with the documents (see the module docstring).
DOCUMENTS_GENERATION: Final = "documents_generation"  # workspace.db meta
DOCUMENTS_SYNCED: Final = "documents_synced"  # memory.db meta: the generation memory matches
NO_DOCUMENTS: Final = "none"


def documents_generation(documents: WorkspaceStore | None) -> str:
    if documents is None:
        return NO_DOCUMENTS
    return get_meta(documents.derived.conn, DOCUMENTS_GENERATION) or ""


def _new_generation(documents: WorkspaceStore) -> None:
    set_meta(documents.derived.conn, DOCUMENTS_GENERATION, os.urandom(8).hex())


def _in_step(store: MemoryStore, was: str, documents: WorkspaceStore) -> None:
    """After ``documents`` moved on from generation ``was`` and memory followed: still in
    step, if it was before."""
    if get_meta(store.db, DOCUMENTS_SYNCED) == was:
        set_meta(store.db, DOCUMENTS_SYNCED, documents_generation(documents))


def document_keys(documents: WorkspaceStore, paths: Iterable[str]) -> set[str]:
    """The keys the claims of these files (as stored now) hold."""
    return documents.derived.keys_of_records(paths, strong_only=True)


def derive_document_keys(store: MemoryStore, documents: WorkspaceStore | None,
                         keys: Iterable[str]) -> None:
    """Writer thread: relate again the memory claims holding ``keys`` after documents'
    claims holding them changed."""
    keys = set(keys)
    if keys:
        store.mark_dirty(derive(MemoryPolicy(store, documents), (), keys), derive=False)


def link_documents(store: MemoryStore, documents: WorkspaceStore | None) -> int:
    """Writer job: memory now reads ``documents`` (None: no workspace). Unless memory is in
    step with them already, relate again every memory claim the documents' claims may take
    part in, and every one that held another store's claims before; return how many keys."""
    generation = documents_generation(documents)
    store_documents = documents
    if get_meta(store.db, DOCUMENTS_SYNCED) == generation:
        return 0
    keys: set[str] = set()
    if store_documents is not None:
        keys = store_documents.derived.all_keys()
    reaching = store.derived.records_reaching("records", "id")
    if reaching:
        keys |= store.derived.keys_of_records(reaching, strong_only=True)
    derive_document_keys(store, documents, keys)
    set_meta(store.db, DOCUMENTS_SYNCED, generation)
    return len(keys)


def derive_staleness(store: MemoryStore, ids: Collection[str]) -> None:
    """The staleness inputs of these records, each from itself alone (after the engine ran,
    whose claims it reads): its category and its assertions. A record gone or forgotten
    keeps none; judging, which compares records, happens when read."""
    rows = store.policy_rows(ids)
    predicates: dict[str, list[str]] = {}
    for claim in store.derived.claims([r["id"] for r in rows]):
        predicates.setdefault(claim["record_id"], []).append(claim["predicate"])
    categories: list[tuple[Any, ...]] = []
    stated: list[tuple[Any, ...]] = []
    for row in rows:
        rid = row["id"]
        said = staleness.record_assertions(row["content"])
        personal = [a for a in said if a.attribute != staleness.TEXT]
        categories.append((rid, staleness.classify(row["content"], row["kind"],
                                                   predicates.get(rid, []), personal)))
        stated.extend((rid, n, row["user_id"], row["created_at"], a.subject, a.attribute,
                       a.value, int(a.leaves)) for n, a in enumerate(said, start=1))
    store.derived.replace_staleness(ids, categories, stated)


def rebuild_memory(store: MemoryStore, batch: int = REBUILD_BATCH,
                   documents: WorkspaceStore | None = None) -> None:
    """Derive every record again from empty derived tables (against ``documents``' claims),
    in one transaction."""
    with store.transaction():
        store.derived.clear()
        ids = store.live_ids()
        rebuild(MemoryPolicy(store, documents), ids, batch)
        set_meta(store.db, DOCUMENTS_SYNCED, documents_generation(documents))
        for i in range(0, len(ids), batch):
            derive_staleness(store, ids[i:i + batch])
        store.mark_dirty(ids)
        store.set_derived_version(DERIVED_VERSION)


def ensure_memory(store: MemoryStore) -> bool:
    """Before the writer starts: re-derive (and re-index) state derived under other rules."""
    if store.derived_version() == DERIVED_VERSION:
        return False
    rebuild_memory(store)
    store.index_now()
    return True


# ---------------------------------------------------------------------------------------------
# workspace.db


class WorkspacePolicy(_DerivedState):
    """workspace.db as the engine sees it: files with claims, and ``supersedes:`` links.

    A file's link is its first ``supersedes:`` target that exists. A file takes part when it
    has policy text (claims, or a link of its own) or when another file's link names it.
    """

    def __init__(self, store: WorkspaceStore) -> None:
        super().__init__(store.derived)
        self.store = store

    def links(self, ids: Collection[str]) -> set[tuple[str, str]]:
        wanted = set(ids)
        candidates = self.store.link_candidates(wanted | self.store.sources_naming(wanted))
        exists = self.store.existing({c for cs in candidates.values() for c in cs})
        out: set[tuple[str, str]] = set()
        for source, targets in candidates.items():
            target = next((t for t in targets if t in exists), None)
            if target is not None and (source in wanted or target in wanted):
                out.add((source, target))
        return out

    def records(self, ids: Collection[str]) -> dict[str, RecordInput]:
        rows = self.store.file_rows(ids)
        bare = {r["path"] for r in rows if r["policy_text"] is None}
        targets = {old for _new, old in self.links(bare)} if bare else set()
        return {r["path"]: RecordInput(
                    record_id=r["path"], text=r["policy_text"] or "", kind="document",
                    created_at=r["mtime_ns"] / 1e9, valid_at=r["mtime_ns"] / 1e9, path=r["path"])
                for r in rows if r["policy_text"] is not None or r["path"] in targets}


def apply_files(store: WorkspaceStore, updates: Iterable[FileUpdate],
                removed: Iterable[str], memory: MemoryStore | None = None) -> ApplyResult:
    """Writer job: write file changes and derive their policy state, in one transaction; then,
    with ``memory`` (inside the writer's batch), the memory chains whose documents changed."""
    keys: set[str] = set()
    was = documents_generation(store)
    with store.transaction():
        result = store.apply(updates, removed)
        if result.written:
            _new_generation(store)
            # A file appearing or vanishing may re-resolve the links that name it.
            changed = set(result.written) | store.sources_naming([*result.added,
                                                                  *result.removed])
            if memory is not None:
                keys = document_keys(store, changed)  # the claims they leave
            states = derive(WorkspacePolicy(store), changed)
            restated = store.existing(states)
            store.mark_pending(restated)
            result.restated = sorted(restated)
            if memory is not None:
                keys |= document_keys(store, changed | states)
    if memory is not None and result.written:
        derive_document_keys(memory, store, keys)
        _in_step(memory, was, store)
    return result


def rebuild_workspace(store: WorkspaceStore, memory: MemoryStore | None = None) -> list[str]:
    """Writer job (``reindex --full``): derive every file again, re-index every file; return
    the files whose state changed. With ``memory``, then derive the memory chains documents
    take part in again."""
    was = documents_generation(store)
    with store.transaction():
        before = {r["record_id"]: tuple(r) for r in store.derived.all_record_states()}
        keys = store.derived.all_keys() if memory is not None else set()
        store.derived.clear()
        _new_generation(store)
        rebuild(WorkspacePolicy(store), store.policy_paths())
        after = {r["record_id"]: tuple(r) for r in store.derived.all_record_states()}
        store.reindex_all()
    if memory is not None:
        keys |= store.derived.all_keys()
        derive_document_keys(memory, store, keys)
        _in_step(memory, was, store)
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
