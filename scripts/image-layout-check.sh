#!/usr/bin/env bash
# No Docker engine here: rebuild the image's final layout in a temporary folder, the way the
# Dockerfile does (production dependencies only, the compiled dist/, TOOLS_DIR=dist/tools),
# and check it serves the shipped tools and a mounted tools folder without node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d)
pid=
cleanup () { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

[ -f dist/bin/toolgate.js ] || npm run --silent build
mkdir -p "$tmp/app" "$tmp/mounted"
cp package.json package-lock.json "$tmp/app/"
(cd "$tmp/app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline > /dev/null)
cp -r dist "$tmp/app/dist"
cat > "$tmp/mounted/wave.ts" <<'TS'
import { z } from 'zod'
import { defineTool } from 'toolgate'
export default defineTool({
  id: 'wave', kind: 'read', description: 'Wave back.',
  inputSchema: z.object({}), outputSchema: z.object({ wave: z.literal(true) }),
  isReadOnly: true, isConcurrencySafe: true, authorize () {}, execute: () => ({ wave: true as const }),
})
TS

serve () { # TOOLS_DIR, then a tool to call and the body expected
  local log="$tmp/serve.log"
  # exec: $! is then the gateway itself, not a subshell that would leave it running when killed.
  (cd "$tmp/app" && HOST=127.0.0.1 PORT=0 TOOLS_DIR="$1" exec node dist/bin/toolgate.js serve > "$log" 2>&1) &
  pid=$!
  local address=
  for _ in $(seq 1 100); do
    address=$(grep -o '"address":"http://[^"]*"' "$log" | head -1 | cut -d'"' -f4 || true)
    [ -n "$address" ] && break
    sleep 0.1
  done
  [ -n "$address" ] || { cat "$log"; echo "FAIL: no address"; exit 1; }
  local body
  body=$(curl -s -X POST -H 'content-type: application/json' -d '{}' "$address/tools/$2")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  echo "$body" | grep -q "$3" || { echo "FAIL: $2 answered $body"; exit 1; }
  echo "ok: TOOLS_DIR=$1 serves $2"
}

[ ! -d "$tmp/app/node_modules/typescript" ] || { echo "FAIL: dev dependencies in the production install"; exit 1; }
serve "$tmp/app/dist/tools" time_now '"timeZone":"UTC"'
serve "$tmp/mounted" wave '"wave":true'
