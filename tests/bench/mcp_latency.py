#!/usr/bin/env python3
"""The latency a tool call over POST /mcp adds to the same /v1 call: one client, one kept-alive
connection each, N sequential calls of each kind (interleaved, after a warm-up), p50/p90/p99.

  mcp_latency.py URL TOKEN [N=1000]

Pairs: memory_search vs POST /v1/memory/search (a seeded tenant), preference_view vs
GET /v1/goals/{goal_id}/agents/{agent_id}/preferences. Run by scripts/bench-mcp."""
import http.client
import json
import sys
import time
import urllib.parse


def main():
    url, token = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    u = urllib.parse.urlparse(url)
    auth = {"Authorization": "Bearer " + token}
    conns = {k: http.client.HTTPConnection(u.hostname, u.port) for k in ("rest", "mcp")}

    def call(kind, method, path, body):
        c = conns[kind]
        headers = dict(auth)
        if body is not None:
            headers["Content-Type"] = "application/json"
        if kind == "mcp":
            headers["MCP-Protocol-Version"] = "2025-11-25"
            headers["Accept"] = "application/json, text/event-stream"
        t0 = time.perf_counter()
        c.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        r = c.getresponse()
        data = r.read()
        dt = time.perf_counter() - t0
        if r.status != 200:
            raise SystemExit(f"{kind} {path}: {r.status} {data[:200]!r}")
        if kind == "mcp" and json.loads(data)["result"]["isError"]:
            raise SystemExit(f"tool refused: {data[:300]!r}")
        return dt

    def tool(name, args):
        return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": name, "arguments": args}}

    search = {"query": "espresso descaling", "limit": 10}
    pairs = {
        "memory_search": (("POST", "/v1/memory/search", search),
                          ("POST", "/mcp", tool("memory_search", search))),
        "preference_view": (("GET", "/v1/goals/bench/agents/a1/preferences", None),
                            ("POST", "/mcp", tool("preference_view",
                                                  {"goal_id": "bench", "agent_id": "a1"}))),
    }
    for name, (rest, mcp) in pairs.items():
        for _ in range(100):  # warm-up: connections, caches, prepared statements
            call("rest", *rest)
            call("mcp", *mcp)
        times = {"rest": [], "mcp": []}
        for _ in range(n):
            times["rest"].append(call("rest", *rest))
            times["mcp"].append(call("mcp", *mcp))

        def pct(xs, p):
            xs = sorted(xs)
            return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] * 1000

        line = {k: " ".join(f"p{p}={pct(v, p):.3f}" for p in (50, 90, 99)) for k, v in times.items()}
        print(f"{name}: {n} calls each, ms  /v1: {line['rest']}  /mcp: {line['mcp']}  "
              f"added p50: {pct(times['mcp'], 50) - pct(times['rest'], 50):+.3f} ms")


if __name__ == "__main__":
    main()
