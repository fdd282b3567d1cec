-- health.lua — wrk script: GET / (quarry's health check, nginx's fixed body): the cost of
-- HTTP alone, with no signature and no engine call. Prints the RESULT line of common.lua.
function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format("RESULT %.1f %.3f %d %d\n",
      summary.requests / (summary.duration / 1e6), latency:percentile(99) / 1000,
      e.status, e.connect + e.read + e.write + e.timeout))
end
