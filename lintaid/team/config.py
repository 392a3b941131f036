"""The team settings of one project store, in ``.lint-ai/team.json``; and what names the
repository and the member.

The file holds the server's address without its password (``secret`` says where that comes
from), the team's name, this member and machine, the repository key and this store's own id
in the team (``origin``: two clones on one machine are two origins), and the agent clients
whose captures stay private. It is written atomically, 0600, like every file there.
"""

from __future__ import annotations

import json
import re
import socket
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lintaid.capture import git
from lintaid.files import write_atomic
from lintaid_client import paths

FILE = "team.json"


class TeamError(Exception):
    """A team request that cannot be met; the message says why and what to do."""


@dataclass
class TeamConfig:
    dsn: str  # libpq connection string, never with a password
    name: str
    member: str
    machine: str
    repo_key: str
    origin: str  # this store's id in the team
    private_clients: list[str] = field(default_factory=list)
    joined_at: float = 0.0

    @property
    def space(self) -> str:
        """The partition every clone of this repository in this team shares."""
        return f"{self.name}/{self.repo_key}"

    @property
    def cursor_key(self) -> str:
        """The pull cursor's key in the store's ``team_state``."""
        return f"cursor:{self.space}"

    @classmethod
    def new(cls, dsn: str, name: str, member: str, repo_key: str) -> TeamConfig:
        return cls(dsn=dsn, name=name, member=member, machine=socket.gethostname() or "unknown",
                   repo_key=repo_key, origin=uuid.uuid4().hex, joined_at=time.time())


def path(root: Path) -> Path:
    return paths.state_dir(root) / FILE


def load(root: Path) -> TeamConfig | None:
    """The project's team settings, or None when it has joined no team. A file lintaid cannot
    read is a TeamError naming it."""
    target = path(root)
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise TeamError(f"{target} cannot be read ({err}); `lintaid team leave` removes "
                        "it") from None
    try:
        return TeamConfig(**{k: data[k] for k in TeamConfig.__dataclass_fields__ if k in data})
    except TypeError as err:
        raise TeamError(f"{target} is not a team file lintaid knows ({err}); `lintaid team "
                        "leave` removes it") from None


def save(root: Path, config: TeamConfig) -> None:
    target = path(root)
    write_atomic(target, json.dumps(asdict(config), indent=2))


def remove(root: Path) -> bool:
    try:
        path(root).unlink()
        return True
    except FileNotFoundError:
        return False


# -- the repository and the member ------------------------------------------------------------
_SCP = re.compile(r"^(?:[\w.-]+@)?([\w.-]+):(?!//)(.+)$")


def normalize_remote(url: str) -> str:
    """``git@github.com:Org/Repo.git``, ``https://user@github.com/Org/Repo`` and
    ``ssh://git@github.com/org/repo.git`` are one repository: ``github.com/org/repo``."""
    text = url.strip()
    scp = _SCP.match(text)
    if scp and "://" not in text:
        host, rest = scp.group(1), scp.group(2)
    else:
        rest = re.sub(r"^[a-z+]+://", "", text, flags=re.I)
        rest = rest.split("@", 1)[-1] if "@" in rest.split("/", 1)[0] else rest
        host, _, rest = rest.partition("/")
        host = host.split(":", 1)[0]  # a port is not part of the repository
    rest = rest.strip("/")
    rest = rest[:-4] if rest.endswith(".git") else rest
    return f"{host.lower()}/{rest.lower()}"


def repository_key(root: Path, requested: str | None = None) -> str:
    """What every clone of the project's repository shares, and no other repository has:
    its root commit (``git:<sha>``); with ``requested`` ``remote``, origin's URL
    (``remote:<host/path>``); any other ``requested`` value is used as given (``key:...``).
    Without commits the remote is used; without either it is a TeamError."""
    if requested and requested != "remote":
        return f"key:{requested.strip()}"
    if requested != "remote":
        roots = git.root_commits(str(root))
        if roots:
            return f"git:{roots[0]}"
    url = git.remote_url(str(root))
    if url:
        return f"remote:{normalize_remote(url)}"
    raise TeamError(f"{root} has no git commit and no remote 'origin' to tell its repository "
                    "by; commit once, or pass --repo-key NAME (the same in every clone)")


def public(config: TeamConfig) -> dict[str, Any]:
    """What status shows of the settings."""
    return {"team": config.name, "dsn": config.dsn, "member": config.member,
            "machine": config.machine, "repo_key": config.repo_key, "origin": config.origin,
            "private_clients": list(config.private_clients), "joined_at": config.joined_at}
