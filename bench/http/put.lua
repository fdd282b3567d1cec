-- put.lua — wrk script: PutItem of ~200-byte items (overwriting as the pre-signed requests repeat).
-- The requests come pre-signed from gen.py; run.sh sets QUARRY_BENCH_DIR and
-- QUARRY_BENCH_REQUESTS.
operation = "PutItem"
dofile((os.getenv("QUARRY_BENCH_DIR") or ".") .. "/common.lua")
