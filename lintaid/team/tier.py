"""What the daemon owns of the team tier: join, leave, the private clients, status, and the
worker's life. Nothing here imports psycopg until a team is joined; a daemon without a team
never loads it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Final

from lintaid.logs import get_logger
from lintaid.store.memory import MemoryStore
from lintaid_client import protocol

from . import config as team_config
from .config import TeamConfig, TeamError

log = get_logger("lintaid.team")

NEED_PSYCOPG: Final = ("the team tier needs psycopg: pip install 'lintaid[team]' (then "
                       "lintaid stop; the next command starts the daemon again)")
Submit = Callable[..., "Future[Any]"]


def _psycopg_missing() -> bool:
    import importlib.util

    return importlib.util.find_spec("psycopg") is None


class TeamTier:
    def __init__(self, root: Path, store: MemoryStore, submit: Submit,
                 clients: Callable[[], list[str]]) -> None:
        self.root = root
        self.store = store
        self.submit = submit
        self.clients = clients  # the agent clients' names, to check a private one
        self.config: TeamConfig | None = None
        self.worker: Any = None  # worker.Worker once running
        self.problem: str | None = None
        self._lock = threading.Lock()
        self._woken_at = 0

    # -- life cycle (daemon) -------------------------------------------------------------------
    def start(self) -> None:
        """At daemon start, after the writer: resume the team the project joined."""
        try:
            self.config = team_config.load(self.root)
        except TeamError as err:
            self.problem = str(err)
            log.error("team_config_unreadable", error=str(err))
            return
        if self.config is not None:
            self._configure(self.config).result(60)
            self._start_worker()

    def _start_worker(self) -> None:
        assert self.config is not None
        if _psycopg_missing():
            self.problem = NEED_PSYCOPG
            log.error("team_unavailable", error=NEED_PSYCOPG)
            return
        from .worker import Worker

        self.problem = None
        self.worker = Worker(self.config, self.store, self.submit)
        self.worker.start()

    def _configure(self, config: TeamConfig | None, *, backfill: bool = False) -> Future[int]:
        """Point the outbox at ``config`` (None: off) on the writer thread, so every write
        before it is covered by the backfill and every write after it is noted."""
        outbox = self.store.outbox

        def job() -> int:
            outbox.enabled = config is not None
            outbox.private_clients = frozenset(config.private_clients if config else ())
            outbox.member = config.member if config else None
            return outbox.backfill() if backfill else 0

        return self.submit(job, recall=False)

    def wake(self) -> None:
        """After each commit: wake the pusher when something was noted for it."""
        noted = self.store.outbox.noted
        if self.worker is not None and noted != self._woken_at:
            self._woken_at = noted
            self.worker.wake()

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.stop()

    # -- ops -----------------------------------------------------------------------------------
    def join(self, dsn: str, name: str, member: str | None,
             repo_key: str | None) -> dict[str, Any]:
        with self._lock:
            if _psycopg_missing():
                raise protocol.BadRequest(NEED_PSYCOPG)
            from . import pg, secret

            try:
                params = pg.parse_dsn(dsn)
            except ValueError as err:
                raise protocol.BadRequest(str(err), arg="dsn") from None
            password = params.pop("password", None)
            conninfo = pg.without_password(params)
            current = self.config
            if current is not None:
                if (current.dsn, current.name) == (conninfo, name):
                    return {**self.status(), "already": True}
                raise protocol.BadRequest(f"this project is in team {current.name!r} on "
                                          f"{current.dsn}; `lintaid team leave` first")
            try:
                key = team_config.repository_key(self.root, repo_key)
            except TeamError as err:
                raise protocol.BadRequest(str(err), arg="repo_key") from None
            where, pw = ("the address given", password) if password else secret.source(params)
            config = TeamConfig.new(conninfo, name, "", key)
            try:  # say a wrong address or password now, not in a log later
                server = pg.Server(pg.connect(conninfo, pw), name, key, config.origin)
                try:
                    server.ensure_schema()
                    config.member = server.role  # who the server says we are, not a claim
                finally:
                    server.close()
            except (pg.SchemaTooNew, pg.SchemaNeedsOwner) as err:
                raise protocol.BadRequest(str(err)) from None
            except (pg.Error, OSError) as err:
                raise protocol.RemoteError(
                    f"cannot use the team server {conninfo}: {pg.describe(err)} (password "
                    f"from {where}); nothing was changed", protocol.UNAVAILABLE) from None
            if member is not None and member != config.member:
                raise protocol.BadRequest(
                    f"the team server knows this address as the role {config.member!r}: a "
                    "member is the role it connects as (the server writes it into every "
                    "row), so join with your own role's address (`lintaid team add-member "
                    f"{member}`, run by the team's administrator, makes one)", arg="member")
            try:
                kept = secret.keep(params, password) if password else None  # it works: keep it
            except (TeamError, OSError) as err:
                raise protocol.BadRequest(f"the password cannot be kept: {err}; nothing was "
                                          "changed") from None
            team_config.save(self.root, config)
            self.config = config
            queued = self._configure(config, backfill=True).result(120)
            self._start_worker()
            log.info("team_joined", team=name, dsn=conninfo, member=config.member,
                     repo_key=key, queued=queued, password_kept_in=kept)
            return {**self.status(), "already": False, "queued": queued,
                    "password_kept_in": kept, "password_source": secret.source(params)[0]}

    def add_member(self, name: str, dsn: str | None) -> dict[str, Any]:
        """Create a member's role on the team server (the administrator's ``dsn``, else the
        address this project joined with) and give back the address it joins with."""
        if _psycopg_missing():
            raise protocol.BadRequest(NEED_PSYCOPG)
        from . import pg, secret

        if dsn is None:
            if self.config is None:
                raise protocol.BadRequest("give the administrator's address (--dsn): this "
                                          "project is in no team", arg="dsn")
            dsn = self.config.dsn
        try:
            params = pg.parse_dsn(dsn)
        except ValueError as err:
            raise protocol.BadRequest(str(err), arg="dsn") from None
        password = params.pop("password", None)
        conninfo = pg.without_password(params)
        where, pw = ("the address given", password) if password else secret.source(params)
        try:
            server = pg.Server(pg.connect(conninfo, pw), "", "", "")
            try:
                made, created, database_closed = server.add_member(name)
                group = pg.members_group(server.conn.info.dbname)
            finally:
                server.close()
        except (pg.SchemaTooNew, pg.SchemaNeedsOwner) as err:
            raise protocol.BadRequest(str(err)) from None
        except pg.Error as err:
            raise protocol.BadRequest(
                f"cannot add {name!r} on {conninfo}: {pg.describe(err)} (the role the "
                f"address names needs CREATEROLE; password from {where})") from None
        except OSError as err:
            raise protocol.RemoteError(f"cannot reach {conninfo}: {err}",
                                       protocol.UNAVAILABLE) from None
        log.info("team_member_added", member=name, dsn=conninfo, created=created, group=group,
                 database_closed=database_closed)
        member = {**params, "user": name, "password": made}
        reply: dict[str, Any] = {"member": name, "created": created, "dsn": pg.address(member),
                                 "group": group, "database_closed": database_closed}
        if not database_closed:
            reply["note"] = (
                f"only {group} (the members) may read or write the team's tables, but this "
                "role does not own the database, so who may connect to it is its owner's "
                "say: they can `REVOKE CONNECT ON DATABASE ... FROM PUBLIC` and "
                f"`GRANT CONNECT ... TO {group}`")
            log.warning("team_database_open", dsn=conninfo, group=group)
        return reply

    def leave(self) -> dict[str, Any]:
        with self._lock:
            config = self.config
            if config is None:
                raise protocol.BadRequest("this project is in no team")
            if self.worker is not None:
                self.worker.stop()
                self.worker = None
            outbox = self.store.outbox
            key = config.cursor_key

            def job() -> int:
                outbox.enabled = False
                dropped = outbox.clear()
                outbox.set_state(key, None)
                return dropped

            dropped = self.submit(job, recall=False).result(60)
            team_config.remove(self.root)
            self.config = None
            self.problem = None
            log.info("team_left", team=config.name, undelivered=dropped)
            return {"left": config.name, "undelivered": dropped}

    def set_private(self, client: str, share: bool) -> dict[str, Any]:
        with self._lock:
            if client not in self.clients():
                raise protocol.BadRequest(f"'client' must be one of {', '.join(self.clients())}"
                                          f", not {client!r}", arg="client")
            if self.config is None:
                raise protocol.BadRequest("this project is in no team; nothing is shared "
                                          "until `lintaid team join`")
            private = set(self.config.private_clients)
            if share:
                private.discard(client)
            else:
                private.add(client)
            self.config.private_clients = sorted(private)
            team_config.save(self.root, self.config)
            self._configure(self.config).result(60)
            return {"client": client, "private": not share,
                    "private_clients": self.config.private_clients}

    def status(self) -> dict[str, Any]:
        config = self.config
        if config is None:
            return {"joined": False, "problem": self.problem}
        pending, oldest = self.store.outbox.depth()
        snap: dict[str, Any] = self.worker.snapshot() if self.worker is not None else {
            "state": "off", "connected": False, "last_error": self.problem}
        now = time.time()
        return {
            "joined": True, **team_config.public(config), "problem": self.problem,
            "state": snap.get("state"), "connected": snap.get("connected", False),
            "schema": snap.get("schema"), "password_source": snap.get("password_source"),
            "last_error": snap.get("last_error"), "last_error_at": snap.get("last_error_at"),
            "offline_since": snap.get("offline_since"),
            "push": {"pending": pending,
                     "lag_s": round(now - oldest, 3) if oldest is not None else 0.0,
                     "pushed": snap.get("pushed", 0), "withheld": snap.get("withheld", 0),
                     "last_at": snap.get("last_push_at")},
            "pull": {"behind": snap.get("behind"), "lag_s": snap.get("pull_lag_s"),
                     "pulled": snap.get("pulled", 0), "skipped": snap.get("skipped", 0),
                     "refused": snap.get("refused", 0), "last_at": snap.get("last_pull_at"),
                     "last_event_lag_s": snap.get("last_event_lag_s"),
                     "cursor": int(self.store.outbox.state(config.cursor_key) or 0)},
            "quarantine": self.quarantine(),
        }

    def quarantine(self, limit: int = 5) -> dict[str, Any]:
        """The pulled events refused alone: how many are kept, and the newest few."""
        count, newest = self.store.outbox.quarantined(limit)
        return {"count": count, "newest": newest}
