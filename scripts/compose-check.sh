#!/usr/bin/env bash
# Checks the compose stack without a Docker engine (none runs here): the compose file with
# `docker-compose config` (Debian's docker-compose package, installed when missing; else the
# `docker compose` plugin), the files it mounts and the Dockerfile copies, the gateway's demo
# config against the gateway's own schema, the Prometheus config with `promtool check config`,
# and the Grafana provisioning and dashboard JSON. Every PromQL expression of the dashboard is
# run against a real Prometheus by scripts/prometheus-e2e.sh. Idempotent; writes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/prometheus-install.sh

packages=(promtool=prometheus)
if ! command -v docker-compose >/dev/null 2>&1 && ! docker compose version >/dev/null 2>&1; then
  packages+=(docker-compose=docker-compose)
fi
ensure_packages "${packages[@]}"

if command -v docker-compose >/dev/null 2>&1; then
  echo "== docker-compose config ($(docker-compose version --short 2>/dev/null || docker-compose --version))"
  docker-compose -f docker-compose.yml config -q
else
  echo "== docker compose config ($(docker compose version --short))"
  docker compose -f docker-compose.yml config -q
fi

echo "== every bind-mounted path and every Dockerfile COPY source exists"
problems=0
while read -r path; do
  [ -e "$path" ] || { echo "error: docker-compose.yml mounts $path, which does not exist" >&2; problems=1; }
done < <(grep -oE '^\s+- \./[^:]+' docker-compose.yml | sed -E 's/^\s+- //')
# shellcheck disable=SC2013 # words, not lines: one COPY names several sources
for path in $(grep -E '^COPY ' Dockerfile | grep -v -- '--from=' | sed -E 's/^COPY +//' | awk '{ $NF = ""; print }'); do
  [ -e "$path" ] || { echo "error: Dockerfile copies $path, which does not exist" >&2; problems=1; }
  if grep -qxF "$path" .dockerignore; then echo "error: Dockerfile copies $path, which .dockerignore excludes" >&2; problems=1; fi
done
[ "$problems" -eq 0 ]
grep -q '^HEALTHCHECK' Dockerfile && grep -q '^USER node' Dockerfile

echo "== the gateway accepts deploy/toolgate.json on 0.0.0.0 (as in the container)"
CONFIG_FILE=deploy/toolgate.json HOST=0.0.0.0 node --import tsx -e "
  const { loadConfig } = await import('./src/services/config.ts')
  const config = loadConfig()
  console.log('config ok:', config.apiKeys.map(k => k.principal + ' [' + k.scopes.join(' ') + ']').join(', '))
"

echo "== promtool check config deploy/prometheus.yml (and its rule files)"
promtool check config deploy/prometheus.yml

echo "== Grafana provisioning and dashboard"
node -e "
  const fs = require('node:fs')
  const dashboard = JSON.parse(fs.readFileSync('deploy/grafana/dashboards/toolgate.json', 'utf8'))
  const datasource = fs.readFileSync('deploy/grafana/provisioning/datasources/prometheus.yml', 'utf8')
  const uid = /^\s+uid:\s*(\S+)/m.exec(datasource)?.[1]
  if (!uid) throw new Error('the provisioned data source has no uid')
  const provider = fs.readFileSync('deploy/grafana/provisioning/dashboards/toolgate.yml', 'utf8')
  const compose = fs.readFileSync('docker-compose.yml', 'utf8')
  const path = /^\s+path:\s*(\S+)/m.exec(provider)?.[1]
  if (!path || !compose.includes('./deploy/grafana/dashboards:' + path + ':')) throw new Error('the dashboard provider path ' + path + ' is not where docker-compose.yml mounts the dashboards')
  const titles = dashboard.panels.map(p => p.title)
  for (const want of ['Calls by outcome', 'Latency percentiles by tool', 'Calls by effect', 'Calls in flight by tool', 'Error ratio by tool']) {
    if (!titles.includes(want)) throw new Error('the dashboard has no panel ' + JSON.stringify(want))
  }
  for (const panel of dashboard.panels) {
    if (panel.datasource?.uid !== uid) throw new Error('panel ' + panel.title + ' does not use the provisioned data source ' + uid)
    if (!panel.targets?.length || panel.targets.some(t => typeof t.expr !== 'string' || t.expr === '')) throw new Error('panel ' + panel.title + ' has a target without expr')
  }
  const ids = new Set(dashboard.panels.map(p => p.id))
  if (ids.size !== dashboard.panels.length) throw new Error('duplicate panel ids')
  console.log('dashboard ' + dashboard.uid + ': ' + dashboard.panels.length + ' panels, ' + dashboard.panels.flatMap(p => p.targets).length + ' queries, data source ' + uid)
"
echo "compose check passed"
