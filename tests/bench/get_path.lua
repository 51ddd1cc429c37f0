-- wrk script: GET the path in RG_BENCH_PATH with the bearer token.
-- usage: RG_BENCH_PATH=/v1/... wrk -t2 -c32 -d10s --latency -s get_path.lua http://127.0.0.1:PORT -- TOKEN

wrk.method = "GET"
wrk.path = os.getenv("RG_BENCH_PATH") or error("get_path.lua: set RG_BENCH_PATH")

function init(args)
  local token = args[1] or os.getenv("RG_BENCH_TOKEN")
  if token == nil or token == "" then
    error("get_path.lua: pass the bearer token after -- (or set RG_BENCH_TOKEN)")
  end
  wrk.headers["Authorization"] = "Bearer " .. token
end
