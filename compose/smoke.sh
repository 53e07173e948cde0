#!/usr/bin/env bash
# Smoke test of the compose topology (compose/docker-compose.yml) where a Docker engine is
# reachable: builds and starts it with freshly generated secrets (a temporary env file, a
# self-signed certificate for HAProxy, a metrics-key file for Prometheus), waits for the edges to
# answer through HAProxy, then checks, through HAProxy only:
#   1. GET /api/v1/public/status on {base_url} (api.mdp.localhost)
#   2. register an operator account, log in, raise it to Quant, create an API key (console API)
#   3. one event of the unified SSE stream (stream.us.mdp.localhost)
#   4. JSON-RPC eth_blockNumber (rpc.us.mdp.localhost)
#   5. gRPC health of price.PriceService (grpc.us.mdp.localhost) with grpcurl, or where grpcurl is absent with
#      compose/grpc-health.mjs (the repository's grpc-js; needs `npm ci`), skipped when neither
# prints a summary and tears everything down (containers, networks, volumes, temporary files).
# Without a Docker engine it says so and exits 0.
#
#   compose/smoke.sh                 # from anywhere in the repository
#   SMOKE_KEEP=1 compose/smoke.sh    # leave the topology up afterwards (tear down: the printed command)
#   SMOKE_WAIT_S=600 compose/smoke.sh  # how long to wait for the edges (default 300 s)
#   SMOKE_SERVICES="lb producer-sim worker-1 worker-2" compose/smoke.sh
#       # start only these services and what they depend on (here: all but Prometheus and Grafana,
#       # which no step checks; for an engine without those images, e.g. podman-stand-ins.sh)
#
# The compose files are not edited: an override file in the temporary directory adds what a smoke
# test needs (the certificate mount); the operator is made with `app/operator.ts grant` in a container.
set -euo pipefail

if ! command -v docker >/dev/null 2>&1 || ! docker info >/dev/null 2>&1; then
  echo "no Docker engine here: skipped"
  exit 0
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
wait_s="${SMOKE_WAIT_S:-300}"
project="mdp-smoke-$$"
tmp="$(mktemp -d)"
operator="smoke-operator@example.com"
password="Smoke-Passw0rd-$(openssl rand -hex 4)"
read -ra services <<<"${SMOKE_SERVICES:-}"

if docker compose version >/dev/null 2>&1; then
  compose_cmd=(docker compose)
elif command -v docker-compose >/dev/null 2>&1; then
  compose_cmd=(docker-compose)
else
  echo "a Docker engine but neither 'docker compose' nor 'docker-compose': skipped"
  exit 0
fi
dc() {
  "${compose_cmd[@]}" -p "$project" --env-file "$tmp/smoke.env" \
    -f "$here/docker-compose.yml" -f "$tmp/override.yml" "$@"
}

# ---- results ------------------------------------------------------------------------------------
declare -a results=()
failed=0
pass() { results+=("PASS  $1"); echo "ok: $1"; }
skip() { results+=("SKIP  $1"); echo "skipped: $1"; }
fail() {
  results+=("FAIL  $1"); failed=1; echo "FAILED: $1" >&2
}
summary() {
  echo
  echo "== compose smoke summary (project $project) =="
  printf '  %s\n' "${results[@]}"
  if [ "$failed" -eq 0 ]; then echo "  result: all steps passed"; else echo "  result: FAILED"; fi
}

teardown() {
  local code=$?
  if [ "$failed" -ne 0 ] || [ "$code" -ne 0 ]; then
    echo "--- last log lines of each service ---" >&2
    dc logs --no-color --tail 20 >&2 2>/dev/null || true
  fi
  summary
  if [ "${SMOKE_KEEP:-0}" = "1" ]; then
    echo "left running; tear down with:"
    echo "  ${compose_cmd[*]} -p $project --env-file $tmp/smoke.env -f $here/docker-compose.yml -f $tmp/override.yml down -v"
  else
    echo "tearing down..."
    # Again while containers remain: one restarting (restart: unless-stopped) can escape a first pass.
    for _ in 1 2 3; do
      dc down -v --remove-orphans >/dev/null 2>&1 || true
      [ -z "$(dc ps -q 2>/dev/null)" ] && break
    done
    rm -rf "$tmp"
  fi
  if [ "$failed" -ne 0 ] && [ "$code" -eq 0 ]; then exit 1; fi
  exit "$code"
}
trap teardown EXIT

# ---- secrets, certificate, override -------------------------------------------------------------
# A letter first: nats-server reads an environment value that starts with a digit as a number and
# fails to parse nats-auth.conf (nats-io/nats-server#3431, #5189), e.g. "3a9f..." or "5e7b...".
rand() { printf 's%s' "$(openssl rand -hex 24)"; }
mkdir -p "$tmp/certs"
# Every public host name is on 443 of the balancer (compose's defaults, *.mdp.localhost).
hosts=(api stream.us stream.jp rpc.us rpc.jp grpc.us grpc.jp sync.us sync.jp)
san="$(printf 'DNS:%s.mdp.localhost,' "${hosts[@]}")"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=mdp.localhost" \
  -addext "subjectAltName=${san%,}" \
  -keyout "$tmp/certs/edge.key" -out "$tmp/certs/edge.crt" >/dev/null 2>&1
cat "$tmp/certs/edge.crt" "$tmp/certs/edge.key" >"$tmp/certs/edge.pem"
chmod 644 "$tmp/certs/edge.pem"
# A placeholder until step 2 creates a real key of scope `metrics` (written into the same file).
echo "mdk_live_placeholder" >"$tmp/metrics.key"
chmod 644 "$tmp/metrics.key"
cat >"$tmp/smoke.env" <<EOF
API_KEY_SECRET=$(rand)
NATS_PRODUCER_PASSWORD=$(rand)
NATS_GATEWAY_PASSWORD=$(rand)
NATS_ACCOUNTS_PASSWORD=$(rand)
NATS_WORKER_PASSWORD=$(rand)
NATS_ADMIN_PASSWORD=$(rand)
GRAFANA_ADMIN_PASSWORD=$(rand)
MDP_METRICS_API_KEY_FILE=$tmp/metrics.key
PUBLIC_BASE_URL=https://api.mdp.localhost
EOF
cat >"$tmp/override.yml" <<EOF
services:
  lb:
    volumes: ["$tmp/certs:/certs:ro"]
EOF

# ---- up -----------------------------------------------------------------------------------------
echo "validating, building and starting $project (temporary files in $tmp)..."
if ! dc config --quiet; then fail "docker compose config"; exit 1; fi
if ! dc build; then fail "image build"; exit 1; fi
# ${a[@]+...}: an empty array under `set -u` on bash < 4.4 (macOS) is otherwise an unbound variable.
if ! dc up -d ${services[@]+"${services[@]}"}; then fail "docker compose up"; exit 1; fi
pass "topology up ($(dc ps -q | wc -l | tr -d ' ') containers)"

base="https://api.mdp.localhost"
unified="https://stream.us.mdp.localhost"
jsonrpc="https://rpc.us.mdp.localhost"
# Every name reaches the balancer on this machine's 443, whatever the resolver says of .localhost.
c() { curl -sk --max-time 10 --connect-to ::127.0.0.1:443 "$@"; }

# Every edge answers /healthz through HAProxy, and {base_url} its public status.
wait_for() { # what url
  local deadline=$((SECONDS + wait_s))
  until [ "$(c -o /dev/null -w '%{http_code}' "$2")" = "200" ]; do
    if [ $SECONDS -ge $deadline ]; then fail "$1 not healthy within ${wait_s} s ($2)"; return 1; fi
    sleep 2
  done
}
wait_for "{base_url}" "$base/api/v1/public/status" || exit 1
wait_for "unified US" "$unified/healthz" || exit 1
wait_for "JSON-RPC US" "$jsonrpc/healthz" || exit 1
pass "healthy through HAProxy"

# ---- 1. public status ---------------------------------------------------------------------------
status_body="$(c "$base/api/v1/public/status" || true)"
if echo "$status_body" | jq -e '.status and (.transports | length > 0)' >/dev/null 2>&1; then
  pass "GET /api/v1/public/status: $(echo "$status_body" | jq -r .status)"
else
  fail "GET /api/v1/public/status: $status_body"
fi

# ---- 2. register, operator raises the plan, API key ---------------------------------------------
json() { c -H 'content-type: application/json' "$@"; }
account_id="$(json -X POST "$base/api/v1/console/register" \
  -d "{\"email\":\"$operator\",\"password\":\"$password\"}" | jq -r '.account_id // empty' || true)"
session="$(json -X POST "$base/api/v1/console/login" \
  -d "{\"email\":\"$operator\",\"password\":\"$password\"}" | jq -r '.session_token // empty' || true)"
key=""
# Operators are made by the local command, run inside the service with its NATS credentials.
if [ -n "$account_id" ]; then
  dc exec -T gateway-http-1 node --import tsx app/operator.ts grant "$operator" >/dev/null || true
fi
if [ -n "$account_id" ] && [ -n "$session" ]; then
  json -X PUT -H "authorization: Bearer $session" "$base/api/v1/console/accounts/$account_id/plan" \
    -d '{"plan":"quant"}' >/dev/null || true
  key="$(json -X POST -H "authorization: Bearer $session" "$base/api/v1/console/keys" \
    -d '{"name":"smoke"}' | jq -r '.key // empty' || true)"
  metrics_key="$(json -X POST -H "authorization: Bearer $session" "$base/api/v1/console/keys" \
    -d '{"name":"prometheus","scopes":["metrics"]}' | jq -r '.key // empty' || true)"
  # Same file (same inode): Prometheus reads it on every scrape.
  if [ -n "$metrics_key" ]; then printf '%s' "$metrics_key" >"$tmp/metrics.key"; fi
fi
if [ -n "$key" ]; then pass "console: registered, Quant, API key ${key:0:12}..."; else
  fail "console: register/login/plan/key (account '$account_id')"
fi

# ---- 3. one unified SSE event -------------------------------------------------------------------
if [ -n "$key" ]; then
  event="$(curl -skN --max-time 30 --connect-to ::127.0.0.1:443 -H "x-api-key: $key" "$unified/api/v1/unified/stream?coin=BTC" |
    grep -m1 '^data:' || true)"
  if [ -n "$event" ]; then pass "unified SSE: ${event:0:80}"; else fail "unified SSE: no event within 30 s"; fi
else
  skip "unified SSE (no key)"
fi

# ---- 4. JSON-RPC eth_blockNumber ----------------------------------------------------------------
if [ -n "$key" ]; then
  block="$(json -X POST -H "x-api-key: $key" "$jsonrpc/" \
    -d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' | jq -r '.result // empty' || true)"
  if [[ "$block" =~ ^0x[0-9a-f]+$ ]]; then pass "JSON-RPC eth_blockNumber: $block"; else
    fail "JSON-RPC eth_blockNumber: '$block'"
  fi
else
  skip "JSON-RPC eth_blockNumber (no key)"
fi

# ---- 5. gRPC health -----------------------------------------------------------------------------
if command -v grpcurl >/dev/null 2>&1; then
  health="$(grpcurl -insecure -max-time 10 -authority grpc.us.mdp.localhost -servername grpc.us.mdp.localhost \
    -d '{"service":"price.PriceService"}' 127.0.0.1:443 grpc.health.v1.Health/Check 2>&1 || true)"
  if echo "$health" | grep -q '"SERVING"'; then pass "gRPC health: SERVING"; else fail "gRPC health: $health"; fi
elif [[ -d "$here/../node_modules/@grpc/grpc-js" ]]; then
  health="$(node "$here/grpc-health.mjs" 127.0.0.1:443 price.PriceService "$tmp/certs/edge.crt" grpc.us.mdp.localhost 2>&1 || true)"
  if [[ "$health" == "SERVING" ]]; then pass "gRPC health: SERVING (grpc-js)"; else fail "gRPC health: $health"; fi
else
  skip "gRPC health: neither grpcurl nor the repository's node_modules"
fi
