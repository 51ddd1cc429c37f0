-- wrk script: every request remembers (execute: true) one preference in a journal never
-- written before (expected_revision null), so each is a full read + compare-and-swap commit:
-- PUT /v1/goals/bench/agents/w-<thread>-<counter>-<salt>/preferences/review.collaboration
-- usage: wrk -t2 -c32 -d10s --latency -s put_preference.lua http://127.0.0.1:PORT -- TOKEN

local next_thread = 0
local body = '{"statement":"Ask the designated reviewer before merging.",' ..
             '"source_ref":"owner-message-1",' ..
             '"source_quote":"Use the designated reviewer for my changes.",' ..
             '"expected_revision":null,"operation_id":"preference-1","execute":true}'
local counter = 0
local salt

function setup(thread)
  thread:set("bench_thread", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  local token = args[1] or os.getenv("RG_BENCH_TOKEN")
  if token == nil or token == "" then
    error("put_preference.lua: pass the bearer token after -- (or set RG_BENCH_TOKEN)")
  end
  wrk.headers["Authorization"] = "Bearer " .. token
  wrk.headers["Content-Type"] = "application/json"
  math.randomseed(os.time() * 1000 + (bench_thread or 0) * 7919 + math.floor(os.clock() * 1e6))
  salt = string.format("%x%04x", os.time(), math.random(0, 0xffff))
end

function request()
  counter = counter + 1
  local path = string.format("/v1/goals/bench/agents/w-%d-%d-%s/preferences/review.collaboration",
                             bench_thread or 0, counter, salt)
  return wrk.format("PUT", path, nil, body)
end
