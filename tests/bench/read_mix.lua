-- wrk script: a fixed mix of reads, one of each kind in turn (every kind a sixth of the
-- requests), over the data scripts/bench seeds:
--   GET  /v1/threads/bench-get/memory-mode            (one row; on the pipe)
--   GET  /v1/goals/bench/agents/view/preferences      (the 64-entry journal; on the pipe)
--   GET  /v1/memory/sources                           (the newest page of 50 sources)
--   GET  /v1/memory/sources/src_...01                 (one source)
--   POST /v1/memory/search            {"query":"alpha bravo"}
--   POST /v1/memory/retrieval/explain {"query":"alpha bravo"}
-- Every one of them may be served by a hot standby; the content GET, which records a
-- disclosure, is left out: it reads on the primary and writes.
-- usage: wrk -t2 -c32 -d10s --latency -s read_mix.lua http://127.0.0.1:PORT -- TOKEN
-- (TOKEN may also come from the environment variable RG_BENCH_TOKEN)

local next_thread = 0
local requests = {}
local counter = 0

-- Runs in the main Lua state once per wrk thread: each thread starts at another kind.
function setup(thread)
  thread:set("bench_thread", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  local token = args[1] or os.getenv("RG_BENCH_TOKEN")
  if token == nil or token == "" then
    error("read_mix.lua: pass the bearer token after -- (or set RG_BENCH_TOKEN)")
  end
  local auth = {["Authorization"] = "Bearer " .. token}
  local json = {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json"}
  local query = '{"query":"alpha bravo"}'
  requests = {
    wrk.format("GET", "/v1/threads/bench-get/memory-mode", auth),
    wrk.format("GET", "/v1/goals/bench/agents/view/preferences", auth),
    wrk.format("GET", "/v1/memory/sources", auth),
    wrk.format("GET", "/v1/memory/sources/src_00000000000000000000000000000001", auth),
    wrk.format("POST", "/v1/memory/search", json, query),
    wrk.format("POST", "/v1/memory/retrieval/explain", json, query),
  }
  counter = (bench_thread or 0) * 3
end

function request()
  counter = counter + 1
  return requests[(counter % #requests) + 1]
end
