"""A throwaway PostgreSQL server for the team tier's tests and benchmark.

It runs the PostgreSQL binaries this machine has (Debian's ``postgresql`` package puts them
in ``/usr/lib/postgresql/<version>/bin``; ``LINTAID_PG_BINDIR`` names another folder): initdb
into a fresh folder under /tmp (as the ``postgres`` user when we are root, since initdb refuses
root), password authentication (scram) for everything, listening on 127.0.0.1 only at a free
port. ``stop`` and ``start`` take it down and up again on the same port (outage tests).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

SUPERUSER = "postgres"
ROLE = "lintaid"  # the team's administrator (``lintaid team add-member`` runs as it)


def find_bindir() -> Path | None:
    named = os.environ.get("LINTAID_PG_BINDIR")
    candidates = [Path(named)] if named else []
    try:
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True,
                             timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            candidates.append(Path(out.stdout.strip()))
    except (OSError, subprocess.SubprocessError):
        pass
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin"),
                      key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
                      reverse=True)
    candidates.extend(versions)
    for folder in candidates:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgServer:
    def __init__(self, bindir: Path, *, fast: bool = True) -> None:
        self.bindir = bindir
        self.fast = fast
        self.base = Path(tempfile.mkdtemp(prefix="lintaid-pg-"))
        self.data = self.base / "data"
        self.sockets = self.base / "sockets"
        self.log = self.base / "server.log"
        self.port = _free_port()
        self.superuser_password = os.urandom(12).hex()
        self.password = "team-" + os.urandom(12).hex()  # the role lintaid connects as
        self._user: str | None = None
        if os.geteuid() == 0:
            try:
                entry = pwd.getpwnam(SUPERUSER)
            except KeyError:
                raise RuntimeError("running as root and there is no 'postgres' user to run "
                                   "initdb as (install Debian's postgresql package)") from None
            self._user = SUPERUSER
            self._uid, self._gid = entry.pw_uid, entry.pw_gid
        self.running = False
        self._databases = 0

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([str(self.bindir / args[0]), *args[1:]], capture_output=True,
                              text=True, cwd=self.base, user=self._user, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({proc.returncode}): {proc.stderr.strip()}"
                               f"\n{self._log_tail()}")
        return proc

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def init(self) -> PgServer:
        self.sockets.mkdir()
        pwfile = self.base / "pwfile"
        pwfile.write_text(self.superuser_password + "\n")
        if self._user is not None:
            for path in (self.base, self.sockets, pwfile):
                os.chown(path, self._uid, self._gid)
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=scram-sha-256",
                  f"--pwfile={pwfile}", "-E", "UTF8", "--no-sync", "--locale=C")
        pwfile.unlink()
        self.start()
        with self.admin() as conn:
            # The team's administrator: owns the tables, creates the members' roles.
            conn.execute(f"CREATE ROLE {ROLE} LOGIN CREATEROLE PASSWORD '{self.password}'")
        return self

    def start(self) -> None:
        if self.running:
            return
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.sockets}"
        if self.fast:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                  "-o", options, "start")
        self.running = True

    def stop(self) -> None:
        if not self.running:
            return
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")
        self.running = False

    def destroy(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.base, ignore_errors=True)

    # -- connecting ------------------------------------------------------------------------
    def dsn(self, database: str, *, password: bool = True) -> str:
        secret = f":{self.password}" if password else ""
        return f"postgresql://{ROLE}{secret}@127.0.0.1:{self.port}/{database}"

    def admin(self, database: str = "postgres") -> Any:
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user=SUPERUSER,
                               password=self.superuser_password, dbname=database,
                               autocommit=True)

    def create_database(self) -> str:
        """A fresh database the lintaid role owns; its name."""
        self._databases += 1
        name = f"team_{os.getpid()}_{self._databases}"
        with self.admin() as conn:
            conn.execute(f"CREATE DATABASE {name} OWNER {ROLE}")
        return name


def password_of(dsn: str) -> str:
    """The password a libpq address holds."""
    from psycopg.conninfo import conninfo_to_dict

    return str(conninfo_to_dict(dsn)["password"])


def start_server(*, fast: bool = True) -> PgServer | str:
    """A running server, or why there can be none here."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[test]' or '.[team]')"
    bindir = find_bindir()
    if bindir is None:
        return ("no PostgreSQL binaries (initdb, pg_ctl) found: install Debian's postgresql "
                "package, or name the folder in LINTAID_PG_BINDIR")
    try:
        server = PgServer(bindir, fast=fast)
    except RuntimeError as err:
        return str(err)
    try:
        return server.init()
    except Exception as err:
        server.destroy()
        return f"the PostgreSQL server could not start: {err}"
