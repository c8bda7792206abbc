// A session of the official TypeScript MCP SDK's client with `git atlas mcp`
// (TestMCPTypeScriptClient): connect over stdio, list the tools (the SDK validates the
// result against MCP's Tool shape), call the tools named in ATLAS_MCP_CALLS in order
// (the SDK checks each structured result against the tool's output schema), and print
// what came back as one JSON document.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = JSON.parse(process.env.ATLAS_MCP_COMMAND);
const calls = JSON.parse(process.env.ATLAS_MCP_CALLS);
const transport = new StdioClientTransport({ command, args, cwd: process.env.ATLAS_MCP_DIR, env: process.env, stderr: "inherit" });
const client = new Client({ name: "git-atlas-test", version: "1" });
const out = { tools: [], calls: [] };
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  out.tools = tools.map((t) => t.name);
  for (const [name, args] of calls) {
    const res = await client.callTool({ name, arguments: args });
    out.calls.push({ name, isError: res.isError === true, structuredContent: res.structuredContent ?? null, content: res.content });
  }
} catch (e) {
  out.error = String(e && e.stack ? e.stack : e);
}
await client.close().catch(() => {});
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(out.error ? 1 : 0);
