"""What kind of thing a named tool is: the slot a choice of it fills.

"Typesense Cloud" and "Algolia" are both search engines, "goose" and "Atlas" both migration
tools, "Flagsmith" and "GrowthBook" both feature-flag services: a project holds one of each
at a time (for one purpose), so a statement that changes to one retires a statement of the
other even when the two name their subject differently ("product search" vs "the search
cluster"). ``kind_of`` maps a tool's name (as ``lintaid.policy.values`` canonicalises it) to
its kind; unknown names have none and relate by their topics alone.

The table is general knowledge of common development tools and services, grouped by the
job they do in a project; a tool doing several jobs is listed under its main one.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

_KINDS: Final = {
    "relational-database": """postgres postgresql mysql mariadb sqlite sql-server mssql
        oracle cockroachdb aurora neon planetscale supabase-postgres alloydb spanner yugabytedb
        tidb rds cloud-sql""",
    "document-database": "mongodb mongo couchdb couchbase dynamodb firestore cosmosdb ravendb",
    "cache": "redis valkey memcached keydb dragonfly upstash elasticache varnish",
    "message-broker": """kafka rabbitmq nats jetstream sqs sns pubsub google-pubsub kinesis
        pulsar activemq zeromq redpanda eventbridge azure-service-bus mqtt mosquitto""",
    "job-queue": """celery rq dramatiq huey sidekiq resque river asynq bullmq bull
        delayed_job good_job oban temporal faktory""",
    "workflow-orchestrator": "airflow dagster prefect luigi argo-workflows kubeflow flyte mage",
    "search-engine": """elasticsearch opensearch meilisearch typesense algolia solr vespa
        typesense-cloud elastic-cloud""",
    "orm": """sqlalchemy django-orm prisma drizzle typeorm sequelize knex mongoose gorm ent
        sqlc diesel sea-orm activerecord hibernate jpa peewee tortoise ecto mikro-orm kysely
        exposed jooq""",
    "migration-tool": """alembic goose atlas flyway liquibase dbmate migrate golang-migrate
        sqitch knex-migrations prisma-migrate django-migrations tern""",
    "ci-system": """github-actions gh-actions gitlab-ci gitlab jenkins circleci travis
        travis-ci buildkite drone teamcity bamboo azure-pipelines bitbucket-pipelines
        codemagic bitrise semaphore woodpecker tekton concourse""",
    "gitops": "argo argocd argo-cd flux fluxcd spinnaker",
    "iac-tool": """terraform opentofu tofu pulumi cloudformation cdk aws-cdk crossplane
        ansible terragrunt bicep""",
    "container-builder": """kaniko buildx buildkit buildah docker-build jib ko podman-build
        bazel-rules-docker nixpacks cloud-native-buildpacks buildpacks""",
    "hosting-platform": """fly.io fly flyio heroku render railway vercel netlify
        cloudflare-pages cloudflare-workers app-engine cloud-run google-cloud-run ecs fargate
        eks gke aks kubernetes k8s nomad elastic-beanstalk digitalocean-app-platform
        azure-app-service lambda aws-lambda firebase-hosting github-pages surge""",
    "object-storage": """s3 aws-s3 gcs google-cloud-storage r2 cloudflare-r2 minio
        backblaze b2 azure-blob wasabi spaces digitalocean-spaces""",
    "cdn": "cloudfront fastly akamai cloudflare bunny bunnycdn cloudflare-cdn keycdn",
    "image-service": "cloudinary imgix imagekit thumbor sharp libvips vips imagemagick pillow",
    "error-tracking": """sentry rollbar bugsnag crashlytics firebase-crashlytics honeybadger
        airbrake raygun glitchtip""",
    "metrics": "prometheus datadog new-relic newrelic grafana-cloud victoriametrics statsd",
    "logging": """loki elk elasticsearch-logs logstash fluentd fluent-bit fluentbit vector
        papertrail logtail betterstack cloudwatch-logs splunk sumo-logic""",
    "tracing": "jaeger zipkin tempo honeycomb opentelemetry otel lightstep aws-x-ray",
    "log-library": """structlog loguru logging zap zerolog logrus slog log/slog winston
        pino bunyan log4j logback serilog tracing""",
    "feature-flags": """launchdarkly unleash flagsmith growthbook statsig configcat
        split optimizely flipper firebase-remote-config""",
    "product-analytics": """posthog amplitude mixpanel segment rudderstack heap plausible
        google-analytics ga4 firebase-analytics matomo fathom""",
    "email-provider": """sendgrid mailgun postmark ses amazon-ses mailchimp mandrill
        resend sparkpost brevo sendinblue""",
    "sms-provider": "twilio vonage messagebird plivo sinch",
    "payments": "stripe paddle braintree adyen paypal square mollie lemon-squeezy chargebee",
    "push-notifications": "fcm apns onesignal expo-notifications pusher-beams airship",
    "auth-provider": """auth0 okta keycloak cognito clerk firebase-auth supabase-auth
        workos stytch ory authelia"",""",
    "secrets-manager": """vault hashicorp-vault aws-secrets-manager secrets-manager sops
        doppler 1password infisical sealed-secrets external-secrets""",
    "service-mesh": "istio linkerd consul-connect kuma cilium-mesh",
    "ingress": """nginx-ingress ingress-nginx traefik aws-load-balancer-controller alb
        haproxy envoy contour kong ambassador emissary gateway-api""",
    "web-server": "nginx caddy apache httpd",
    "python-web-framework": "django flask fastapi starlette litestar pyramid tornado sanic",
    "wsgi-server": "gunicorn uvicorn hypercorn daphne waitress uwsgi",
    "js-web-framework": "express fastify koa hapi nestjs adonis hono",
    "frontend-framework": """react vue angular svelte solid preact nextjs next.js nuxt remix
        sveltekit astro gatsby ember qwik""",
    "mobile-framework": "flutter react-native expo ionic capacitor kotlin-multiplatform",
    "http-client": "requests httpx aiohttp urllib3 axios got node-fetch ky superagent okhttp",
    "python-package-manager": "pip pipenv poetry uv pdm hatch conda mamba pip-tools rye",
    "js-package-manager": "npm yarn pnpm bun",
    "bundler": "webpack vite rollup esbuild parcel turbopack swc rspack",
    "test-runner": """pytest unittest nose jest vitest mocha jasmine ava rspec minitest
        junit testng cargo-test go-test nextest cargo-nextest""",
    "e2e-test-tool": "playwright cypress puppeteer selenium webdriverio testcafe detox maestro",
    "linter": """ruff flake8 pylint eslint biome golangci-lint rubocop clippy stylelint
        tslint""",
    "formatter": "black isort prettier gofmt rustfmt autopep8 yapf",
    "type-checker": "mypy pyright pytype tsc flow",
    "docs-site": """mkdocs sphinx docusaurus mdbook starlight vitepress hugo jekyll
        gitbook readthedocs docsify nextra""",
    "monorepo-tool": "bazel pants buck nx turborepo lerna rush",
    "container-runtime": "docker podman containerd cri-o",
    "incident-tool": "pagerduty opsgenie incident.io firehydrant victorops splunk-oncall",
    "chat": "slack discord microsoft-teams teams mattermost",
    "issue-tracker": "jira linear github-issues youtrack shortcut clubhouse asana",
    "data-warehouse": "snowflake bigquery redshift databricks synapse clickhouse duckdb",
    "etl-tool": "fivetran airbyte stitch meltano dbt singer hevo",
    "ml-model": """xgboost lightgbm catboost random-forest logistic-regression
        scikit-learn sklearn pytorch tensorflow keras jax""",
    "experiment-tracking": "mlflow wandb weights-and-biases neptune comet",
    "local-storage": """hive isar sqflite drift objectbox realm shared_preferences
        userdefaults mmkv asyncstorage""",
    "cross-compiler": "cross cargo-zigbuild zigbuild cargo-cross xgo",
    "signing-tool": "minisign cosign sigstore gpg gnupg signify",
    "release-tool": "goreleaser cargo-dist release-please semantic-release changesets",
    "dependency-bot": "renovate dependabot",
    "state-management": """riverpod flutter_riverpod bloc flutter_bloc redux redux-toolkit
        mobx zustand pinia vuex recoil jotai getx ngrx xstate""",
    "cli-parser": "clap structopt argparse click typer cobra urfave-cli commander yargs docopt",
    "http-router": "chi gin echo gorilla-mux httprouter fiber actix-web axum warp rocket",
    "registry": """ghcr docker-hub ecr gcr artifact-registry quay harbor crates.io pypi
        npmjs""",
}


@lru_cache(maxsize=1)
def _table() -> dict[str, str]:
    out: dict[str, str] = {}
    for kind, names in _KINDS.items():
        for name in names.replace('"', " ").replace(",", " ").split():
            out.setdefault(name, kind)
            out.setdefault(name.replace("-", " "), kind)
            out.setdefault(name.replace("-", ""), kind)
    return out


def kind_of(name: str) -> str:
    """The kind of tool ``name`` is ("" if unknown): the whole name, else its first word
    ("typesense cloud" -> search-engine, "redis 7" -> cache)."""
    table = _table()
    low = " ".join(name.lower().replace("_", "-").split())
    if low in table:
        return table[low]
    first = low.split(" ", 1)[0]
    return table.get(first, table.get(low.replace(" ", "-"), ""))



# What a question calls a tool of each kind ("Which database ...", "What CI runs ...", "Where
# do we deploy ..."): the words the search adds to a text that names one (``kind_terms``), so
# a question in the kind's words finds the statement that names the tool.
_KIND_WORDS: Final = {
    "relational-database": "database db sql relational",
    "document-database": "database db nosql document store",
    "cache": "cache caching",
    "message-broker": "queue broker messaging message messages events stream streaming",
    "job-queue": "queue jobs job background worker workers tasks",
    "workflow-orchestrator": "orchestrator orchestration workflow dag dags scheduler",
    "search-engine": "search engine",
    "orm": "orm query builder",
    "migration-tool": "migration migrations",
    "ci-system": "ci pipeline pipelines checks continuous integration",
    "gitops": "gitops deploy deploys deployment delivery sync",
    "iac-tool": "infrastructure iac provisioning",
    "container-builder": "image images build builder container",
    "hosting-platform": "hosting host hosted deploy deployed deploys deployment platform",
    "object-storage": "storage bucket buckets object objects uploads blob",
    "cdn": "cdn edge",
    "image-service": "images image resizing resize thumbnails",
    "error-tracking": "errors error crash crashes exceptions tracking",
    "metrics": "metrics monitoring dashboards",
    "logging": "logs logging log aggregation",
    "tracing": "tracing traces spans",
    "log-library": "logger logging log library",
    "feature-flags": "feature flags flag toggles",
    "product-analytics": "analytics tracking",
    "email-provider": "email emails mail",
    "sms-provider": "sms text",
    "payments": "payments payment checkout",
    "push-notifications": "push notifications notification",
    "auth-provider": "auth authentication login sign identity sso",
    "secrets-manager": "secrets secret credentials",
    "service-mesh": "mesh mtls",
    "ingress": "ingress balancer controller",
    "web-server": "web server proxy",
    "python-web-framework": "web framework",
    "wsgi-server": "server",
    "js-web-framework": "web framework server",
    "frontend-framework": "frontend framework ui",
    "mobile-framework": "mobile framework",
    "http-client": "http client library",
    "python-package-manager": "package manager dependencies",
    "js-package-manager": "package manager dependencies",
    "bundler": "bundler bundling",
    "test-runner": "test tests testing runner",
    "e2e-test-tool": "e2e end-to-end browser tests",
    "linter": "linter lint linting",
    "formatter": "formatter formatting",
    "type-checker": "type checker types",
    "docs-site": "docs documentation site",
    "monorepo-tool": "monorepo build",
    "container-runtime": "container containers runtime",
    "incident-tool": "on-call oncall paging pages alerts incidents incident",
    "chat": "chat channel",
    "issue-tracker": "issues tracker tickets",
    "data-warehouse": "warehouse",
    "etl-tool": "etl ingestion transformation",
    "ml-model": "model algorithm",
    "experiment-tracking": "experiment experiments tracking registry",
    "local-storage": "local storage database persistence offline",
    "cross-compiler": "cross-compile cross-compiling compile",
    "signing-tool": "signing signature signatures",
    "release-tool": "release releases releasing",
    "dependency-bot": "dependency dependencies updates",
    "registry": "registry",
    "state-management": "state management",
    "cli-parser": "argument arguments parsing parser flags",
    "http-router": "router routing routes handlers",
}

# Names that are ordinary words too ("river", "drift", "render", "black"): a tool only where
# written as a name (capitalised, or in backticks).
_WORDLIKE: Final = frozenset("""
    river drift hive cross flux fly render split segment heap vector tracing logging spaces
    teams linear shortcut square expo ent ko tern got ky migrate hatch pants rush flow black
    sharp lambda next solid ember remix tempo vault realm bull luigi mage prefect atlas
    goose jib bamboo drone semaphore concourse argo tofu mollie envoy kong ambassador
    contour caddy apache express koa hapi react vue angular svelte gatsby ionic capacitor
    requests pip poetry uv yarn bun parcel jest mocha jasmine ava cypress detox maestro
    prettier hugo jekyll buck rush slack discord asana snowflake stitch singer keras comet
    neptune cosign harbor quay minio bunny matomo fathom resend ory kuma alb ecs railway
    surge click typer cobra commander chi gin echo fiber warp rocket provider bloc redux
    recoil getx sentry temporal celery spinnaker nomad honeycomb plausible amplitude docker
    ansible doppler unleash flipper pusher airship clerk pillow postmark paddle playwright
    puppeteer selenium rollup ruff biome
""".split())
"""Ordinary words, or words a sentence can start with: a tool only when capitalised
mid-text, in backticks, or followed by a version (checked by ``_named``)."""

_NAME: Final = re.compile(r"`[^`\n]{1,80}`|[A-Za-z][\w.+/-]*[\w+]|[A-Za-z]")
_VERSION_AFTER: Final = re.compile(r"\s*v?\d")


def _named(text: str, match: re.Match[str], low: str) -> bool:
    """Whether the word at ``match`` is written as a name: needed only for word-like names."""
    if low not in _WORDLIKE:
        return True
    word = match.group(0)
    if word.startswith("`") or _VERSION_AFTER.match(text, match.end()):
        return True
    if not word[:1].isupper():
        return False
    before = text[:match.start()].rstrip()
    # A capital after a sentence's end (or at the start) is no sign of a name.
    return bool(before) and before[-1] not in ".!?:;\n-*#>|"


@lru_cache(maxsize=4096)
def kind_terms(text: str) -> str:
    """The words a question would use for the kinds of the tools ``text`` names ("Neon
    Postgres 16" -> "database db sql relational"), once each; "" if it names none. Names
    are matched whole (a word, two words, or a backticked span's first word), never by
    prefix; a name that is an ordinary word counts only when written as one."""
    table = _table()
    kinds: dict[str, None] = {}
    found = list(_NAME.finditer(text))
    for i, m in enumerate(found):
        raw = m.group(0).strip("`").strip()
        low = raw.lower().rstrip(".")
        candidates = [low]
        if i + 1 < len(found) and not m.group(0).startswith("`"):
            nxt = found[i + 1].group(0).strip("`").lower()
            if text[m.end():found[i + 1].start()] in (" ", "-"):
                candidates.insert(0, f"{low} {nxt}")
        if " " in low:
            candidates.append(low.split(" ", 1)[0])
        for name in candidates:
            kind = table.get(name)
            if kind and (" " in name or _named(text, m, name)):
                kinds[kind] = None
                break
    words: dict[str, None] = {}
    for kind in kinds:
        for word in _KIND_WORDS.get(kind, "").split():
            words[word] = None
    return " ".join(words)

__all__ = ["kind_of", "kind_terms"]
