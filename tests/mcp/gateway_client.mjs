// The official SDK client against one MCP URL (tests/fleet/test_mcp_gateway.py passes the
// fleet's nginx): connect, list the tools, call memory_search and preference_view several
// times, and print one JSON line with what it saw. Exits non-zero on any failure.
//   node gateway_client.mjs URL TOKEN
import { connect } from './lib.mjs';

const [url, tok] = process.argv.slice(2);
const { client } = await connect(url, tok);
const { tools } = await client.listTools();
let calls = 0;
for (let i = 0; i < 6; i++) {
  const s = await client.callTool({ name: 'memory_search', arguments: { query: 'gateway' } });
  const p = await client.callTool({
    name: 'preference_view', arguments: { goal_id: 'g1', agent_id: 'a1' } });
  if (s.isError || p.isError) {
    console.error(JSON.stringify({ search: s, view: p }));
    process.exit(1);
  }
  calls += 2;
}
console.log(JSON.stringify({
  protocol: client.transport?.protocolVersion ?? null, tools: tools.map((t) => t.name), calls,
}));
await client.close();
