#!/usr/bin/env bash
# A real Prometheus scrapes a real gateway. Starts the gateway (shipped tools) and Prometheus on
# 127.0.0.1 at free ports, drives calls with curl, then checks through Prometheus's query API
# that PromQL returns exactly the counts of what was sent; also runs `promtool check metrics` on
# the gateway's /metrics, `promtool check config` on the generated config, and every PromQL
# expression of the Grafana dashboard, and evaluates deploy/alerts.yml. Installs Debian's prometheus package when it is missing.
# Stops only what it started, by PID. Idempotent: everything lives in a fresh temp folder.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/prometheus-install.sh

ensure_packages prometheus=prometheus promtool=prometheus

tmp=$(mktemp -d)
GW_PID='' PROM_PID='' UP_GW_PID='' ITEMS_PID='' TOKENS_PID=''
cleanup () {
  local rc=$?
  for pid in $PROM_PID $GW_PID $UP_GW_PID $ITEMS_PID $TOKENS_PID; do kill "$pid" 2>/dev/null || true; done
  for pid in $PROM_PID $GW_PID $UP_GW_PID $ITEMS_PID $TOKENS_PID; do wait "$pid" 2>/dev/null || true; done
  if [ "$rc" -ne 0 ]; then
    echo "--- gateway log (tail)"; tail -n 30 "$tmp/gateway.log" 2>/dev/null || true
    echo "--- prometheus log (tail)"; tail -n 30 "$tmp/prometheus.log" 2>/dev/null || true
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT

# Two principals. API_KEYS cannot carry scopes that contain ':' (it splits on ':'), so the
# keys go in a config file.
KEY=$(node -e "console.log(require('crypto').randomBytes(24).toString('hex'))")
VIEWER_KEY=$(node -e "console.log(require('crypto').randomBytes(24).toString('hex'))")
digest () { printf %s "$1" | sha256sum | cut -d' ' -f1; }
cat > "$tmp/gateway.json" <<JSON
{ "apiKeys": [
  { "principal": "ci", "sha256": "$(digest "$KEY")", "scopes": ["tools:read", "tools:call", "ledger:transfer"] },
  { "principal": "viewer", "sha256": "$(digest "$VIEWER_KEY")", "scopes": ["tools:read", "tools:call"] }
] }
JSON

GW_PORT=$(free_port)
GW="http://127.0.0.1:$GW_PORT"
# One process (node with tsx's loader), so its PID is the gateway's. No REDIS_URL: the demo
# ledger must start from its seed balances, in memory, at every run.
env -u REDIS_URL -u REDIS_PREFIX HOST=127.0.0.1 PORT="$GW_PORT" TOOLS_DIR=./tools CONFIG_FILE="$tmp/gateway.json" LOG_LEVEL=warn \
  node dist/bin/toolgate.js serve > "$tmp/gateway.log" 2>&1 &
GW_PID=$!
wait_http "$GW/readyz" 60
echo "gateway $GW (pid $GW_PID)"

# A second gateway fronts an HTTP API with upstream credentials, so the dashboard's credential
# panels have data: with its own OAuth token (client credentials) and on behalf of the caller
# (token exchange), against a local JSON endpoint and the smallest token endpoint (the
# benchmark's targets). Prometheus keeps only its credential metrics, so the exact counts
# asserted below are the first gateway's alone.
listening () { # LOG: the URL a target prints once it listens
  for _ in $(seq 1 300); do
    if grep -q '^listening on ' "$1"; then sed -n 's/^listening on //p' "$1"; return 0; fi
    sleep 0.1
  done
  echo "error: $1 never said where it listens" >&2; return 1
}
node --import tsx bench/targets/json-endpoint.ts > "$tmp/items.log" 2>&1 &
ITEMS_PID=$!
node --import tsx bench/targets/token-endpoint.ts > "$tmp/tokens.log" 2>&1 &
TOKENS_PID=$!
ITEMS=$(listening "$tmp/items.log")
TOKENS=$(listening "$tmp/tokens.log")
node --import tsx -e "import('./bench/targets/json-endpoint.ts').then(m => process.stdout.write(JSON.stringify(m.ITEM_DOCUMENT)))" > "$tmp/items.json"
cat > "$tmp/upstreams.json" <<JSON
{ "openapi": {
  "items": { "document": "./items.json", "baseUrl": "$ITEMS", "auth": { "type": "client_credentials", "tokenEndpoint": "$TOKENS/token", "clientId": "e2e", "clientSecret": "e2e-secret" } },
  "mine": { "document": "./items.json", "baseUrl": "$ITEMS", "auth": { "type": "token_exchange", "tokenEndpoint": "$TOKENS/token", "clientId": "e2e", "clientSecret": "e2e-secret", "audience": "items" } }
} }
JSON
UP_GW_PORT=$(free_port)
UP_GW="http://127.0.0.1:$UP_GW_PORT"
env -u REDIS_URL -u REDIS_PREFIX HOST=127.0.0.1 PORT="$UP_GW_PORT" TOOLS_DIR=./tools CONFIG_FILE="$tmp/gateway.json" UPSTREAMS_FILE="$tmp/upstreams.json" LOG_LEVEL=warn \
  node dist/bin/toolgate.js serve > "$tmp/upstream-gateway.log" 2>&1 &
UP_GW_PID=$!
wait_http "$UP_GW/readyz" 60
echo "gateway with upstream credentials $UP_GW (pid $UP_GW_PID)"

PROM_PORT=$(free_port)
PROM="http://127.0.0.1:$PROM_PORT"
cat > "$tmp/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - '$PWD/deploy/alerts.yml'
scrape_configs:
  - job_name: toolgate
    metrics_path: /metrics
    static_configs:
      - targets: ['127.0.0.1:$GW_PORT']
  - job_name: toolgate-credentials
    metrics_path: /metrics
    static_configs:
      - targets: ['127.0.0.1:$UP_GW_PORT']
    metric_relabel_configs:
      - source_labels: [__name__]
        regex: 'toolgate_upstream_(tokens_fetched_total|credential_failures_total)'
        action: keep
YAML
promtool check config "$tmp/prometheus.yml"
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn > "$tmp/prometheus.log" 2>&1 &
PROM_PID=$!
wait_http "$PROM/-/ready" 60
echo "prometheus $PROM (pid $PROM_PID), $(prometheus --version 2>&1 | head -n 1)"
# The zero series are scraped before any call, as an operator's Prometheus would see them.
node --import tsx scripts/prometheus-assert.ts wait "$PROM" 'sum(up{job="toolgate"})' 1

TALLY="$tmp/calls.tsv"
: > "$TALLY"
n=0
# call TOOL STATUS OUTCOME BODY [API_KEY|-] [IDEMPOTENCY_KEY]: one POST; its status must be
# STATUS; tally its OUTCOME (none for an unknown tool).
call () {
  local tool=$1 want=$2 outcome=$3 body=$4 key=${5:-$KEY} got
  local headers=(-H 'content-type: application/json')
  [ "$key" = - ] || headers+=(-H "x-api-key: $key")
  n=$((n + 1))
  # ledger_transfer requires an idempotency key: a new one per intended call, unless given.
  [ "$tool" = ledger_transfer ] && headers+=(-H "Idempotency-Key: ${6:-e2e-$$-$n}")
  got=$(curl -sS -o "$tmp/last.json" -w '%{http_code}' -X POST "${headers[@]}" --data "$body" "$GW/tools/$tool")
  if [ "$got" != "$want" ]; then
    echo "error: POST /tools/$tool $body answered $got, expected $want: $(cat "$tmp/last.json")" >&2
    exit 1
  fi
  [ -z "$outcome" ] || printf '%s\t%s\n' "$tool" "$outcome" >> "$TALLY"
}

# No effects declared.
for zone in UTC Europe/Paris Asia/Tokyo America/New_York Australia/Sydney; do
  call time_now 200 ok "{\"timeZone\":\"$zone\"}"
done
call time_now 400 invalid_input '{"timeZone":5}'
# Irreversible.
for key in a b c; do call notes_write 200 ok "{\"key\":\"e2e-$key\",\"text\":\"note $key\"}"; done
call notes_write 409 tool_error '{"key":"e2e-a","text":"again"}'           # NOTE_EXISTS
call notes_delete 200 ok '{"key":"e2e-a"}'
call notes_delete 200 ok '{"key":"e2e-b"}'
call notes_delete 404 tool_error '{"key":"e2e-missing"}'                   # NOTE_NOT_FOUND
# Financial, irreversible, affects-others (alice 100.00, bob 50.00, carol 0.00).
call ledger_transfer 200 ok '{"from":"alice","to":"bob","amount":1000}'
call ledger_transfer 200 ok '{"from":"alice","to":"carol","amount":2000}'
call ledger_transfer 200 ok '{"from":"bob","to":"carol","amount":500}' "$KEY" e2e-once
call ledger_transfer 200 replayed '{"from":"bob","to":"carol","amount":500}' "$KEY" e2e-once   # a retry: the stored receipt
call ledger_transfer 409 tool_error '{"from":"carol","to":"alice","amount":9000}'   # INSUFFICIENT_FUNDS
call ledger_transfer 409 tool_error '{"from":"bob","to":"alice","amount":40000}'   # INSUFFICIENT_FUNDS
call ledger_transfer 403 forbidden '{"from":"alice","to":"bob","amount":100}' "$VIEWER_KEY"   # no ledger:transfer scope
call ledger_transfer 401 unauthenticated '{"from":"alice","to":"bob","amount":100}' -
# Unknown tool names: 404, and never a series.
for i in 1 2 3 4 5; do call "no_such_tool_$i$RANDOM" 404 '' '{}'; done
echo "$(wc -l < "$TALLY") calls sent through the shipped tools"

# Through the second gateway: the gateway's own token (fetched once for both calls), and an API
# key refused where the caller's token is exchanged (403, nothing sent).
for id in 7 8; do
  got=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H 'content-type: application/json' -H "x-api-key: $KEY" --data "{\"id\":\"$id\"}" "$UP_GW/tools/items_get_item")
  [ "$got" = 200 ] || { echo "error: items_get_item answered $got" >&2; exit 1; }
done
got=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H 'content-type: application/json' -H "x-api-key: $KEY" --data '{"id":"7"}' "$UP_GW/tools/mine_get_item")
[ "$got" = 403 ] || { echo "error: mine_get_item with an API key answered $got, not 403" >&2; exit 1; }
node --import tsx scripts/prometheus-assert.ts wait "$PROM" 'sum(toolgate_upstream_tokens_fetched_total{job="toolgate-credentials"})' 1
node --import tsx scripts/prometheus-assert.ts wait "$PROM" 'sum(toolgate_upstream_credential_failures_total{job="toolgate-credentials",reason="not_exchangeable"})' 1

echo "== promtool check metrics on the gateway's /metrics"
curl -fsS "$GW/metrics" > "$tmp/metrics.txt"
grep -q '^toolgate_tool_calls_total{' "$tmp/metrics.txt" || { echo "error: /metrics has no toolgate_tool_calls_total" >&2; exit 1; }
promtool check metrics < "$tmp/metrics.txt"
echo "promtool: $(grep -c '^[a-z]' "$tmp/metrics.txt") samples, no problem"

echo "== PromQL through Prometheus's HTTP API"
node --import tsx scripts/prometheus-assert.ts calls "$PROM" "$TALLY"

echo "== every PromQL expression of the Grafana dashboard runs"
node --import tsx scripts/prometheus-assert.ts dashboard "$PROM" deploy/grafana/dashboards/toolgate.json

echo "== every alerting rule of deploy/alerts.yml evaluates"
node --import tsx scripts/prometheus-assert.ts rules "$PROM" "$(grep -c '^ *- alert:' deploy/alerts.yml)"

echo "prometheus e2e passed"
