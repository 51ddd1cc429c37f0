-- wrk script: GET the seeded 64-entry preference journal of goal "bench", agent "view".
-- usage: wrk -t2 -c32 -d10s --latency -s get_preferences.lua http://127.0.0.1:PORT -- TOKEN

wrk.method = "GET"
wrk.path = os.getenv("RG_BENCH_PREF_PATH") or "/v1/goals/bench/agents/view/preferences"

function init(args)
  local token = args[1] or os.getenv("RG_BENCH_TOKEN")
  if token == nil or token == "" then
    error("get_preferences.lua: pass the bearer token after -- (or set RG_BENCH_TOKEN)")
  end
  wrk.headers["Authorization"] = "Bearer " .. token
end
