-- mixed.lua — wrk script for bench/memory.py: replays the pre-signed requests of any
-- operations that memory.py wrote to $QUARRY_BENCH_REQUESTS, one picked at random per
-- request (the mix is in the file), and prints one RESULT line as common.lua does.
dofile((os.getenv("QUARRY_BENCH_DIR") or ".") .. "/common.lua")
