#!/usr/bin/env node
// The TypeScript SDK 2.4.0's experimental server (Streamable HTTP and WebSocket, through
// its node adapter and the `ws` package) serving the load benchmark's agent
// (bench/remote_load.py starts it; its Python twin is `LoadAgent` there). Written on the
// SDK's public API, as tests/interop/node/agent.mjs is.
//
//     ACP_NODE_DIR=tests/interop/node node bench/peers/ts_server.mjs
//
// The SDK is resolved from ACP_NODE_DIR/node_modules (installed by
// tests/interop/node_setup.py). Listens on 127.0.0.1 (ACP_PEER_LISTEN, default 0: any free
// port), prints "listening: PORT", and stops when stdin closes.
//
// Prompts (the first text block):
//   stream N  -> N agent_message_chunk updates, then end_turn
//   demo      -> a thought, a plan, a tool call, a permission request, two tool call
//                updates and 14 message chunks (19 updates), then end_turn

import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const nodeDir = resolve(process.env.ACP_NODE_DIR ?? "tests/interop/node");
const require = createRequire(join(nodeDir, "package.json"));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);

const acp = await load("@agentclientprotocol/sdk");
const { AcpServer } = await load("@agentclientprotocol/sdk/experimental/server");
const { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } = await load(
  "@agentclientprotocol/sdk/experimental/node",
);
const { WebSocketServer } = require("ws");
const { createServer } = await import("node:http");

const ANSWER = "I turned on debug logging in config.json, so the next run prints every request.";
const OPTIONS = [
  { optionId: "allow", name: "Allow once", kind: "allow_once" },
  { optionId: "reject", name: "Reject", kind: "reject_once" },
];
let sessions = 0;
let toolCalls = 0;

async function demo(client, sessionId) {
  const send = (update) => client.notify(acp.methods.client.session.update, { sessionId, update });
  await send({
    sessionUpdate: "agent_thought_chunk",
    content: { type: "text", text: "The user wants to see every kind of update." },
  });
  await send({
    sessionUpdate: "plan",
    entries: [
      { content: "Look at the configuration", status: "completed", priority: "high" },
      { content: "Turn on debug logging", status: "in_progress", priority: "medium" },
      { content: "Explain the change", status: "pending", priority: "low" },
    ],
  });
  toolCalls += 1;
  const toolCallId = `call_${toolCalls}`;
  const call = { toolCallId, title: "Edit config.json", kind: "edit", status: "pending" };
  await send({ sessionUpdate: "tool_call", ...call });
  const answer = await client.request(acp.methods.client.session.requestPermission, {
    sessionId,
    toolCall: { toolCallId, title: call.title, kind: call.kind, status: call.status },
    options: OPTIONS,
  });
  if (answer.outcome.outcome !== "selected" || answer.outcome.optionId !== "allow") {
    return "cancelled";
  }
  const path = "/tmp/config.json";
  await send({
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: "in_progress",
    content: [{ type: "diff", path, oldText: '{"debug": false}', newText: '{"debug": true}' }],
  });
  await send({ sessionUpdate: "tool_call_update", toolCallId, status: "completed" });
  for (const word of ANSWER.split(" ")) {
    await send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${word} ` } });
  }
  return "end_turn";
}

const app = acp
  .agent({ name: "acp-sdk-load-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    agentInfo: { name: "acp-sdk-load-agent", version: "0.0.0" },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, () => {
    sessions += 1;
    return { sessionId: `load-${sessions}` };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const first = params.prompt.find((block) => block.type === "text");
    const [command, count] = (first?.text ?? "").trim().split(" ");
    if (command === "demo") return { stopReason: await demo(client, params.sessionId) };
    const n = command === "stream" ? Number.parseInt(count ?? "0", 10) : 0;
    for (let index = 0; index < n; index += 1) {
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `chunk ${index} ` } },
      });
    }
    return { stopReason: "end_turn" };
  })
  .onNotification(acp.methods.agent.session.cancel, () => {});

const server = new AcpServer({ agent: app });
const http = createServer(createNodeHttpHandler(server));
const sockets = new WebSocketServer({ noServer: true });
http.on("upgrade", createNodeWebSocketUpgradeHandler(server, sockets));
http.listen(Number(process.env.ACP_PEER_LISTEN ?? "0"), "127.0.0.1", 4096, () => {
  process.stdout.write(`listening: ${http.address().port}\n`);
});
await new Promise((done) => process.stdin.on("close", done).resume());
http.closeAllConnections?.();
await server.close();
sockets.close();
http.close();
