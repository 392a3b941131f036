"""Words that are names, and words that are not.

``is_known_tool`` says whether a lowercase word names a development tool, library or service:
the curated list below, the most used packages of PyPI and npm (``data/packages.txt``:
PyPI's 2,500 most downloaded projects and npm's 2,500 most downloaded unscoped packages,
November 2026), and the project's own dependencies (``project_names``, read from its
manifests by ``lintaid.workspace.manifests`` and handed to the engine). A tool whose name is
an ordinary English word ("poetry", "black", "requests") is not a name by itself: only where
the statement puts a value ("switched to poetry"), which ``lintaid.policy.statements``
decides.

``COMMON_WORDS`` is ordinary English and generic software vocabulary: a capitalised word
from it ("Cache", "Monday") is not a name by shape alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from typing import Final

GENERIC_ACRONYMS: Final = frozenset(
    """API APIS CI CD DB SQL HTTP HTTPS URL URI JSON YAML XML HTML CSS JS TS UI UX ID IDS OK
    PR PRS MR TODO FYI ETA TBD UTC GMT CET CEST EOD EU US UK IP TCP UDP DNS TLS SSL SSH CPU
    GPU RAM SSD IO OS VM VMS SDK CLI GUI QA QE SLA SLO SLI KPI ROI P50 P95 P99 RPS QPS TTL
    ENV DEV PROD MVP POC README FAQ ASAP IMO IMHO AFAIK NB PS CTO CEO PM SRE DBA JWT""".split())

COMMON_WORDS: Final = frozenset(
    """a about above across act action actually add added adding after again against ago
    agree ahead all allow allowed almost alone along already also although always am among
    amount an and another answer any anyone anything anyway apart app apps are area around
    as ask asked at available avoid away back bad base based basic be because become been
    before begin behind being below best better between big bit both bottom break bring
    broken bug bugs build builds built but by call called calls came can cannot case cases
    cause certain change changed changes check checked checks choice clean clear close code
    come comes coming common complete config configured cost could couple course cover
    create created current currently cut data date day days deal default defaults delete
    deploy deployed detail details did different do does doing done down during each early
    easy edit either else empty end enough entire error errors even event events ever every
    everything exactly example except exist expected extra fact fail failed fails fair fall
    false far fast feature features few field file files final finally find fine first fix
    fixed fixes flag flow follow following for form found free from front full fully get gets
    getting give given go goes going gone good got great group groups had half handle happen
    happy hard has have having he head help her here high his hold home hope how however i
    idea if important in include included including index info input inside instead into is
    issue issues it item items its itself job jobs just keep keeps key keys kind know known
    large last late later latest lead least leave left less let level like likely limit
    limits line lines list little live load local log logs long look looks lot low made main
    major make makes making many match may maybe me mean means merge message might minor
    mode model more most move moved much must my name names need needed needs never new next
    nice no none not note notes nothing now number of off often old on once one only open
    or order other our out output over own page part pass passed past path per place plan
    plus point possible post power present pretty probably problem process pull push put
    quick quite rather read ready real really reason recent record red release remove removed
    request required rest result results return right rule rules run running runs safe same
    save say second see seems send sent set sets setting settings setup several shape she
    short should show side simple since single size small so some something soon source
    special split stack stage start started state status step steps still stop store stuff
    such support sure system table take task tasks team test tested tests than thanks that
    the their them then there these they thing things think this those though three through
    time times to today together too tool tools top total track true try turn two type types
    under until up update updated upgrade us use used user users uses using usual value values
    version very via want was way we week weeks well were what when where whether which while
    who whole why will with within without word work works worker workers would write wrong
    yes yet you your
    monday tuesday wednesday thursday friday saturday sunday january february march april
    june july august september october november december
    service services server servers client clients cache queue queues worker database storage
    bucket buckets region regions cluster clusters node nodes pool pools image images
    endpoint endpoints route routes handler handlers module modules package packages library
    libraries framework frameworks platform provider providers account accounts role roles
    secret secrets token tokens key owner owners review reviews staging production prod
    deployment deployments pipeline pipelines workflow workflows schedule cron timeout
    timeouts retry retries policy policies backup backups metric metrics alert alerts dashboard dashboards
    monitoring logging tracing migration migrations schema schemas table tables column columns
    query queries model models feed feeds upload uploads download downloads payment payments
    billing invoice invoices email emails notification notifications push auth login session
    sessions api web mobile backend frontend admin docs documentation readme changelog
    monorepo repo repos repository branch branches commit commits tag tags merge release
    releases ticket tickets sprint meeting standup summary overview status update done
    good great thanks ok okay sure yes no hi hello hey please sorry cool nice
    p50 p75 p90 p95 p99 p999 latency throughput rerun
    policy policies strategy strategies guideline guidelines convention conventions standard
    standards approach approaches design decision decisions procedure procedures""".split())

# Development tools and services, lowercase; multi-word names as they are written.
CURATED_TOOLS: Final = frozenset(
    """postgres postgresql mysql mariadb sqlite redis valkey memcached mongodb mongo cassandra
    dynamodb cockroachdb clickhouse snowflake bigquery redshift databricks duckdb elasticsearch
    opensearch meilisearch typesense algolia solr kafka rabbitmq nats sqs sns pubsub kinesis
    pulsar celery rq dramatiq sidekiq river asynq temporal airflow dagster prefect luigi dbt
    fivetran airbyte spark flink beam pandas polars numpy scikit-learn sklearn xgboost
    lightgbm catboost pytorch tensorflow keras jax mlflow wandb
    s3 gcs r2 minio backblaze b2 cloudfront cloudflare fastly akamai bunny netlify vercel
    heroku render fly.io flyio railway digitalocean linode hetzner aws gcp azure eks gke aks
    ecs fargate lambda ec2 rds aurora cloudrun kubernetes k8s k3s nomad consul vault terraform
    opentofu tofu pulumi ansible chef puppet helm kustomize argo argocd flux atlantis
    spacelift docker podman kaniko buildx buildkit buildah jib ko skaffold tilt
    jenkins circleci travis gitlab github bitbucket buildkite drone teamcity bamboo
    sentry datadog newrelic honeycomb grafana prometheus loki tempo jaeger zipkin
    opentelemetry otel splunk elk kibana logstash fluentd fluentbit fluent-bit vector
    pagerduty opsgenie statuspage
    stripe paddle braintree adyen paypal twilio sendgrid mailgun postmark ses mailchimp
    firebase fcm apns onesignal supabase auth0 okta keycloak cognito clerk
    nginx caddy traefik envoy haproxy istio linkerd
    django flask fastapi starlette litestar pyramid tornado aiohttp sanic celery gunicorn
    uvicorn hypercorn daphne sqlalchemy alembic peewee tortoise pydantic marshmallow attrs
    httpx requests urllib3 aiohttp grpc grpcio protobuf thrift avro
    pytest unittest nose tox nox hypothesis mypy pyright ruff flake8 pylint black isort
    poetry pipenv pip uv pdm hatch setuptools conda mamba pyenv
    rails sinatra rspec rubocop bundler laravel symfony composer phpunit
    spring springboot quarkus micronaut maven gradle junit
    go gin echo chi fiber gorm sqlc pgx goose atlas golangci-lint
    rust cargo tokio axum actix rocket diesel serde clippy rustfmt
    node nodejs deno bun npm pnpm yarn express fastify koa nestjs nextjs next.js nuxt remix
    astro svelte sveltekit vue react angular solid preact vite webpack rollup esbuild swc
    turbopack parcel babel jest vitest mocha playwright cypress puppeteer selenium eslint
    prettier biome tsc typescript storybook tailwind tailwindcss prisma drizzle typeorm
    sequelize knex mongoose zod trpc graphql apollo relay
    flutter dart swift kotlin expo fastlane xcode
    sentry launchdarkly unleash flagsmith growthbook statsig posthog amplitude mixpanel
    segment rudderstack snowplow
    bazel pants buck nx turborepo lerna rush make cmake ninja meson
    git svn mercurial gerrit renovate dependabot
    slack discord teams jira linear notion confluence
    openai anthropic claude gemini llama ollama vllm langchain
    casbin opa cedar
    localstack testcontainers wiremock mockserver
    cdn dns""".split())


ENGLISH_TOOL_NAMES: Final = frozenset(
    """river temporal beam spark chef puppet vault consul nomad render railway bunny flux tilt
    drone bamboo tempo vector echo fiber atlas goose rocket express remix solid relay apollo
    swift make ninja buck pants rush segment linear notion slack teams cedar black poetry
    requests next spring composer tortoise nose hypothesis mocha jest attrs flask chi gin
    fastlane expo flutter dart parcel babel prettier storybook knex relay mongoose amplitude
    snowplow vector loki jaeger fluent sentry render pyramid tornado sanic rails sinatra
    bundler rust cargo rocket diesel go node bun yarn koa vue react angular preact astro
    svelte""".split())
"""Tools whose names are ordinary English words: after a preposition, written lowercase and
with no transition near, a common noun ("camping by the river"), not a choice of tool."""


@lru_cache(maxsize=1)
def _packages() -> frozenset[str]:
    try:
        text = resources.files(__package__).joinpath("data/packages.txt").read_text("utf-8")
    except (FileNotFoundError, OSError):
        return frozenset()
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def is_known_tool(word: str, project: Iterable[str] = ()) -> bool:
    """Whether ``word`` (any case) names a tool by itself (see the module docstring)."""
    low = word.lower().strip(".")
    if low in CURATED_TOOLS:
        return low not in COMMON_WORDS or low in _AMBIGUOUS_BUT_TOOLS
    if low in COMMON_WORDS:
        return False
    return low in project


def is_tool_word(word: str) -> bool:
    """Whether ``word`` is a tool's name, ordinary English words included ("poetry"): for
    positions where a statement puts a value."""
    from .kinds import kind_of

    low = word.lower().strip(".")
    return low in CURATED_TOOLS or low in _packages() or bool(kind_of(low))


_AMBIGUOUS_BUT_TOOLS: Final[frozenset[str]] = frozenset()
"""Curated tools that are also common words and still names on their own: none so far."""


__all__ = ["COMMON_WORDS", "CURATED_TOOLS", "ENGLISH_TOOL_NAMES", "GENERIC_ACRONYMS", "is_known_tool",
           "is_tool_word"]
