# shellcheck shell=bash
# Sourced by scripts/prometheus-e2e.sh and scripts/compose-check.sh (not run on its own).
# ensure_packages CMD=PACKAGE ...: install, from Debian's archive, each package whose command
# is missing, with one `apt-get update` per run. Installing the prometheus package starts no
# service (no systemd here); the scripts start the binary themselves.
ensure_packages () {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%=*}" >/dev/null 2>&1 && continue
    [[ " ${missing[*]} " == *" ${pair#*=} "* ]] || missing+=("${pair#*=}")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "error: ${missing[*]} missing and not root, so apt-get cannot install it: run 'sudo apt-get install -y --no-install-recommends ${missing[*]}' first" >&2
    return 1
  fi
  if [ -z "${TOOLGATE_APT_UPDATED:-}" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    export TOOLGATE_APT_UPDATED=1
  fi
  echo "installing ${missing[*]} (Debian packages)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# A TCP port free on 127.0.0.1 right now.
free_port () {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# wait_http URL SECONDS: until URL answers 2xx, or fail.
wait_http () {
  local url=$1 deadline=$((SECONDS + $2))
  until curl -fsS -o /dev/null "$url" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then echo "error: $url did not answer within $2 s" >&2; return 1; fi
    sleep 0.2
  done
}
