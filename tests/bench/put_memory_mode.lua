-- wrk script: every request PUTs the memory mode of a thread never seen before, so each one
-- is a first write (expected_revision 0): /v1/threads/bench-<thread>-<counter>-<random>/memory-mode
-- usage: wrk -t2 -c32 -d10s --latency -s put_memory_mode.lua http://127.0.0.1:PORT -- TOKEN
-- (TOKEN may also come from the environment variable RG_BENCH_TOKEN)

local next_thread = 0
local body = '{"expected_revision":0,"mode":"disabled"}'
local counter = 0
local salt

-- Runs in the main Lua state once per wrk thread: number the threads.
function setup(thread)
  thread:set("bench_thread", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  local token = args[1] or os.getenv("RG_BENCH_TOKEN")
  if token == nil or token == "" then
    error("put_memory_mode.lua: pass the bearer token after -- (or set RG_BENCH_TOKEN)")
  end
  wrk.method = "PUT"
  wrk.body = body
  wrk.headers["Authorization"] = "Bearer " .. token
  wrk.headers["Content-Type"] = "application/json"
  local id = bench_thread or 0
  math.randomseed(os.time() * 1000 + id * 7919 + math.floor(os.clock() * 1e6))
  -- A per-run salt keeps ids unique across runs against the same database.
  salt = string.format("%x%04x", os.time(), math.random(0, 0xffff))
end

function request()
  counter = counter + 1
  local path = string.format("/v1/threads/bench-%d-%d-%s%04x/memory-mode",
                             bench_thread or 0, counter, salt, math.random(0, 0xffff))
  return wrk.format("PUT", path, nil, body)
end
