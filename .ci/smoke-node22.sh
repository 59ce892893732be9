#!/usr/bin/env bash
# Smoke test on Node 22 LTS (issue 21): the container's runtime. Node 22 comes from the npm registry's `node`
# package (its binary ships inside a registry package), into a throwaway prefix. With it: the typecheck, then
# `npm start` exactly as the README's first command runs it (sample, in-process ingest of every domain, the API),
# and one request per domain. Exits 0 when every step answers as expected, 1 otherwise (the failing step is printed).
set -uo pipefail
cd "$(dirname "$0")/.."

N22=$(mktemp -d)
DATA=$(mktemp -d)
LOG="$DATA/start.log"
pid=""
# `npm start` runs the API as a child of npm: killing npm alone left that server running after CI (its data folder
# removed), so the server is started in a process group of its own and the whole group is stopped.
cleanup() {
  if [ -n "$pid" ]; then
    kill -TERM -- "-$pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  fi
  rm -rf "$N22" "$DATA"
}
trap cleanup EXIT
fail() { echo "[smoke:node22] FAILED: $*"; [ -f "$LOG" ] && tail -20 "$LOG"; exit 1; }

npm install --no-audit --no-fund --prefix "$N22" node@22 >"$N22/install.log" 2>&1 || fail "npm install node@22 ($(tail -3 "$N22/install.log"))"
export PATH="$N22/node_modules/.bin:$PATH"
v=$(node --version)
case "$v" in v22.*) ;; *) fail "node is $v, not 22";; esac
echo "[smoke:node22] node $v"

node ./node_modules/typescript/bin/tsc --noEmit -p . || fail "typecheck"

PORT=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
# The README's first command after install, with its own data folder and port, without Redis or PostgreSQL.
env -u REDIS_URL -u DATABASE_URL DATA_DIR="$DATA/data" PORT="$PORT" LOG_LEVEL=warn setsid npm start >"$LOG" 2>&1 &
pid=$!
base="http://127.0.0.1:$PORT"
for _ in $(seq 1 600); do
  kill -0 "$pid" 2>/dev/null || fail "npm start exited"
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/api/ready")" = 200 ] && break
  sleep 1
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/api/ready")" = 200 ] || fail "not ready after 10 minutes"

check() { # path, then a string the body must contain
  body=$(curl -s -w '\n%{http_code}' "$base$1")
  code=${body##*$'\n'}
  [ "$code" = 200 ] || fail "GET $1 answered $code"
  case "$body" in *"$2"*) echo "[smoke:node22] GET $1 200";; *) fail "GET $1 lacks $2";; esac
}
check /api/company/AAPL '"cik":"320193"'                   # registry
check /api/company/AAPL/quote '"origin"'                    # quotes
check /api/company/AAPL/transcripts '"transcripts"'         # transcripts
check '/api/carriers?state=TX&limit=1' '"results"'          # fmcsa
check /.well-known/ai '"specVersion"'                      # discovery
echo "[smoke:node22] ok"
