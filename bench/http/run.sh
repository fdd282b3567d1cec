#!/usr/bin/env bash
# run.sh — quarry's HTTP benchmark: PutItem, GetItem and Query(Limit 50) with wrk (2
# threads, 32 connections) against quarry (durable and --no-sync, SigV4 verified),
# dynalite (in memory and on disk) and nginx answering a fixed 100-byte body, one server
# at a time, in this one run. Prints requests/s, p99 latency and the ratios of
# bench/http/README.md, plus GET / on quarry and nginx (HTTP alone) and the CPU time each
# server spent per request. Every server runs on a free loopback port and is stopped by pid.
# The whole sequence runs ROUNDS times (fresh servers each round), and the report gives the
# median of the rounds, so that one unlucky measurement on a shared machine moves nothing.
#
#   bench/http/run.sh                   (ROUNDS=3, DURATION=6 seconds per measurement)
#   ONLY=model bench/http/run.sh        only quarry --no-sync with and without --model
#                                       (bench/http/model.yaml): what request matching costs
#   ONLY=baseline BASELINE=BIN bench/http/run.sh   only quarry --no-sync, this build's
#                                       binary against BIN (another build), round by round
#
# By default quarry runs with --pin-loops and nginx's workers are pinned the same way
# (worker_cpu_affinity auto); PIN=0 runs both unpinned.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-6}
WARMUP=${WARMUP:-2}
QUARRY_THREADS=${QUARRY_THREADS:-}
QUARRY_LOOPS=${QUARRY_LOOPS:-}
ONLY=${ONLY:-}  # "model": only the --model comparison; "baseline": only against $BASELINE
BASELINE=${BASELINE:-}
if [ "$ONLY" = baseline ] && [ ! -x "$BASELINE" ]; then
    echo "run.sh: ONLY=baseline wants BASELINE=path of another quarry binary"; exit 1
fi
PIN=${PIN:-1}   # quarry --pin-loops, and nginx's workers pinned alike (worker_cpu_affinity auto)
PY=python3
/usr/bin/python3 -c 'import boto3' 2>/dev/null && PY=/usr/bin/python3

for tool in wrk nginx node npm curl; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (make deps installs it)"; exit 1; }
done
make -C "$ROOT" BUILD="$BUILD" all >/dev/null
QUARRY="$ROOT/$BUILD/quarry"
if [ ! -x "$HERE/node_modules/.bin/dynalite" ]; then
    (cd "$HERE" && npm ci --no-audit --no-fund >/dev/null)
fi

TMP=$(mktemp -d "$ROOT/$BUILD/bench-http.XXXXXX")   # on the build's disk, not tmpfs
PID=""
stop() {
    if [ -n "$PID" ]; then
        kill "$PID" 2>/dev/null || true
        wait "$PID" 2>/dev/null || true
        PID=""
    fi
}
trap 'stop; rm -rf "$TMP"' EXIT

free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_http() {
    for _ in $(seq 200); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$1/" || true)" != 000 ] && return 0
        sleep 0.1
    done
    echo "run.sh: no answer from $1"; exit 1
}

cat >"$TMP/credentials" <<CREDS
[bench]
aws_access_key_id = AKIDQUARRYBENCH
aws_secret_access_key = quarry-bench-secret
CREDS

start_quarry() { # name, extra options
    local name=$1; shift
    local threads=()
    [ -n "$QUARRY_THREADS" ] && threads=(--threads "$QUARRY_THREADS")
    [ -n "$QUARRY_LOOPS" ] && threads+=(--loops "$QUARRY_LOOPS")
    [ "$PIN" = 1 ] && threads+=(--pin-loops)
    rm -f "$TMP/$name.out"   # an earlier round's banner would name a port no longer served
    "${SERVE_BIN:-$QUARRY}" serve --listen 127.0.0.1:0 --data "$TMP/r$ROUND-$name" --credentials "$TMP/credentials" \
        --log-level warn "${threads[@]}" "$@" >"$TMP/$name.out" 2>"$TMP/$name.log" &
    PID=$!
    for _ in $(seq 200); do
        URL=$(grep -o 'http://127.0.0.1:[0-9]*' "$TMP/$name.out" | head -1 || true)
        [ -n "$URL" ] && return 0
        sleep 0.1
    done
    echo "run.sh: quarry did not start:"; cat "$TMP/$name.log"; exit 1
}
start_dynalite() { # name, extra options
    local name=$1; shift
    local port; port=$(free_port)
    node "$HERE/node_modules/dynalite/cli.js" --port "$port" "$@" >"$TMP/$name.log" 2>&1 &
    PID=$!
    URL="http://127.0.0.1:$port"
    wait_http "$URL"
}
start_nginx() {
    local port; port=$(free_port)
    mkdir -p "$TMP/nginx"
    local body   # a GetItem answer padded to exactly 100 bytes
    body=$(printf '%-100s' '{"Item":{"pk":{"S":"user#00001"},"sk":{"S":"profile"},"n":{"N":"1"},"name":{"S":"user 1"}}}')
    cat >"$TMP/nginx/nginx.conf" <<CONF
worker_processes 2;
$([ "$PIN" = 1 ] && echo "worker_cpu_affinity auto;")
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $TMP/nginx/body;
    proxy_temp_path $TMP/nginx/proxy;
    fastcgi_temp_path $TMP/nginx/fastcgi;
    keepalive_requests 100000000;
    server {
        listen 127.0.0.1:$port;
        location / {
            default_type application/x-amz-json-1.0;
            return 200 '$body';
        }
    }
}
CONF
    nginx -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx/error.log" &
    PID=$!
    URL="http://127.0.0.1:$port"
    wait_http "$URL"
}

# CPU time (clock ticks) of the server process and its direct children (nginx's workers).
cpu_ticks() {
    local total=0 pid
    for pid in "$PID" $(pgrep -P "$PID" || true); do
        [ -r "/proc/$pid/stat" ] || continue
        total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
    done
    echo "$total"
}

measure() { # server name, op (put|get|query|health)
    local name=$1 op=$2 n=5000
    [ "$op" = query ] && n=1000
    if [ "$op" != health ]; then
        "$PY" "$HERE/gen.py" requests "$URL" "$op" "$n" "$TMP/$op.lua"
    fi
    export QUARRY_BENCH_DIR="$HERE" QUARRY_BENCH_REQUESTS="$TMP/$op.lua"
    wrk -t2 -c32 -d"${WARMUP}s" -s "$HERE/$op.lua" "$URL/" >/dev/null
    local before; before=$(cpu_ticks)
    local out; out=$(wrk -t2 -c32 -d"${DURATION}s" -s "$HERE/$op.lua" "$URL/")
    local after; after=$(cpu_ticks)
    local result; result=$(echo "$out" | awk '/^RESULT/ { print $2, $3, $4, $5 }')
    # CPU microseconds the server spent per request answered.
    local cpu; cpu=$(echo "$result $before $after $DURATION $(getconf CLK_TCK)" |
        awk '{ printf "%.1f", ($6 - $5) * 1e6 / $8 / ($1 * $7) }')
    echo "$name $op $result $cpu $ROUND" | tee -a "$TMP/results.tsv" | awk '{ printf "  %-16s %-6s %10.0f req/s  p99 %6.2f ms  cpu %6.1f us/req  non-2xx %d  errors %d\n", $1, $2, $3, $4, $7, $5, $6 }'
}

echo "quarry HTTP benchmark: wrk -t2 -c32, ${DURATION}s per measurement after ${WARMUP}s warm-up, $ROUNDS rounds, $(nproc) CPUs"
echo "quarry: $QUARRY (event loops: ${QUARRY_LOOPS:-default}, write threads: ${QUARRY_THREADS:-default}, pinned: $PIN)"

for ROUND in $(seq "$ROUNDS"); do
echo "round $ROUND of $ROUNDS"
# The comparisons with nginx and dynalite measure the engine and the protocol: their loads
# (Query(50) at 30,000/s reads 45,000 units a second of one table) are past what one
# DynamoDB table may serve, so these servers run without capacity metering, and
# quarry-metered below measures what metering costs.
if [ "$ONLY" = baseline ]; then
SERVE_BIN=$BASELINE start_quarry quarry-baseline --no-sync --capacity off
"$PY" "$HERE/gen.py" load "$URL"
for op in get query put; do measure quarry-baseline "$op"; done
stop
fi

if [ "$ONLY" != model ] && [ "$ONLY" != baseline ]; then
start_quarry quarry --capacity off
"$PY" "$HERE/gen.py" load "$URL"
for op in health get query put; do measure quarry "$op"; done
stop
fi

start_quarry quarry-nosync --no-sync --capacity off
"$PY" "$HERE/gen.py" load "$URL"
for op in get query put; do measure quarry-nosync "$op"; done
stop

if [ "$ONLY" != baseline ]; then
# The same server matching every request to bench/http/model.yaml's access patterns.
start_quarry quarry-model --no-sync --capacity off --model "$HERE/model.yaml"
"$PY" "$HERE/gen.py" load "$URL"
for op in get query put; do measure quarry-model "$op"; done
if grep -q 'finding=' "$TMP/quarry-model.log"; then
    echo "run.sh: the --model run logged findings; every request should be a declared pattern:"
    grep 'finding=' "$TMP/quarry-model.log" | head -3
fi
stop
fi

if [ "$ONLY" != model ] && [ "$ONLY" != baseline ]; then
# The same server metering and enforcing capacity (the default), with the account quota
# lifted so that the on-demand table's ramp, not the quota, sets its limit.
start_quarry quarry-metered --no-sync --capacity enforce --capacity-account-units 0
"$PY" "$HERE/gen.py" load "$URL"
for op in get put; do measure quarry-metered "$op"; done
stop

start_dynalite dynalite-mem
"$PY" "$HERE/gen.py" load "$URL"
for op in get query put; do measure dynalite-mem "$op"; done
stop

mkdir -p "$TMP/r$ROUND-dynalite-disk"
start_dynalite dynalite-disk --path "$TMP/r$ROUND-dynalite-disk"
"$PY" "$HERE/gen.py" load "$URL"
for op in get query put; do measure dynalite-disk "$op"; done
stop

start_nginx
for op in health get put; do measure nginx "$op"; done
stop
fi
rm -rf "$TMP"/r"$ROUND"-*   # the round's data; the next round starts afresh
done

echo
"$PY" "$HERE/gen.py" report "$TMP/results.tsv"
