-- wrk script: GET the memory mode of the seeded thread "bench-get".
-- usage: wrk -t2 -c32 -d10s --latency -s get_memory_mode.lua http://127.0.0.1:PORT -- TOKEN
-- (TOKEN may also come from the environment variable RG_BENCH_TOKEN)

wrk.method = "GET"
wrk.path = "/v1/threads/bench-get/memory-mode"

function init(args)
  local token = args[1] or os.getenv("RG_BENCH_TOKEN")
  if token == nil or token == "" then
    error("get_memory_mode.lua: pass the bearer token after -- (or set RG_BENCH_TOKEN)")
  end
  wrk.headers["Authorization"] = "Bearer " .. token
end

-- RG_BENCH_DELAY_MS paces each connection: it waits that long between its requests, so that
-- a run measures latency at a chosen fraction of the peak rather than at saturation.
local pace_ms = tonumber(os.getenv("RG_BENCH_DELAY_MS") or "0")
if pace_ms > 0 then
  function delay()
    return pace_ms
  end
end
