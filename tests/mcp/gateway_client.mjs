// The official SDK clients against one MCP URL (tests/fleet/test_mcp_gateway.py passes the
// fleet's nginx): each era's client (the legacy @modelcontextprotocol/sdk, initialize; the
// modern @modelcontextprotocol/client, revision 2026-07-28) connects, lists the tools, calls
// memory_search and preference_view several times, and one JSON line says what they saw.
// Exits non-zero on any failure.
//   node gateway_client.mjs URL TOKEN
import { connect, connectModern } from './lib.mjs';

const [url, tok] = process.argv.slice(2);
const seen = {};
for (const [era, open] of [['legacy', connect], ['modern', connectModern]]) {
  const { client } = await open(url, tok);
  const { tools } = await client.listTools();
  let calls = 0;
  for (let i = 0; i < 6; i++) {
    const s = await client.callTool({ name: 'memory_search', arguments: { query: 'gateway' } });
    const p = await client.callTool({
      name: 'preference_view', arguments: { goal_id: 'g1', agent_id: 'a1' } });
    if (s.isError || p.isError) {
      console.error(JSON.stringify({ era, search: s, view: p }));
      process.exit(1);
    }
    calls += 2;
  }
  seen[era] = { tools: tools.map((t) => t.name), calls };
  await client.close();
}
console.log(JSON.stringify(seen));
