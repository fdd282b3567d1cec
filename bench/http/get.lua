-- get.lua — wrk script: GetItem of random existing keys.
-- The requests come pre-signed from gen.py; run.sh sets QUARRY_BENCH_DIR and
-- QUARRY_BENCH_REQUESTS.
operation = "GetItem"
dofile((os.getenv("QUARRY_BENCH_DIR") or ".") .. "/common.lua")
