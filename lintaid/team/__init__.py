"""The team tier: a project's memory shared with teammates through a PostgreSQL server.

The local daemon stays the fast path: hooks, search and injection talk only to it and never
wait on the network. Shared writes are noted in the store's outbox in the same SQLite
transaction (``lintaid.store.outbox``); a background worker pushes the outbox to the server
idempotently and pulls the other members' events by a cursor, woken by LISTEN/NOTIFY; pulled
events go through the writer and the one policy like any local write.

- ``config``: the team settings in ``.lint-ai/team.json`` (never a password), the
  repository key every clone shares, the member's name;
- ``secret``: where the server's password comes from (environment, keyring, pgpass file);
- ``pg``: the server's schema, its versioned migrations, push, pull and LISTEN (the only
  module that imports psycopg, and only once a team is joined);
- ``apply``: pulled events into the local store (writer thread);
- ``worker``: the replication threads; ``tier``: join, leave, status, what the daemon owns.
"""
