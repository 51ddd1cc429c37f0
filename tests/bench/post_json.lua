-- wrk script: POST a fixed JSON body (from RG_BENCH_BODY) to the URL's path.
-- usage: RG_BENCH_BODY='{"query":"..."}' wrk ... -s post_json.lua http://127.0.0.1:PORT/v1/memory/search -- TOKEN

function init(args)
  local token = args[1] or os.getenv("RG_BENCH_TOKEN")
  if token == nil or token == "" then
    error("post_json.lua: pass the bearer token after -- (or set RG_BENCH_TOKEN)")
  end
  wrk.method = "POST"
  wrk.body = os.getenv("RG_BENCH_BODY") or error("post_json.lua: set RG_BENCH_BODY")
  wrk.headers["Authorization"] = "Bearer " .. token
  wrk.headers["Content-Type"] = "application/json"
end
