-- common.lua — shared by put.lua, get.lua and query.lua (which set `operation`) and
-- mixed.lua (which sets none: any operations): replays the pre-signed requests that
-- gen.py or memory.py wrote to $QUARRY_BENCH_REQUESTS, one picked at random per request,
-- and prints one RESULT line (requests/s, p99 latency in ms, non-2xx answers, socket errors).
local rows = dofile(os.getenv("QUARRY_BENCH_REQUESTS"))
local formatted = {}
for _, r in ipairs(rows) do
   if operation and r.target ~= "DynamoDB_20120810." .. operation then
      error("requests file holds " .. r.target .. ", not " .. operation)
   end
end

function init(args)
   math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
   for i, r in ipairs(rows) do
      formatted[i] = wrk.format("POST", "/", {
         ["Content-Type"] = "application/x-amz-json-1.0",
         ["X-Amz-Target"] = r.target,
         ["X-Amz-Date"] = r.date,
         ["Authorization"] = r.auth,
      }, r.body)
   end
end

function request()
   return formatted[math.random(#formatted)]
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format("RESULT %.1f %.3f %d %d\n",
      summary.requests / (summary.duration / 1e6), latency:percentile(99) / 1000,
      e.status, e.connect + e.read + e.write + e.timeout))
end
