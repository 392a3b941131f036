"""The one redactor: strip credentials from text and JSON-like values before anything is written.

Used by the daemon (content, metadata, captures, logs) and by the shims (the spool), so it is
standard library only and cheap to import: no pattern is compiled until the first call.

Four passes, each skipped unless a substring test (``in``, far cheaper than a regex) says it
could match, and each linear in the input (no nested quantifiers, bounded look-arounds):

1. PEM private key blocks (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP): BEGIN through END, or,
   when END is missing, through the key-material lines that follow;
2. formats with a recognisable prefix or shape (cloud keys, VCS and chat tokens, JWTs, URL
   passwords, ``Authorization`` headers, Azure keys and SAS signatures, Slack webhooks ...),
   plus a 40-character AWS secret key when "aws", "secret" or an access key id is near;
3. assignments whose *name* says secret (``DB_PASS=``, ``"password": "..."``, ``api_key: ...``,
   ``X-Api-Key: ...``, ``--token X``, ``<password>..</password>``): only the value goes;
4. prose: a random-looking word right after a secret word ("the password is hunter2",
   "twilio auth token 9f8e...").

Markers keep the text readable and say what went: ``[REDACTED:aws-secret-key]`` where the format
tells the kind, ``[REDACTED]`` where the name beside it already does (``DB_PASS=[REDACTED]``).
Git SHAs, UUIDs, paths, URLs without credentials and base64 blobs are left alone on their own.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing this module loads nothing but re and functools
    from collections.abc import Callable
    from typing import Any

    Match = re.Match[str]

REDACTED = "[REDACTED]"
_MARK = "[REDACTED"


def marker(kind: str | None) -> str:
    """The replacement text for a secret of ``kind`` (``None``: the kind goes without saying)."""
    return f"[REDACTED:{kind}]" if kind else REDACTED


# -- value shapes ----------------------------------------------------------------------------
_SYMBOLS = frozenset("!@#$%^&*+=?~")


def _classes(s: str) -> tuple[bool, bool, bool, bool]:
    """(has digit, has upper, has lower, has a password symbol)."""
    digit = upper = lower = symbol = False
    for ch in s:
        if ch.isdigit():
            digit = True
        elif ch.isupper():
            upper = True
        elif ch.islower():
            lower = True
        elif ch in _SYMBOLS:
            symbol = True
    return digit, upper, lower, symbol


def _mixed(s: str) -> bool:
    """Digits, upper and lower case: random-looking, unlike ``sk-learn-compatible-names``."""
    digit, upper, lower, _ = _classes(s)
    return digit and upper and lower


def _cased(s: str) -> bool:
    _, upper, lower, _ = _classes(s)
    return upper and lower


def _credential_like(s: str) -> bool:
    """A bearer credential rather than a word: digits and letters, or long and mixed case."""
    digit, upper, lower, _ = _classes(s)
    return (digit and (upper or lower)) or (len(s) >= 20 and upper and lower)


def _pathish(s: str) -> bool:
    return (
        "/" in s or "\\" in s or s.startswith(("[REDACTED", "~", "."))
        or _FILENAME.fullmatch(s) is not None or _VERSION.fullmatch(s) is not None
    )


def _strong(s: str) -> bool:
    """Random enough to be a secret with no copula before it: long, digits and letters.

    Not a bare SHA-1 or SHA-256 digest: "token refresh landed in 9fceb02..." names a commit.
    """
    if len(s) < 16 or _pathish(s) or (len(s) in (40, 64) and _HEX_DIGEST.fullmatch(s)):
        return False
    digit, upper, lower, _ = _classes(s)
    return digit and (upper or lower)


def _weak(s: str) -> bool:
    """After "is"/"="/":": a password-ish word (``hunter2``, ``zzq-998877``, ``p@ss!word``)."""
    if len(s) < 6 or _pathish(s) or "://" in s:
        return False
    digit, upper, lower, symbol = _classes(s)
    return (digit and (upper or lower)) or (symbol and (upper or lower))


_CODE_WORDS = frozenset(
    "none null nil true false undefined str string bytes int integer bool boolean any object "
    "optional secretstr secretbytes await new const let var self this cls required default "
    "env environ getenv".split()
)
_OPERATORS = frozenset("+-*/|&%^")
_STRING_PREFIXES = frozenset(("f", "b", "r", "u", "rb", "br", "fr", "rf"))
_CONFIG_ROOTS = frozenset(
    "self this cls config cfg conf settings os env process args options opts params ctx "
    "request req credentials creds secrets vault keyring".split()
)


def _placeholder(value: str) -> bool:
    """Not a secret itself: empty, a type or keyword, a variable reference, a mask, or already
    redacted."""
    if not value.strip():
        return True
    low = value.lower()
    if low in _CODE_WORDS or value[0] in "$%<{" or _MARK in value:
        return True  # $VAR, %(x)s, <your-token>, {{ secret }}; a marker: already redacted
    if value[0] == "!" and value[1:].isalpha():
        return True  # a YAML tag: !vault, !Ref
    if low.startswith(("os.environ", "process.env", "getenv", "env(", "env.", "import.meta.env")):
        return True
    if _VERSION.fullmatch(value):
        return True  # 1.3.6.1.5.5.7.3.1, 2.4.0
    return set(low) <= set("*x.-_ ")  # ******, xxxx, ...


def _code_reference(value: str) -> bool:
    """``password=password``, ``token=self.token``, ``key=settings.API_KEY``: code, not a value."""
    if _IDENT_CHAIN.fullmatch(value) is None:
        return False
    parts = value.split(".")
    if len(parts) > 1:
        return is_secret_key(parts[-1]) or parts[0].lower() in _CONFIG_ROOTS
    # A lone name: code names it like code (``db_password``, ``apiKey``, ``SECRET_KEY``); a
    # value such as ``Sup3rSecret9`` has digits inside or capitals like a password.
    if any(ch.isdigit() for ch in value):
        return False
    return is_secret_key(value) and (value.islower() or value.isupper() or value[0].islower())


# -- secret key names ------------------------------------------------------------------------
# Substrings of the name with separators removed ("DB_PASSWORD" -> "dbpassword").
_COMPACT_SECRETS = (
    "password", "passwd", "passphrase", "passcode", "apikey", "apitoken", "privatekey", "privkey",
    "accesskey", "accountkey", "secretkey", "clientsecret", "connectionstring", "connstr",
    "authtoken", "accesstoken", "refreshtoken", "sessiontoken", "bearertoken", "idtoken",
    "credential", "authorization", "cookie", "webhookurl", "amzsignature",
)
# Whole words that make the name secret wherever they sit.
_SECRET_WORDS = frozenset(("secret", "secrets", "token", "creds", "dsn", "sas"))
# A personal access token by name: ``GITHUB_PAT`` (a lone ``pat`` is usually a pattern).
_PAT_QUALIFIERS = frozenset("github gitlab gh gl ado azure devops bitbucket personal".split())
# ``*_key`` is secret when the word before says so (``api_key``, ``DD_APP_KEY``); ``cache_key``,
# ``primary_key`` and ``public_key`` are not.
_KEY_QUALIFIERS = frozenset(
    "api access secret private signing sign encryption encrypt master account app application "
    "consumer client auth session service storage deploy ssh gpg pgp license licence sas "
    "subscription admin webhook hmac jwt crypto shared root server partner write ingest live "
    "test routing integration".split()
)
# Last words that make the name a reference, a setting or a count, not the secret itself.
_NOT_SECRET_LAST = frozenset(
    "type types url uri endpoint endpoints count counts limit limits budget usage length len size "
    "ttl expiry expires expiration at in file files path paths dir method methods mode provider "
    "providers scheme enabled disabled required policy name names arn env var field prefix hint "
    "label format version rotation reset min max strength domain host port secure age samesite "
    "httponly".split()
)
# Words that make ``*token*`` a usage figure (``max_tokens``, ``input_token_count``).
_TOKEN_COUNTERS = frozenset(
    "max num n total input output prompt completion cache reasoning used remaining".split()
)


def _words(name: str) -> list[str]:
    words: list[str] = []
    for part in _NAME_SPLIT.split(name):
        words.extend(w.lower() for w in _CAMEL_SPLIT.split(part) if w)
    return words


@functools.lru_cache(maxsize=4096)
def is_secret_key(name: str) -> bool:
    """True for a mapping key or variable name whose value is a credential.

    Case- and separator-insensitive: ``api_key``, ``apiKey``, ``X-Api-Key``, ``DB_PASS``,
    ``client_secret``, ``connectionString``, ``SENTRY_DSN``, ``Cookie``; not ``max_tokens``,
    ``token_count``, ``password_reset_url``, ``primary_key`` or ``session_id``.
    """
    if not name or len(name) > 200:
        return False
    _ensure_compiled()
    words = _words(name)
    if not words:
        return False
    last = words[-1]
    compact = "".join(words)
    if "webhookurl" in compact:
        return True
    if last in _NOT_SECRET_LAST:
        return False
    if ("token" in words or "tokens" in words) and any(w in _TOKEN_COUNTERS for w in words):
        return any(p in compact for p in _COMPACT_SECRETS if "token" not in p)
    if any(p in compact for p in _COMPACT_SECRETS):
        return True
    if "secret" in compact and "secretar" not in compact:  # not "secretary"
        return True
    if any(w in _SECRET_WORDS for w in words) or last in ("pwd", "auth"):
        return True
    if last == "pass" and len(words) > 1:  # DB_PASS, SMTP_PASS; not pass, pass_rate
        return True
    if last == "pat" and len(words) > 1 and words[-2] in _PAT_QUALIFIERS:  # not GROUP_PAT
        return True
    return last in ("key", "keys") and len(words) > 1 and words[-2] in _KEY_QUALIFIERS


# -- the rules -------------------------------------------------------------------------------
# A format: (kind, case-sensitive anchors, lower-case anchors, pattern, check). It runs only
# when one of its anchors occurs in the text (in its lower-cased copy for the second set). A
# pattern's named group ``s`` is the secret (the rest of the match is kept); without it the whole
# match goes. ``check`` (on the secret) can veto a match. Patterns start with their literal
# prefix, not ``\b`` (see ``_format_pass``); the kind "" marks a plain ``[REDACTED]``.
_FORMATS: tuple[tuple[str, tuple[str, ...], tuple[str, ...], str, Callable[[str], bool] | None],
                ...] = (
    ("anthropic-key", ("sk-ant-",), (), r"sk-ant-[A-Za-z0-9_\-]{20,}", None),
    ("openai-key", ("sk-",), (),
     r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", _mixed),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), (),
     r"gh[pousr]_[A-Za-z0-9]{20,}", None),
    ("github-token", ("github_pat_",), (), r"github_pat_[A-Za-z0-9_]{22,}", None),
    ("gitlab-token", ("gl",), (),
     r"gl(?:pat|dt|rt|ptt|cbt|imt|soat|ffct)-[A-Za-z0-9_\-]{16,}", None),
    ("slack-token", ("xox",), (), r"xox[abposre]-[A-Za-z0-9\-]{8,}", None),
    ("slack-token", ("xapp-",), (), r"xapp-\d-[A-Za-z0-9\-]{10,}", None),
    ("slack-webhook", ("hooks.slack.com/",), (),
     r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/\-]{8,})", None),
    ("discord-webhook", ("/api/webhooks/",), (),
     r"discord(?:app)?\.com/api/webhooks/(?P<s>\d+/[A-Za-z0-9_\-]{20,})", None),
    ("stripe-key", ("k_live_", "k_test_", "whsec_"), (),
     r"(?:[sr]k_(?:live|test)|whsec)_[A-Za-z0-9]{8,}", None),
    ("google-api-key", ("AIza",), (), r"AIza[0-9A-Za-z_\-]{30,}", None),
    ("google-oauth-token", ("ya29.",), (), r"ya29\.[0-9A-Za-z_\-]{16,}", None),
    ("huggingface-token", ("hf_",), (), r"hf_[A-Za-z0-9]{20,}", _cased),
    ("npm-token", ("npm_",), (), r"npm_[A-Za-z0-9]{20,}", _cased),
    ("pypi-token", ("pypi-",), (), r"pypi-Ag[A-Za-z0-9_\-]{40,}", None),
    ("sendgrid-key", ("SG.",), (), r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", None),
    ("twilio-api-key", ("SK",), (), r"SK[0-9a-fA-F]{32}\b", None),
    ("twilio-account-sid", ("AC",), (), r"AC[0-9a-fA-F]{32}\b", None),
    ("mailgun-key", ("key-",), (), r"key-[0-9a-f]{32}\b", None),
    ("vault-token", ("hvs.", "hvb.", "hvr."), (), r"hv[sbr]\.[A-Za-z0-9_\-]{24,}", None),
    ("databricks-token", ("dapi",), (), r"dapi[0-9a-f]{32}(?:-\d+)?\b", None),
    ("digitalocean-token", ("_v1_",), (), r"do[opr]_v1_[0-9a-f]{64}\b", None),
    ("shopify-token", ("shp",), (), r"shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}\b", None),
    ("postman-key", ("PMAK-",), (), r"PMAK-[0-9a-fA-F]{24}-[0-9a-fA-F]{34}\b", None),
    ("age-secret-key", ("AGE-SECRET-KEY-",), (), r"AGE-SECRET-KEY-1[0-9A-Z]{58}\b", None),
    ("telegram-bot-token", (":AA",), (), r"\d{8,10}:AA[A-Za-z0-9_\-]{33}\b", None),
    ("jwt", ("eyJ",), (), r"eyJ[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]*", None),
    # Formats detect-secrets knows (its plugins: artifactory, mailchimp, square_oauth, discord)
    # and other vendors' prefixed tokens.
    ("artifactory-token", ("AKC",), (), r"AKC[a-zA-Z0-9]{60,}\b", None),
    ("mailchimp-key", ("-us",), (), r"(?<![0-9a-z])[0-9a-f]{32}-us[0-9]{1,2}\b", None),
    ("square-token", ("sq0",), (), r"sq0(?:atp|csp|idp)-[0-9A-Za-z_\-]{22,43}", None),
    ("square-token", ("EAAA",), (), r"EAAA[A-Za-z0-9_\-+=]{60}\b", _mixed),
    ("discord-bot-token", (), ("discord",),
     r"(?<![A-Za-z0-9_\-.])[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}\b", _mixed),
    ("atlassian-token", ("ATATT",), (), r"ATATT3[A-Za-z0-9_\-=]{100,}", None),
    ("linear-key", ("lin_api_",), (), r"lin_api_[A-Za-z0-9]{40}\b", None),
    ("doppler-token", ("dp.",), (), r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,}", None),
    ("grafana-token", ("glsa_", "glc_"), (),
     r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})", None),
    ("supabase-token", ("sbp_",), (), r"sbp_[a-f0-9]{40}\b", None),
    ("planetscale-token", ("pscale_",), (),
     r"pscale_(?:pw|tkn|oauth)_[A-Za-z0-9_\-.]{32,}", None),
    ("sentry-token", ("sntry",), (), r"sntry[su]_[A-Za-z0-9+/=_]{40,}", None),
    ("newrelic-key", ("NRAK-",), (), r"NRAK-[A-Z0-9]{27}\b", None),
    ("dropbox-token", ("sl.",), (), r"sl\.[A-Za-z0-9_\-]{130,}", None),
    ("aws-access-key-id", ("AKIA", "ASIA", "ABIA", "ACCA"), (),
     r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", None),
    ("azure-account-key", (), ("accountkey=", "sharedaccesskey="),
     r"(?i)\b(?:Account|SharedAccess)Key=(?P<s>[A-Za-z0-9+/]{16,}={0,2})", None),
    ("azure-sas-signature", (), ("sig=",),
     r"(?i)(?<=[?&;])sig=(?P<s>[A-Za-z0-9%+/_\-]{16,}(?:={1,2}|(?:%3d){1,2})?)", None),
    # curl -u user:PASSWORD, --user user:PASSWORD
    ("", ("-u ", "--user"), (),
     r"(?:-u|--user)[ \t=]+[\"']?[^\s:\"'@]{1,128}:(?P<s>[^\s\"'@]{1,256})", None),
    # URL userinfo: scheme://user:PASSWORD@host keeps the user and the host.
    ("", ("://",), (), r"://[^/\s:@\"'<>]{0,256}:(?P<s>[^/\s@?#\"'<>]{1,256})(?=@)", None),
)


# -- compiled state (filled on first use) ----------------------------------------------------
_compiled: list[tuple[tuple[str, ...], tuple[str, ...], Callable[[str], str]]] | None = None


def _ensure_compiled() -> None:
    global _compiled
    if _compiled is None:
        _compiled = _compile()


def _compile() -> list[tuple[tuple[str, ...], tuple[str, ...], Callable[[str], str]]]:
    global _NAME_SPLIT, _CAMEL_SPLIT, _FILENAME, _VERSION, _IDENT_CHAIN, _HEX_DIGEST
    global _ESCAPED_QUOTED
    _NAME_SPLIT = re.compile(r"[^A-Za-z0-9]+")
    _CAMEL_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
    _FILENAME = re.compile(r"[\w\-]+(?:\.[A-Za-z][A-Za-z0-9]{0,5})+")
    _VERSION = re.compile(r"v?\d+(?:\.\d+)+(?:[-+.][\w.]*)?")
    _IDENT_CHAIN = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
    _HEX_DIGEST = re.compile(r"[0-9a-f]+")
    _ESCAPED_QUOTED = re.compile(r'(\\+")([^"\n]*?)(\\+")')
    name_hint = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "dsn", "cookie",
                 "conn", "sas", "pat")
    rules: list[tuple[tuple[str, ...], tuple[str, ...], Callable[[str], str]]] = [
        (("-----BEGIN",), (), _pem_pass())]
    for kind, anchors, lower_anchors, pattern, check in _FORMATS:
        rules.append((anchors, lower_anchors, _format_pass(kind, re.compile(pattern), check)))
    rules += [
        ((), ("authorization",), _authorization_pass()),
        ((), ("bearer",), _format_pass(
            "bearer-token",
            re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr][ \t]+(?P<s>[A-Za-z0-9._~+/\-]{8,}=*)"),
            _credential_like)),
        ((), ("aws", "secret", "akia", "asia"), _aws_secret_pass()),
        ((), name_hint, _assignment_pass()),
        (("</",), (), _xml_pass()),
        (("--",), (), _flag_pass()),
        (_COMMAND_ANCHORS, (), _command_pass()),
        ((), name_hint + ("twilio", "sendgrid", "datadog", "heroku", "aws"), _prose_pass()),
    ]
    return rules


def _replace_group(m: Match, kind: str | None) -> str:
    """The match with its ``s`` group (or all of it) replaced by the marker."""
    if "s" in m.re.groupindex and m.start("s") >= 0:
        base = m.start()
        whole = m.group(0)
        return whole[: m.start("s") - base] + marker(kind) + whole[m.end("s") - base:]
    return marker(kind)


def _at_word_start(m: Match) -> bool:
    """The match does not start inside a word (a ``\\b`` that keeps sre's fast prefix scan)."""
    i = m.start()
    return i == 0 or not (m.string[i - 1].isalnum() or m.string[i - 1] == "_")


def _format_pass(kind: str, pattern: re.Pattern[str],
                 check: Callable[[str], bool] | None) -> Callable[[str], str]:
    # Patterns open with their literal prefix, not with ``\b``: sre then jumps from one
    # occurrence of the prefix to the next instead of trying every position.
    has_group = "s" in pattern.groupindex
    needs_start = pattern.pattern[:1].isalpha() or pattern.pattern.startswith("(?:")

    def replace(m: Match) -> str:
        if needs_start and not _at_word_start(m):
            return m.group(0)
        if check is not None and not check(m.group("s") if has_group else m.group(0)):
            return m.group(0)
        return _replace_group(m, kind or None)

    return lambda text: pattern.sub(replace, text)


def _pem_pass() -> Callable[[str], str]:
    begin = re.compile(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
    end = re.compile(r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
    # Without END: the key-material lines that follow (whole lines of base64 or armour
    # headers, after real or escaped newlines; or long base64 runs on a flattened line).
    # Prose after the block survives, and so does the line break before it.
    body = re.compile(
        r"(?:(?:[ \t]*(?:\r?\n|\\r\\n|\\n))+[ \t]*"
        r"(?:[A-Za-z0-9+/=]+|(?:Proc-Type|DEK-Info|Comment|Version|Hash):[^\r\n\\]*)"
        r"(?=[ \t]*(?:[\r\n]|\\[rn]|$|[\"'`,}\]]))"
        r"|[ \t]+[A-Za-z0-9+/=]{40,}(?=\s|\\[rn]|$|[\"'`,}\]]))*"
    )
    replacement = marker("private-key")

    def apply(text: str) -> str:
        out: list[str] = []
        pos = 0
        no_end_after = len(text) + 1  # no END at or after this offset (searched once)
        while (m := begin.search(text, pos)) is not None:
            stop = None
            if m.end() < no_end_after:
                e = end.search(text, m.end())
                if e is None:
                    no_end_after = m.end()
                else:
                    stop = e.end()
            if stop is None:
                tail = body.match(text, m.end())
                stop = tail.end() if tail is not None else m.end()
            out.append(text[pos:m.start()])
            out.append(replacement)
            pos = stop
        if not out:
            return text
        out.append(text[pos:])
        return "".join(out)

    return apply


def _authorization_pass() -> Callable[[str], str]:
    pattern = re.compile(
        r"[Aa](?i:uthorization)\b[\"']?[ \t]*[:=][ \t]*[\"']?"
        # Multi-part schemes (Digest, AWS4 ...) carry secrets in every parameter: all of it goes.
        r"(?:(?P<multi>(?i:digest|negotiate|ntlm|hmac|aws4-hmac-sha256))[ \t]+(?P<m>[^\r\n]+)"
        r"|(?:(?P<scheme>(?i:basic|bearer|token|apikey|api-key|sso-key|key))[ \t]+)?"
        r"(?P<s>[^\s\"'`<>()\[\]{}]+))"
    )

    def replace(m: Match) -> str:
        if not _at_word_start(m):
            return m.group(0)
        if m.group("multi"):
            return m.group(0)[: m.start("m") - m.start()] + marker("authorization")
        scheme = (m.group("scheme") or "").lower()
        secret = m.group("s")
        if _placeholder(secret) or (not scheme and not _credential_like(secret)):
            return m.group(0)
        if m.string[m.end():m.end() + 1] in ("(", "["):
            return m.group(0)  # authorization = base64.decodebytes(...): code
        kind = {"basic": "basic-auth", "bearer": "bearer-token", "token": "token"}.get(
            scheme, "authorization")
        return _replace_group(m, kind)

    return lambda text: pattern.sub(replace, text)


def _aws_secret_pass() -> Callable[[str], str]:
    candidate = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
    context = ("aws", "secret", "akia", "asia")

    def replace(m: Match) -> str:
        secret = m.group(0)
        if not _mixed(secret):  # git SHAs are hex; words are not 40 characters of mixed case
            return secret
        window = m.string[max(0, m.start() - 120): m.end() + 40].lower()
        if not any(word in window for word in context):
            return secret
        return marker("aws-secret-key")

    return lambda text: candidate.sub(replace, text)


_ASSIGNMENT = (
    r"(?<![\w.])(?P<q>\\{0,2}[\"'])?"
    # The name, matched atomically: a lookahead captures it, the backreference consumes it.
    r"(?=(?P<name>[A-Za-z_][\w.\-]{0,79}))(?P=name)(?(q)(?P=q))"
    r"(?P<sep>[ \t]*(?:"
    # ``password: str = "x"``, ``apiKey: Optional[str] = "x"``
    r":[ \t]*[A-Za-z_][\w.]{0,40}(?:\[[\w., |\[\]]{0,60}\])?[ \t]*=(?![=>~])"
    r"|=>|:=|=(?![=>~])|(?P<colon>:)(?![:/\\=])"
    r")[ \t]*)"
    r"(?P<value>\\+\"[^\"\n]*?\\+\"|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
    # Unquoted: up to a space, a delimiter or an escaped line break (a .env inside JSON);
    # written as a run of one class with rare backslash steps, which sre scans fastest.
    r"|(?:[^\s\"'`,;&<>(){}\[\]\\]|\\(?![nrt\"]))[^\s\"'`,;&<>(){}\[\]\\]*"
    r"(?:\\(?![nrt\"])[^\s\"'`,;&<>(){}\[\]\\]*)*)"
    # After a bare colon (YAML, JSON, headers) a value that does not end its clause must look
    # like a credential (``_clause_end``): "the password: see the vault" is prose, "set
    # DB_PASS: Hunt3r2x for staging" is not.
)
_CLAUSE_END = r"[ \t]*(?:$|[\r\n#,;}'\"&`<]|//|\\[nrt])"


def _unquote(value: str) -> tuple[str, str, str]:
    """(opening quote, inner text, closing quote) of an assignment's value."""
    if value[:1] in "\"'":
        return value[0], value[1:-1], value[-1]
    escaped = _ESCAPED_QUOTED.fullmatch(value) if value.startswith("\\") else None
    if escaped is not None:  # \"hunter2\" inside a JSON string
        return escaped.group(1), escaped.group(2), escaped.group(3)
    return "", value, ""


def _is_code(m: Match, name: str, opening: str, inner: str) -> bool:
    """The assignment is a program's, its value an expression rather than a literal secret."""
    text, end = m.string, m.end()
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    following = text[after:after + 1] or "\n"
    if opening:
        # "Basic " + b64encode(...), ', '.join(parts): a literal inside an expression.
        return after > end and following in _OPERATORS or following in ".[%"
    if text[end:end + 1] in ("(", "["):
        return True  # a call or an index
    if following in "\"'" and after == end and inner.lower() in _STRING_PREFIXES:
        return True  # f"Bearer {token}"
    if _words(name)[-1] in ("pwd", "oldpwd") and inner[:1] in "/~":
        return True  # the shell's working directory
    if m.group("colon") and inner.endswith(".") and inner.rstrip(".").isalpha():
        return True  # prose: "returning the Cookie: header."
    if _IDENT_CHAIN.fullmatch(inner) is None or m.group("colon"):
        return False
    before = text[max(0, m.start() - 8):m.start()].rstrip()
    if before.endswith(("(", ",")) and following in ",)":
        return True  # a keyword argument passing a variable: f(password=getpass_bytes)
    if " " not in m.group("sep"):
        return False
    # Code style (``x = y``, where .env and shell write ``X=y``) with a name on the right: an
    # attribute on either side (``self.token = nextchar``), an operator after it
    # (``Token = Ignore + PlainToken``), or a tuple target (``user, password = a, b``).
    if "." in name or "." in inner or (after > end and following in _OPERATORS):
        return True
    return before.endswith(",")


def _assignment_pass() -> Callable[[str], str]:
    pattern = re.compile(_ASSIGNMENT)
    clause_end = re.compile(_CLAUSE_END)

    def value_marker(m: Match) -> str | None:
        """The value's replacement, or None when the value is no secret."""
        name = m.group("name")
        if not is_secret_key(name):
            return None
        opening, inner, closing = _unquote(m.group("value"))
        if len(inner) < 3 or _placeholder(inner) or _code_reference(inner):
            return None
        if _is_code(m, name, opening, inner):
            return None
        if (m.group("colon") and not opening and clause_end.match(m.string, m.end()) is None
                and not (_weak(inner) or _strong(inner))):
            return None
        return opening + REDACTED + closing

    def apply(text: str) -> str:
        out: list[str] = []
        pos = 0  # copied up to here
        at = 0  # search from here
        while (m := pattern.search(text, at)) is not None:
            replacement = value_marker(m)
            if replacement is None:
                # Search on right after the name: the separator and the value may hold an
                # assignment of their own ({"cmd": "DB_PASS=x ./run"}, and "note: DB_PASS=x",
                # where "DB_PASS" first read as the type of a ``note: T = value``).
                at = m.end("name")
                continue
            out.append(text[pos:m.start("value")])
            out.append(replacement)
            pos = at = m.end()
        if not out:
            return text
        out.append(text[pos:])
        return "".join(out)

    return apply


def _xml_pass() -> Callable[[str], str]:
    pattern = re.compile(r"<(?P<tag>[A-Za-z_][\w.\-:]{0,63})>(?P<s>[^<\n]{1,500})</(?P=tag)>")

    def replace(m: Match) -> str:
        if not is_secret_key(m.group("tag")) or _placeholder(m.group("s")):
            return m.group(0)
        return _replace_group(m, None)

    return lambda text: pattern.sub(replace, text)


def _flag_pass() -> Callable[[str], str]:
    pattern = re.compile(
        r"--(?P<flag>[A-Za-z][\w-]{0,40})[ \t]+"
        r"(?P<s>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'|;&<>\-][^\s\"'|;&<>]*)"
    )

    def replace(m: Match) -> str:
        value = m.group("s").strip("\"'")
        i = m.start()
        if i and (m.string[i - 1].isalnum() or m.string[i - 1] in "_-"):
            return m.group(0)
        if not is_secret_key(m.group("flag")) or _placeholder(value) or _code_reference(value):
            return m.group(0)
        if not (_weak(value) or _strong(value)):
            return m.group(0)  # ``--export-secret-keys gives``: a switch, then a plain word
        return _replace_group(m, None)

    return lambda text: pattern.sub(replace, text)


# Commands that take a password as a short option, and how: ``sshpass -p X`` and
# ``sshpass -pX``; ``mysql -pX`` (attached only: ``mysql -p db`` names a database and asks for
# the password); ``redis-cli -a X``; ``ldapsearch -w X``; ``docker login -p X``;
# ``zip -P X``; ``7z -pX``; ``sqlcmd -P X``; ``mongosh -p X``; ``keytool -storepass X``;
# ``openssl ... -passin pass:X``; ``smbclient -U user%X``. (option, value attached, spaced)
_MYSQL = ("-p", True, False)
_COMMANDS: dict[str, tuple[tuple[str, bool, bool], ...]] = {
    "sshpass": (("-p", True, True),),
    **{name: (_MYSQL,) for name in ("mysql", "mysqldump", "mysqladmin", "mysqlimport",
                                     "mysqlshow", "mysqlcheck", "mysqlpump", "mariadb",
                                     "mariadb-dump", "mariadb-admin")},
    "redis-cli": (("-a", False, True),),
    **{name: (("-w", False, True),) for name in ("ldapsearch", "ldapmodify", "ldapadd",
                                                  "ldapdelete", "ldapwhoami", "ldappasswd")},
    "docker": (("-p", False, True),), "podman": (("-p", False, True),),
    "zip": (("-P", False, True),), "unzip": (("-P", False, True),),
    "7z": (("-p", True, False),), "7za": (("-p", True, False),),
    "sqlcmd": (("-P", False, True),), "bcp": (("-P", False, True),),
    "mongo": (("-p", False, True),), "mongosh": (("-p", False, True),),
    "mongodump": (("-p", False, True),), "mongorestore": (("-p", False, True),),
    "keytool": tuple((opt, False, True) for opt in (
        "-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass",
        "-destkeypass")),
    "smbclient": (("-U", False, True),),
}
_COMMAND_ANCHORS = ("sshpass", "mysql", "mariadb", "redis-cli", "ldap", "docker", "podman",
                    "zip", "7z", "sqlcmd", "bcp", "mongo", "keytool", "smbclient", "pass:")


def _command_pass() -> Callable[[str], str]:
    """Passwords given to a command as a short option (``_COMMANDS``), and OpenSSL's
    ``pass:X`` pass phrases. Only inside that command's own arguments (up to ``|``, ``;``,
    ``&`` or the line's end), so ``mkdir -p x`` or ``ssh -p 22`` never match."""
    names = "|".join(re.escape(n) for n in sorted(_COMMANDS, key=len, reverse=True))
    command = re.compile(rf"(?<![\w.-])(?P<cmd>{names})(?![\w-])"
                         r"(?P<args>[^\n|;&]{0,2000})")
    value = r"(?P<s>'[^'\n]*'|\"[^\"\n]*\"|[^\s'\"|;&]+)"
    options = {}
    for name, opts in _COMMANDS.items():
        forms = []
        for opt, attached, spaced in opts:
            sep = "[ \t]*" if attached and spaced else ("" if attached else "[ \t]+")
            forms.append(re.escape(opt) + sep)
        options[name] = re.compile(r"(?:^|(?<=\s))(?:" + "|".join(forms) + ")" + value)
    openssl = re.compile(r"(?<![\w-])pass:(?P<s>[^\s'\"|;&]+)")

    def secret_of(found: str, cmd: str) -> tuple[int, int] | None:
        """Where the secret lies inside an option's value (quotes and ``user%`` kept)."""
        inner_start = 1 if found[:1] in "'\"" else 0
        inner = found[inner_start:len(found) - inner_start]
        if cmd == "smbclient":
            if "%" not in inner:
                return None
            cut = inner.index("%") + 1
            inner_start, inner = inner_start + cut, inner[cut:]
        if not inner or _placeholder(inner) or inner.startswith("-"):
            return None
        return inner_start, inner_start + len(inner)

    def in_args(m: Match) -> str:
        cmd, args = m.group("cmd"), m.group("args")
        if cmd in ("docker", "podman") and " login" not in args:
            return m.group(0)
        out, pos = [], 0
        for opt in options[cmd].finditer(args):
            span = secret_of(opt.group("s"), cmd)
            if span is None:
                continue
            start = opt.start("s") + span[0]
            out.append(args[pos:start])
            out.append(REDACTED)
            pos = opt.start("s") + span[1]
        if not out:
            return m.group(0)
        out.append(args[pos:])
        return m.group(0)[: m.start("args") - m.start()] + "".join(out)

    def passphrase(m: Match) -> str:
        secret = m.group("s")
        if _placeholder(secret) or secret.lower() in ("stdin",):
            return m.group(0)
        return _replace_group(m, None)

    def apply(text: str) -> str:
        if "pass:" in text:
            text = openssl.sub(passphrase, text)
        return command.sub(in_args, text)

    return apply


_PROSE_KINDS = (
    ("pass", "password"), ("pwd", "password"), ("twilio", "twilio-auth-token"),
    ("sendgrid", "sendgrid-key"), ("datadog", "datadog-key"), ("heroku", "heroku-key"),
    ("aws", "aws-secret"), ("api", "api-key"), ("access", "access-key"), ("secret", "secret"),
    ("token", "token"), ("cred", "credential"),
)
_COPULAS = frozenset(("is", "was", "are", "=", ":", "of", "to", "as", "set", "now"))


def _prose_pass() -> Callable[[str], str]:
    # One pattern, so the scan stays in C: a secret word, up to three plain words, an optional
    # ":" or "=", then a candidate that holds a digit or a password symbol; Python only looks at
    # candidates. Every run of spaces is bounded, so nothing can backtrack quadratically. The
    # scan runs case-sensitively over a lower-cased copy (three times faster than IGNORECASE);
    # the candidate is judged on the original text at the same offsets.
    candidate = r"[^\s,;()<>\"'`\[\]]"
    source = (
        r"(?P<kw>pass(?:words?|phrases?)|passwd|pwd"
        r"|secrets?(?:[ _-]?(?:access[ _-]?)?keys?)?|api[ _-]?keys?|access[ _-]?keys?"
        r"|(?:auth|access|refresh|bearer|session|api)[ _-]?tokens?|tokens?|credentials?"
        r"|twilio|sendgrid|datadog|heroku|aws)\b"
        # Nothing to judge without a digit or a symbol close by: leave before the slow part.
        r"(?=[^\n0-9!@#$%^&*+=?~]{0,48}[0-9!@#$%^&*+=?~])"
        # Plain words end at a word's end, and the candidate starts after a space, a quote, ":"
        # or "=": no match is ever re-tried from the middle of a word.
        r"(?P<gap>(?:(?:[ \t]{0,8}[:=])?[ \t]{1,8}[a-z][a-z'\-]{0,24}(?![a-z'\-])){0,3}?)"
        r"(?P<sep>[ \t]{0,8}(?:[:=][ \t]{0,8})?)[\"'`]?(?<=[\s:=\"'`])"
        # The candidate, atomically (lookahead + backreference) and at most 128 characters, so a
        # long run of text after the word costs one bounded scan.
        rf"(?=(?P<s>(?={candidate}{{0,127}}[0-9!@#$%^&*+=?~]){candidate}{{6,128}}))(?P=s)"
        rf"(?!{candidate})"
    )
    lower_pattern = re.compile(source)
    any_case_pattern = re.compile(source, re.IGNORECASE)

    def kind_of(kw: str) -> str:
        low = kw.lower()
        return next((kind for part, kind in _PROSE_KINDS if part in low), "secret")

    def secret_span(text: str, m: Match) -> tuple[int, int] | None:
        start = m.start()
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            return None  # "input_tokens", "mytoken": not the word itself
        s_start, s_end = m.span("s")
        found = text[s_start:s_end]
        secret = found.rstrip(".:!?")
        if _placeholder(secret) or _code_reference(secret) or text[s_end:s_end + 1] in ("(", "["):
            return None
        gap = m.group("gap").split()
        after_copula = any(c in m.group("sep") for c in ":=") or (
            bool(gap) and (gap[-1].strip(":=") in _COPULAS or gap[-1][-1] in ":=")
        )
        if _strong(secret) or (after_copula and _weak(secret)):
            return s_start, s_start + len(secret)
        return None

    def apply(text: str) -> str:
        low = text.lower()
        scan, pattern = (low, lower_pattern) if len(low) == len(text) else (
            text, any_case_pattern)
        out: list[str] = []
        pos = 0  # copied up to here
        at = 0  # search from here
        while (m := pattern.search(scan, at)) is not None:
            span = secret_span(text, m)
            if span is None:
                at = m.start() + 1  # a rejected match must not hide one that overlaps it
                continue
            out.append(text[pos:span[0]])
            out.append(marker(kind_of(m.group("kw"))))
            pos = at = span[1]
        if not out:
            return text
        out.append(text[pos:])
        return "".join(out)

    return apply


# -- the API ---------------------------------------------------------------------------------
def redact(text: str) -> str:
    """Return ``text`` with every credential replaced by a marker (``text`` itself if none).

    A redaction can take away the context that made a neighbour look harmless (the call's
    parenthesis before ``password=getpass_bytes``), so text that changed is read again until
    nothing more goes: redacting redacted text changes nothing."""
    if not text or not isinstance(text, str):
        return text
    out = _redact_once(text)
    for _ in range(3):
        if out == text:
            break
        text, out = out, _redact_once(out)
    return out


def _redact_once(text: str) -> str:
    if _compiled is None:
        _ensure_compiled()
    assert _compiled is not None
    lower: str | None = None
    out = text
    for anchors, lower_anchors, apply in _compiled:
        if not any(a in text for a in anchors):
            if not lower_anchors:
                continue
            if lower is None:
                lower = text.lower()
            if not any(a in lower for a in lower_anchors):
                continue
        out = apply(out)
    return text if out == text else out


def contains_secret(text: str) -> bool:
    """True when ``redact`` would change ``text``: for tests and diagnostics."""
    return bool(text) and redact(text) != text


def redact_value(obj: Any) -> Any:
    """Redact a JSON-like value: strings, dict keys and values, lists and tuples, any depth.

    The value under a key whose name says secret (``api_key``, ``password``, ``credentials``
    ...) is replaced whole, whatever it holds, unless it is empty, ``None`` or a boolean.
    Keys are redacted too. Returns new containers (tuples become lists); the input is not
    changed. Iterative, so a deeply nested value cannot exhaust the stack.
    """
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, bytes):
        return _redact_bytes(obj)
    if not isinstance(obj, (Mapping, list, tuple)):
        return obj
    holder: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(obj, holder, 0)]
    while stack:
        src, dst, slot = stack.pop()
        if isinstance(src, str):
            dst[slot] = redact(src)
        elif isinstance(src, bytes):
            dst[slot] = _redact_bytes(src)
        elif isinstance(src, Mapping):
            new: dict[Any, Any] = {}
            dst[slot] = new
            for key, value in src.items():
                new_key = key
                if isinstance(key, str):
                    new_key = redact(key)
                    n = 1
                    while new_key in new and new_key != key:  # two secrets, one marker
                        n += 1
                        new_key = f"{redact(key)}#{n}"
                if isinstance(key, str) and is_secret_key(key) and _has_payload(value):
                    new[new_key] = REDACTED
                else:
                    new[new_key] = None
                    stack.append((value, new, new_key))
        elif isinstance(src, (list, tuple)):
            items: list[Any] = [None] * len(src)
            dst[slot] = items
            stack.extend((value, items, i) for i, value in enumerate(src))
        else:
            dst[slot] = src
    return holder[0]


def _redact_bytes(data: bytes) -> bytes:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    out = redact(text)
    return data if out is text else out.encode("utf-8")


def _has_payload(value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return False
    if isinstance(value, (str, bytes, list, tuple, dict)):
        return len(value) > 0
    return True


# Set by ``_compile``; declared here for readers and type checkers.
_NAME_SPLIT: re.Pattern[str]
_CAMEL_SPLIT: re.Pattern[str]
_FILENAME: re.Pattern[str]
_VERSION: re.Pattern[str]
_IDENT_CHAIN: re.Pattern[str]
_HEX_DIGEST: re.Pattern[str]
_ESCAPED_QUOTED: re.Pattern[str]
