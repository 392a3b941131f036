"""Workspace hygiene: lintaid never indexes the agent clients' configuration (its own hooks
and MCP entries), their transcripts or its own state; files that are mostly secrets are
skipped; every other file is redacted, with the one redactor, before it is stored or indexed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lintaid.integrations import registry
from lintaid.workspace.ignore import IgnoreRules
from lintaid.workspace.secrets import is_secret_file, mostly_secrets, redact_keeping_lines
from lintaid_client import paths
from tests.conftest import lintaid_env, run_hook, run_json, start_daemon, stop_daemon, wait_for
from tests.test_e2e_spine import git_init
from tests.transcripts import FAKE_SECRETS

WATCH = lintaid_env(LINTAID_NO_WATCH="0")
AWS_ID, AWS_SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
DB_PASSWORD = "s3cr3tPassw0rd"
KEY_BLOCK = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7kVbQzxyzzy0123456789abcdef\n"
             "b2NhbGhvc3QxEzARBgNVBAoMCkFjbWUgSW5jLjEWMBQGA1UECwwN\n"
             "-----END RSA PRIVATE KEY-----")


def test_secret_file_names() -> None:
    for name in (".env", "config/.env.production", ".envrc", "certs/server.pem", "tls.key",
                 "home/.ssh/id_rsa", "id_ed25519.pub", "gcp/service-account.json",
                 "credentials.json", "deploy/github-token.json", ".netrc"):
        assert is_secret_file(name), name
    for name in ("environment.md", "docs/keys.md", "package.json", "src/env.py",
                 "tsconfig.json", "monkey.txt"):
        assert not is_secret_file(name), name


def test_redaction_keeps_the_line_numbers() -> None:
    text = f"line 1\n{KEY_BLOCK}\nline 6 password = {DB_PASSWORD}\nline 7\n"
    red = redact_keeping_lines(text)
    assert red.count("\n") == text.count("\n")
    lines = red.split("\n")
    assert lines[0] == "line 1" and "[REDACTED" in lines[1]
    assert lines[5].startswith("line 6 password =") and DB_PASSWORD not in red
    assert lines[6] == "line 7"
    assert "MIIEow" not in red and "b2NhbGhv" not in red
    assert redact_keeping_lines("nothing secret\n") == "nothing secret\n"
    # Mostly secrets: a key file; a service account's JSON; not a README naming one secret.
    assert mostly_secrets(KEY_BLOCK, redact_keeping_lines(KEY_BLOCK))
    account = json.dumps({"type": "service_account", "private_key_id": "f" * 40,
                          "private_key": "-----BEGIN PRIVATE KEY-----\n"
                          + "\n".join(["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" * 2] * 25)
                          + "\n-----END PRIVATE KEY-----\n",
                          "client_email": "deploy@acme-prod.iam.gserviceaccount.com"}, indent=1)
    assert mostly_secrets(account, redact_keeping_lines(account))
    readme = "# Deploy\n\nRun make deploy.\nIt needs the token.\n" + \
        f"export DB_PASS={DB_PASSWORD}\nThen check the logs.\n"
    assert not mostly_secrets(readme, redact_keeping_lines(readme))


def test_every_client_names_its_configuration_and_the_rules_keep_it_out(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    named = {name: client.config_files(root) for name, client in registry.CLIENTS.items()}
    assert all(named.values())  # every client behind the seam names its files
    inside = [p for files in named.values() for p in files
              if p.is_absolute() and str(p).startswith(str(root))]
    for rel in (".claude/settings.json", ".claude/settings.local.json", ".mcp.json",
                ".codex", ".gemini/settings.json", ".cursor/hooks.json", ".cursor/mcp.json",
                ".claude/settings.json.lintaid.bak"):
        assert root / rel in inside, rel
    rules = IgnoreRules(root, excluded=[p for files in named.values() for p in files])
    for rel in (".claude/settings.json", ".mcp.json", ".codex/hooks.json",
                ".codex/config.toml", ".cursor/mcp.json", ".gemini/settings.json", ".env"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}\n")
    (root / ".claude" / "commands").mkdir()
    (root / ".claude" / "commands" / "review.md").write_text("Review the diff.\n")
    (root / "README.md").write_text("hello\n")
    assert rules.list_files() == [".claude/commands/review.md", "README.md"]
    assert rules.ignored([".mcp.json", ".codex/x", "README.md", ".env.local"]) == {
        ".mcp.json", ".codex/x", ".env.local"}


@pytest.fixture
def dirty(project: Path) -> Path:
    """A project as people have them: agent settings with lintaid's hooks, secrets in files."""
    git_init(project)
    files = {
        ".claude/settings.json": json.dumps({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "lintaid-hook claude-code Stop", "timeout": 10}]}]}},
            indent=2),
        ".mcp.json": json.dumps({"mcpServers": {"lintaid": {"command": "lintaid-mcp"}}}),
        ".env": f"DB_PASSWORD={DB_PASSWORD}\nAWS_SECRET_ACCESS_KEY={AWS_SECRET}\n",
        "deploy/server.pem": KEY_BLOCK + "\n",
        "config/settings.py": ("# Database settings\nDB_URL = "
                               f'"postgres://admin:{DB_PASSWORD}@db.internal:5432/app"\n'
                               "POOL_TIMEOUT = 30  # seconds before a pooled connection fails\n"),
        "docs/deploy.md": ("# Deploy\n\nThe deploy timeout is 600 seconds.\n\n"
                           + "".join(f"Step {n}: run the stage-{n} checks, then wait for the "
                                     "dashboard to go green before the next one.\n"
                                     for n in range(1, 9))
                           + f"Use the key {AWS_ID} with secret {AWS_SECRET} for the bucket.\n"
                           f"{KEY_BLOCK}\nThe gateway timeout is 30 seconds.\n"),
    }
    for rel, text in files.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    start_daemon(project, env=WATCH)
    wait_for(lambda: run_json(project, "status", env=WATCH).get("workspace", {}).get("ready"),
             timeout=30)
    yield project
    stop_daemon(project, env=WATCH)


@pytest.mark.slow
def test_configuration_and_secrets_never_reach_the_index_or_the_agent(dirty: Path) -> None:
    def found(query: str) -> list[dict]:
        return run_json(dirty, "search", query, "--store", "workspace", "--top-k", "20",
                        env=WATCH)["results"]

    indexed = {h["path"] for q in ("timeout", "database settings", "deploy key bucket",
                                   "lintaid hooks command", "private key")
               for h in found(q)}
    assert "config/settings.py" in indexed and "docs/deploy.md" in indexed
    assert not indexed & {".claude/settings.json", ".mcp.json", ".env", "deploy/server.pem"}
    # A file that is mostly code keeps its lines, its secrets gone.
    [settings] = [h for h in found("database settings") if h["path"] == "config/settings.py"]
    assert "postgres://admin:" in settings["content"] and DB_PASSWORD not in settings["content"]
    assert "POOL_TIMEOUT = 30" in settings["content"]
    # A key block folded into one marker leaves its lines behind: line numbers hold.
    deploy = [h for h in found("gateway timeout") if h["path"] == "docs/deploy.md"]
    assert deploy and AWS_SECRET not in json.dumps(deploy) and AWS_ID not in json.dumps(deploy)
    with open(dirty / "docs" / "deploy.md") as fh:
        gateway_line = 1 + fh.read().split("\n").index("The gateway timeout is 30 seconds.")
    assert any(h["start_line"] <= gateway_line <= h["end_line"] for h in deploy)

    # What the agent is given for a prompt about a timeout holds neither.
    out = run_hook(dirty, "UserPromptSubmit", {"session_id": "s",
                                                  "prompt": "What timeout should we use?"},
                      env=WATCH)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "settings.json" not in context and '"timeout": 10' not in context
    for secret in (DB_PASSWORD, AWS_SECRET, AWS_ID, "MIIEow", *FAKE_SECRETS[:3]):
        assert secret not in context

    stop_daemon(dirty, env=WATCH)  # everything flushed to disk
    for path in paths.state_dir(dirty).rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for secret in (DB_PASSWORD, AWS_SECRET, AWS_ID, "MIIEow", "b2NhbGhv"):
                assert secret.encode() not in data, (secret, path)
            assert b'"timeout": 10' not in data, path
