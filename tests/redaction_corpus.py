"""Realistic secrets in realistic lines, and lines that must come through untouched.

Every value here is fake (made up or the vendors' documented examples). ``SECRETS`` is the
regression corpus: ``(format, line, secrets, kept)``: after redaction no secret may survive (not
even an 8-character piece of one) and every ``kept`` fragment must still be there. The first
block stands in for the 23 formats of the attack report (issue 11): the report names only the six
content redaction missed (marked "missed"), so the other 17 are a reconstruction from the formats
the old redactor claimed; the rest extend them. ``CLEAN`` lines must not change at all.
"""

from __future__ import annotations

AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GHP = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijKLMNOPqrstuvWXYZ0123456789abcdefghijklmnopq"
GLPAT = "glpat-" + "xK9fAkE2tOkEnAbCdEfGh"
XOXB = "xoxb-" + "123456789012-1234567890123-fAkEsLaCkToKeNvAlUe00"
SLACK_HOOK = "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
STRIPE = "sk_live_" + "51HfakeFAKEfake0123456789abcdef"
OPENAI = "sk-proj-" + "FAKEfakeFAKEfake0123456789abcdWXYZ"
ANTHROPIC = "sk-ant-api03-" + "FAKEfakeFAKEfake0123456789_abcdefghijklmnop-QRSTUVWXAA"
GOOGLE = "AIza" + "SyFAKEfakeFAKEfake0123456789abcdefg"
HF = "hf_" + "FAKEfakeFAKEfakeFAKEfake012345"
NPM = "npm_" + "FAKEfakeFAKEfakeFAKEfake0123456789"
PYPI = "pypi-" + "AgEIcHlwaS5vcmcCJDU4ZTY0YzFlLTk0ZjMtNGNmYy1hYmQyLWE3YTk1MTc4Y2VjNQACKlszLCJmYWtlIl0"
SENDGRID = "SG." + "ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"
TWILIO_TOKEN = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
TWILIO_SK = "SK" + "0123456789abcdef0123456789abcdef"
AZURE_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/"
             "KBHBeksoGMGw==")
SAS_SIG = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789%2B%2F%3D"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
       "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
BEARER = "fAkEbEaReRtOkEn0123456789abcdef"
PEM_BODY = ("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n"
            "7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFc\n"
            "zGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE")


def pem(kind: str) -> str:
    label = f"{kind} PRIVATE KEY" if kind != "PGP" else "PGP PRIVATE KEY BLOCK"
    label = label.strip()
    return f"-----BEGIN {label}-----\n{PEM_BODY}\n-----END {label}-----"


Case = tuple[str, str, list[str], list[str]]

SECRETS: list[Case] = [
    # -- the attack report's 23 (its six misses named; the other 17 reconstructed) -------------
    ("aws-access-key-id", f"We rotated {AWS_ID} yesterday after the incident.",
     [AWS_ID], ["We rotated", "yesterday after the incident."]),
    ("aws-secret-key in prose (missed)",
     f"The AWS secret access key is {AWS_SECRET}, keep it out of git.",
     [AWS_SECRET], ["The AWS secret access key is", ", keep it out of git."]),
    ("github classic", f"Use {GHP} for the release workflow.",
     [GHP], ["Use", "for the release workflow."]),
    ("github fine-grained", f"The fine-grained {GITHUB_PAT} is scoped to one repo.",
     [GITHUB_PAT], ["The fine-grained", "is scoped to one repo."]),
    ("gitlab", f"GitLab token {GLPAT} expires in May.", [GLPAT], ["GitLab token", "expires in May."]),
    ("slack bot token", f"The bot posts with {XOXB} to #deploys.",
     [XOXB], ["The bot posts with", "to #deploys."]),
    ("slack webhook (missed)",
     f"Alerts go to https://hooks.slack.com/services/{SLACK_HOOK} every hour.",
     [SLACK_HOOK], ["Alerts go to https://hooks.slack.com/services/", "every hour."]),
    ("stripe live", f"Charge with {STRIPE} in production only.",
     [STRIPE], ["Charge with", "in production only."]),
    ("openai project", f"export OPENAI_API_KEY={OPENAI}", [OPENAI], ["export OPENAI_API_KEY="]),
    ("anthropic", f"The eval harness reads {ANTHROPIC} from the vault.",
     [ANTHROPIC], ["The eval harness reads", "from the vault."]),
    ("google api key", f"Maps calls use key {GOOGLE} on the web client.",
     [GOOGLE], ["Maps calls use key", "on the web client."]),
    ("hugging face", f"Download weights with {HF} before the job.",
     [HF], ["Download weights with", "before the job."]),
    ("npm", f"The CI publishes with {NPM} on tags.", [NPM], ["The CI publishes with", "on tags."]),
    ("jwt", f"The service JWT {JWT} expires tonight.",
     [JWT], ["The service JWT", "expires tonight."]),
    ("authorization bearer",
     f"curl -H 'Authorization: Bearer {BEARER}' https://api.example.com/v1/items",
     [BEARER], ["curl -H 'Authorization: Bearer ", "' https://api.example.com/v1/items"]),
    ("basic-auth url", "git clone https://deploy:s3cr3tPa55w0rd@git.example.com/app.git today",
     ["s3cr3tPa55w0rd"], ["git clone https://deploy:", "@git.example.com/app.git today"]),
    ("pem rsa", f"Here is the key:\n{pem('RSA')}\nthat is all.",
     [PEM_BODY[:64]], ["Here is the key:", "that is all."]),
    ("env db password (missed)", "DB_HOST=db.internal\nDB_PASS=Sup3rS3cret!\nDB_PORT=5432",
     ["Sup3rS3cret!"], ["DB_HOST=db.internal", "DB_PASS=", "DB_PORT=5432"]),
    ("json password", '{"user": "deploy", "password": "hunter2hunter2", "port": 22}',
     ["hunter2hunter2"], ['"user": "deploy"', '"password": "', '"port": 22']),
    ("azure storage account key (missed)",
     "DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey=" + AZURE_KEY
     + ";EndpointSuffix=core.windows.net",
     [AZURE_KEY], ["AccountName=acmelogs;AccountKey=", ";EndpointSuffix=core.windows.net"]),
    ("twilio auth token, bare (missed)",
     f"Twilio auth token {TWILIO_TOKEN} was pasted by mistake.",
     [TWILIO_TOKEN], ["Twilio auth token", "was pasted by mistake."]),
    ("sendgrid (missed)", f"The mailer sends with {SENDGRID} from staging.",
     [SENDGRID], ["The mailer sends with", "from staging."]),
    ("api key assignment", "api_key = 'k3y-vAlUe-zzz-0099'", ["k3y-vAlUe-zzz-0099"], ["api_key = '"]),
    # -- more formats ----------------------------------------------------------------------------
    ("aws key pair", f"creds {AWS_ID} / {AWS_SECRET} for the deploy user",
     [AWS_ID, AWS_SECRET], ["creds", "for the deploy user"]),
    ("aws ini", f"aws_secret_access_key = {AWS_SECRET}", [AWS_SECRET], ["aws_secret_access_key ="]),
    ("github oauth", "The OAuth app returned gho_16C7e42F292c6912E7710c838347Ae178B4a here.",
     ["gho_16C7e42F292c6912E7710c838347Ae178B4a"], ["The OAuth app returned", "here."]),
    ("github app installation", "Actions minted ghs_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ for it.",
     ["ghs_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"], ["Actions minted", "for it."]),
    ("slack user token",
     "xoxp-123456789012-123456789012-123456789012-abcdef0123456789abcdef0123456789 is Dana's.",
     ["xoxp-123456789012-123456789012-123456789012-abcdef0123456789abcdef0123456789"],
     ["is Dana's."]),
    ("stripe restricted", "Reports use rk_live_51HfakeFAKEfake0123 nightly.",
     ["rk_live_51HfakeFAKEfake0123"], ["Reports use", "nightly."]),
    ("openai legacy", "old key sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL was revoked",
     ["sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL"], ["old key", "was revoked"]),
    ("pypi", f"Upload with twine using {PYPI} as the password.",
     [PYPI], ["Upload with twine using", "as the password."]),
    ("twilio api key sid", f"API key {TWILIO_SK} belongs to the SMS service.",
     [TWILIO_SK], ["API key", "belongs to the SMS service."]),
    ("twilio account sid", "Twilio account AC0123456789abcdef0123456789abcdef sends the SMS.",
     ["AC0123456789abcdef0123456789abcdef"], ["Twilio account", "sends the SMS."]),
    ("azure sas signature",
     f"GET https://acme.blob.core.windows.net/logs/a.gz?sv=2021-08-06&sr=b&sp=r&sig={SAS_SIG} ok",
     [SAS_SIG], ["GET https://acme.blob.core.windows.net/logs/a.gz?sv=2021-08-06&sr=b&sp=r&sig=",
                 " ok"]),
    ("azure service bus",
     "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey="
     "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4MTIzNDU2Nzg=",
     ["Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4MTIzNDU2Nzg="],
     ["Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey="]),
    ("authorization basic json", '{"Authorization": "Basic Zm9vOmJhcjEyMw==", "Accept": "json"}',
     ["Zm9vOmJhcjEyMw=="], ['{"Authorization": "Basic ', '"Accept": "json"']),
    ("bearer in prose", f"send bearer {BEARER} along with the request",
     [BEARER], ["send bearer", "along with the request"]),
    ("postgres dsn", "DATABASE_URL=postgres://app:Pg-Pa55word@db.internal:5432/app",
     ["Pg-Pa55word"], ["DATABASE_URL=postgres://app:", "@db.internal:5432/app"]),
    ("redis url", "cache at redis://:r3disPa55@cache.internal:6379/0 is shared",
     ["r3disPa55"], ["cache at redis://:", "@cache.internal:6379/0 is shared"]),
    ("sentry dsn", "SENTRY_DSN=https://f00dcafe1234@o123.ingest.sentry.io/456",
     ["f00dcafe1234"], ["SENTRY_DSN="]),
    ("pem ec", f"{pem('EC')}\nkept", [PEM_BODY[:64]], ["kept"]),
    ("pem openssh", f"id_ed25519:\n{pem('OPENSSH')}\n", [PEM_BODY[:64]], ["id_ed25519:"]),
    ("pem pgp", f"gpg --export-secret-keys gives\n{pem('PGP')}\ndone", [PEM_BODY[:64]],
     ["gpg --export-secret-keys gives", "done"]),
    ("pem encrypted pkcs8", f"{pem('ENCRYPTED')} end", [PEM_BODY[:64]], [" end"]),
    ("pem in json (service account)",
     '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
     + PEM_BODY.replace("\n", "\\n") + '\\n-----END PRIVATE KEY-----\\n", "client_id": "1234"}',
     [PEM_BODY[:64]], ['"type": "service_account"', '"client_id": "1234"']),
    ("pem without END", f"truncated:\n-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n\nnext topic",
     [PEM_BODY[:64], PEM_BODY[-60:]], ["truncated:", "next topic"]),
    ("env secret key", "SECRET_KEY=django-insecure-9x!q2v$7m@z", ["django-insecure-9x!q2v$7m@z"],
     ["SECRET_KEY="]),
    ("env *_TOKEN", "export SLACK_BOT_TOKEN=opaqueValue123 && make deploy",
     ["opaqueValue123"], ["export SLACK_BOT_TOKEN=", "&& make deploy"]),
    ("yaml password", "database:\n  user: app\n  password: Tr0ub4dor&3\n  host: db",
     ["Tr0ub4dor&3"], ["user: app", "password: ", "host: db"]),
    ("yaml client secret", "oauth:\n  client_secret: 'c1i3nt-s3cr3t-v4lu3'\n",
     ["c1i3nt-s3cr3t-v4lu3"], ["oauth:", "client_secret: '"]),
    ("python annotated", 'password: str = "correct-horse-battery-staple"',
     ["correct-horse-battery-staple"], ['password: str = "']),
    ("js object", "const cfg = { apiKey: 'AbC123dEf456', region: 'eu' };",
     ["AbC123dEf456"], ["const cfg = { apiKey: '", "region: 'eu' };"]),
    ("heroku key by name", "HEROKU_API_KEY=01234567-89ab-cdef-0123-456789abcdef",
     ["01234567-89ab-cdef-0123-456789abcdef"], ["HEROKU_API_KEY="]),
    ("datadog key by name", "  DD_API_KEY: 0123456789abcdef0123456789abcdef",
     ["0123456789abcdef0123456789abcdef"], ["DD_API_KEY:"]),
    ("http api key header", "X-Api-Key: live-8c4e2f9a77\nAccept: application/json",
     ["live-8c4e2f9a77"], ["X-Api-Key:", "Accept: application/json"]),
    ("connection string password",
     "Server=tcp:db.example.com;Database=app;User ID=sa;Password=Pa55w0rd!;Encrypt=true",
     ["Pa55w0rd!"], ["Server=tcp:db.example.com;Database=app;User ID=sa;Password=",
                     ";Encrypt=true"]),
    ("cli flag", "mysql --password Sup3rSecret9 --host db.internal",
     ["Sup3rSecret9"], ["mysql --password", "--host db.internal"]),
    ("curl user", "curl -u admin:adm1nPa55 https://ci.example.com/api",
     ["adm1nPa55"], ["curl -u admin:", "https://ci.example.com/api"]),
    ("xml", "<user>app</user><password>x9Secret!</password>", ["x9Secret!"],
     ["<user>app</user><password>", "</password>"]),
    ("prose password", "The staging password is hunter2, don't share it.",
     ["hunter2"], ["The staging password is", ", don't share it."]),
    ("prose api key", "my API key for staging is zzq-998877 until Friday",
     ["zzq-998877"], ["my API key for staging is", "until Friday"]),
    ("escaped json", '{\\"password\\": \\"hunter2hunter2\\", \\"user\\": \\"bob\\"}',
     ["hunter2hunter2"], ['\\"user\\": \\"bob\\"']),
    ("google oauth", "refresh gave ya29.a0AfH6SMBfakeFAKEfake0123456789 back",
     ["ya29.a0AfH6SMBfakeFAKEfake0123456789"], ["refresh gave", "back"]),
    ("vault token", "VAULT_TOKEN is hvs.CAESIFAKEfakeFAKEfake0123456789abc now",
     ["hvs.CAESIFAKEfakeFAKEfake0123456789abc"], ["VAULT_TOKEN is", "now"]),
    ("pagerduty routing key", "PAGERDUTY_ROUTING_KEY=R0fake1FAKE2ROUTE3key4ABC set",
     ["R0fake1FAKE2ROUTE3key4ABC"], ["PAGERDUTY_ROUTING_KEY=", " set"]),
    ("discord webhook",
     "post to https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123 ok",
     ["123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123"],
     ["post to https://discord.com/api/webhooks/", " ok"]),
    ("assignment inside a json string",
     '{"tool": "Bash", "command": "export DB_PASS=hunter2x && ./deploy.sh"}',
     ["hunter2x"], ['{"tool": "Bash", "command": "export DB_PASS=', ' && ./deploy.sh"}']),
    ("escaped .env inside json", '{"file": ".env", "text": "DB_PASS=Sup3rS3cret\\nDB_PORT=5432"}',
     ["Sup3rS3cret"], ['"text": "DB_PASS=', "\\nDB_PORT=5432"]),
    ("mailgun", "MG key key-0123456789abcdef0123456789abcdef sends receipts",
     ["key-0123456789abcdef0123456789abcdef"], ["MG key", "sends receipts"]),
]

# -- behind a label, inside a sentence, after export; command options; more vendors -----------
# (issue 24: a label in front of NAME=value hid it, hooks add ``Request:``/``Result:`` labels of
# their own, and sshpass was missed everywhere)
SECRETS += [
    ("label then env", "note: DB_PASS=Lab3lledPa55!", ["Lab3lledPa55!"], ["note: DB_PASS="]),
    ("hook request label", "Request: DB_PASSWORD=Requ3stPa55 in the .env please",
     ["Requ3stPa55"], ["Request: DB_PASSWORD=", "in the .env please"]),
    ("hook result label", "Result: I set API_TOKEN=r3sultT0kenValue for the job",
     ["r3sultT0kenValue"], ["Result: I set API_TOKEN=", "for the job"]),
    ("label then export", "Request: export STRIPE_SECRET=Expo4tedS3cret && make",
     ["Expo4tedS3cret"], ["Request: export STRIPE_SECRET=", "&& make"]),
    ("yaml list item", "- password: L1stItemPw9\n- user: app",
     ["L1stItemPw9"], ["- password: ", "- user: app"]),
    ("markdown quote", "> SMTP_PASS=Qu0tedSmtpPw", ["Qu0tedSmtpPw"], ["> SMTP_PASS="]),
    ("shell comment", "# REDIS_PASSWORD=C0mmentedRedis", ["C0mmentedRedis"],
     ["# REDIS_PASSWORD="]),
    ("numbered list", "1. GITHUB_TOKEN=NumberedT0kenValue1 is in CI", ["NumberedT0kenValue1"],
     ["1. GITHUB_TOKEN=", "is in CI"]),
    ("backticks", "run `DB_PASS=B4cktickPw ./migrate`", ["B4cktickPw"],
     ["run `DB_PASS=", "./migrate`"]),
    ("colon inside a sentence", "Set DB_PASS: Hunt3r2xY for staging today", ["Hunt3r2xY"],
     ["Set DB_PASS: ", "for staging today"]),
    ("label then yaml key", "Result: client_secret: Cl1entS3cretVal", ["Cl1entS3cretVal"],
     ["Result: client_secret: "]),
    ("label then json", 'note: {"api_key": "J5onApiKeyValue"}', ["J5onApiKeyValue"],
     ['note: {"api_key": "']),
    ("export in prose", "then export AWS_SECRET_ACCESS_KEY=" + AWS_SECRET + " and retry",
     [AWS_SECRET], ["then export AWS_SECRET_ACCESS_KEY=", "and retry"]),
    ("--password=", "mysqldump --password=Dump3dPw --all-databases", ["Dump3dPw"],
     ["mysqldump --password=", "--all-databases"]),
    ("sshpass quoted", "sshpass -p 'Ss4pass-quoted' ssh deploy@10.0.0.5",
     ["Ss4pass-quoted"], ["sshpass -p '", "' ssh deploy@10.0.0.5"]),
    ("sshpass bare", "sshpass -p Ss4passBare scp a.tgz host:", ["Ss4passBare"],
     ["sshpass -p ", "scp a.tgz host:"]),
    ("sshpass attached", "sshpass -pSs4passGlued rsync -a x host:", ["Ss4passGlued"],
     ["sshpass -p", "rsync -a x host:"]),
    ("mysql -p<secret>", "mysql -u root -pMy5qlGlued -h db.internal app", ["My5qlGlued"],
     ["mysql -u root -p", "-h db.internal app"]),
    ("redis-cli -a", "redis-cli -h cache -a R3disAuthPw ping", ["R3disAuthPw"],
     ["redis-cli -h cache -a ", "ping"]),
    ("ldapsearch -w", "ldapsearch -x -D cn=admin -w Ld4pBindPw -b dc=acme", ["Ld4pBindPw"],
     ["-D cn=admin -w ", "-b dc=acme"]),
    ("docker login -p", "docker login -u bot -p D0ckerLoginPw registry.acme.io",
     ["D0ckerLoginPw"], ["docker login -u bot -p ", "registry.acme.io"]),
    ("sqlcmd -P", "sqlcmd -S db -U sa -P Sq1cmdPassw0rd -Q 'select 1'", ["Sq1cmdPassw0rd"],
     ["sqlcmd -S db -U sa -P ", "-Q 'select 1'"]),
    ("openssl pass:", "openssl pkcs12 -in a.p12 -passin pass:P12Passphrase9 -nodes",
     ["P12Passphrase9"], ["-passin pass:", "-nodes"]),
    ("keytool -storepass", "keytool -list -keystore ks.jks -storepass K3ystorePw",
     ["K3ystorePw"], ["-keystore ks.jks -storepass "]),
    ("smbclient user%pass", "smbclient //srv/share -U bob%Smb5haredPw", ["Smb5haredPw"],
     ["smbclient //srv/share -U bob%"]),
    ("artifactory", "artifactory token AKCp8" + "a1B2c3D4" * 8 + " for the proxy",
     ["AKCp8" + "a1B2c3D4" * 8], ["artifactory token", "for the proxy"]),
    ("mailchimp", "mailchimp 0123456789abcdef0123456789abcdef-us12 sends the digest",
     ["0123456789abcdef0123456789abcdef-us12"], ["mailchimp", "sends the digest"]),
    ("square", "square sq0csp-" + "aB3" * 14 + "x pays out",
     ["sq0csp-" + "aB3" * 14 + "x"], ["square", "pays out"]),
    ("discord bot", "the discord bot uses MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7"
     "kKWs now", ["MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"],
     ["the discord bot uses", "now"]),
    ("linear", "Linear key lin_api_" + "a1B2" * 10 + " for triage", ["lin_api_" + "a1B2" * 10],
     ["Linear key", "for triage"]),
    ("doppler", "doppler dp.st." + "a1B2" * 11 + " in CI", ["dp.st." + "a1B2" * 11],
     ["doppler", "in CI"]),
    ("supabase", "supabase sbp_" + "ab12" * 10 + " deploys", ["sbp_" + "ab12" * 10],
     ["supabase", "deploys"]),
    ("new relic", "NRAK-A1B2C3D4E5F6G7H8I9J0K1L2M3N reports", ["NRAK-A1B2C3D4E5F6G7H8I9J0K1L2M3N"],
     ["reports"]),
    ("grafana", "grafana glsa_" + "a1B2" * 8 + "_0a1b2c3d alerts", ["glsa_" + "a1B2" * 8 + "_0a1b2c3d"],
     ["grafana", "alerts"]),
    ("planetscale", "pscale_pw_" + "a1B2c3D4" * 5 + " for main", ["pscale_pw_" + "a1B2c3D4" * 5],
     ["for main"]),
]

CLEAN: list[str] = [
    # Git SHAs and UUIDs alone are identifiers, not secrets.
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the aws secret rotation",
    "Merge 9fceb02d0ae598e95dc970b74767f19372d61af8 into main",
    "session 0f3c9a7e-5d21-4b8e-9c61-2a7f4e8d1b30 started at 09:26",
    "md5 d41d8cd98f00b204e9800998ecf8427e matches the release",
    # Paths and URLs without credentials.
    "see /home/dev/project/lintaid/capture/secret_store.py line 40",
    "token refresh lives in src/auth/token_refresh_v2.py now",
    "see https://example.com/docs/auth?page=2#tokens for the design",
    "postgres://db.internal:5432/app is the read replica",
    "ssh://git@github.com:22/acme/app.git and git@github.com:acme/app.git",
    "arn:aws:iam::123456789012:role/DeployRole in AWS region us-east-1",
    # A base64 image in prose.
    "the token icon is ![icon](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAf"
    "FcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==) in the header",
    # Ordinary prose about secrets.
    "the token budget is 8000 bytes per injection",
    "see the password reset flow docs for details",
    "tokens are counted per message",
    "we keep secrets out of the repository",
    "the token is expired after 3600 seconds",
    "the password: see the vault for it",
    "Authorization: required for every endpoint",
    "Bearer authentication is described in RFC 6750",
    "access keys in us-east-1 are rotated every 90 days",
    "use sk-learn style names sparingly",
    "the task-notification wrapper is skipped",
    "input_tokens and output_tokens are logged",
    "the upstream returned 502 after three retries",
    # Ordinary code.
    "def login(password: str, token: str | None = None) -> bool:",
    "api_key = os.environ['OPENAI_API_KEY']",
    "self.password = password",
    "token = request.headers.get('Authorization')",
    "secret = secrets.token_hex(32)",
    "client = Client(api_key=api_key, max_tokens=4096)",
    "password_reset_url = '/accounts/reset/'",
    'headers = {"Authorization": f"Bearer {token}"}',
    "export GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
    "PASSWORD=$DB_PASSWORD ./run.sh",
    '{"token_type": "Bearer", "expires_in": 3600}',
    "secretName: tls-cert",
    "if password == confirm:",
    "const url = `${base}/api/v2/tokens`",
    "self.token = nextchar",
    "Token = Ignore + PlainToken",
    "node_token = current_ast_node.value",
    "user, password = login_form()",
    "ctx.load_cert_chain(CERTFILE, password=getpass_bytes)",
    "authorization = base64.decodebytes(authorization).decode('ascii')",
    "password = self._decode_base64(arg)",
    "auth = 'Basic ' + b64encode(user_pass).decode('ascii')",
    "cookie_str = ', '.join(parts)",
    "SERVER_AUTH = '1.3.6.1.5.5.7.3.1'",
    "GROUP_PAT = 'fr.comp.lang.*'",
    "LOG_AUTH = 4",
    '"""Perform one request, returning the Cookie: header."""',
    "gpg --export-secret-keys gives the armoured key",
    "PWD=/home/dev/project",
    # Public material.
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n"
    "-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n"
    "-----END CERTIFICATE-----",
    "the publishable key pk_live_51HfakeFAKEfake0123 is public",
    # Digests and identifiers near secret words, and short options that hold no password.
    "sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 is the image",
    "token rotation landed in 11f6ad8ec52a2984abaafd7c3b516503785c2072",
    "request f1404487-fb9d-4254-9692-4646ae689352 failed with 401",
    "etag W/\"5d41402abc4b2a76b9719d911017c592\" for the password page",
    "mkdir -p /tmp/out && ssh -p 2222 deploy@host",
    "docker run -p 8080:80 -e PORT=80 nginx",
    "python -m pytest -p no:xdist -q",
    "mysql -p appdb (it asks for the password)",
    "sshpass -p $SSHPASS ssh host",
    "the password: see the vault for it",
    "note: the api key lives in the vault",
    "Request: rotate the API token tonight",
    "integrity sha512-" + "A" * 86 + "== for the tarball",
]
