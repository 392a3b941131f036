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
        junit testng cargo-test go-test""",
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


__all__ = ["kind_of"]
