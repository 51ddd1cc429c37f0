#!/usr/bin/env python3
"""MCP clients of both eras, two instances behind the gateway (docs/mcp.md, issues 13, 23).

The official SDK clients (tests/mcp/gateway_client.mjs: the pinned legacy
@modelcontextprotocol/sdk, then the modern @modelcontextprotocol/client speaking 2026-07-28)
connect to /mcp through nginx, list the tools and make twelve tool calls each. The transport is
stateless, so nginx's round robin may send each message to either instance: both must have
answered MCP messages, and every call must have succeeded.
"""
import json
import os
import shutil

import fleet


def test():
    args = fleet.parse_args(__doc__)
    node = shutil.which("node")
    client = os.path.join(args.root, "tests/mcp/gateway_client.mjs")
    if node is None:
        fleet.fail("node is not installed (scripts/bootstrap installs it)")
    if not os.path.isdir(os.path.join(args.root, "tests/mcp/node_modules/@modelcontextprotocol")):
        fleet.fail("tests/mcp/node_modules is missing (ctest runs mcp_npm_ci first)")
    with fleet.Fleet(args) as f:
        token = f.token("memory:read,preferences:read")
        env = dict(os.environ, RG_BIN=args.bin, DATABASE_URL=f.pg.url)  # lib.mjs wants them
        p = fleet.run([node, client, f"{f.gateway_url}/mcp", token], timeout=60, check=False,
                      env=env)
        if p.returncode != 0:
            fleet.fail(f"the SDK client failed through the gateway: {p.stderr.strip()[-1500:]}")
        seen = json.loads(p.stdout.strip().splitlines()[-1])
        for era in ("legacy", "modern"):
            if seen[era]["calls"] != 12 or "memory_search" not in seen[era]["tools"]:
                fleet.fail(f"the {era} client saw {seen[era]}")
        counts = [fleet.requests_served(i, 'route="/mcp"') for i in f.instances]
        if min(counts) < 6:
            fleet.fail(f"MCP messages per instance {counts}: the clients were not served by both")
        fleet.log(f"SDK clients of both eras through nginx: tools {len(seen['modern']['tools'])}, "
                  f"12 calls each, MCP messages per instance {counts}")


if __name__ == "__main__":
    fleet.main(test)
