-- query.lua — wrk script: Query of one partition with Limit 50.
-- The requests come pre-signed from gen.py; run.sh sets QUARRY_BENCH_DIR and
-- QUARRY_BENCH_REQUESTS.
operation = "Query"
dofile((os.getenv("QUARRY_BENCH_DIR") or ".") .. "/common.lua")
