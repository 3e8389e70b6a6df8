#!/usr/bin/env node
// Scripted ACP agent: an original test peer for acp_sdk's interop tests
// (tests/interop/test_typescript.py), written on the public API of the official
// TypeScript SDK, @agentclientprotocol/sdk (pinned in package-lock.json). The npm package
// ships no example programs, so the tests bring their own peers.
//
//     ACP_PEER_DELAY_MS=50 node agent.mjs        # speaks ACP v1 on stdin/stdout
//
// It advertises no optional capabilities (loadSession: false) and answers every
// `session/prompt`, whatever its content, with the same script:
//
//   1. agent_message_chunk   TEXT.opening
//   2. tool_call "survey"    kind read, pending
//   3. tool_call_update      "survey" completed, with a text content block
//   4. agent_message_chunk   TEXT.beforeEdit
//   5. tool_call "rewrite"   kind edit, pending
//   6. session/request_permission for "rewrite", options "allow" (allow_once) and
//      "reject" (reject_once); then, by outcome:
//        allow     -> tool_call_update "rewrite" completed (rawOutput {success: true}),
//                     agent_message_chunk TEXT.allowed
//        reject    -> agent_message_chunk TEXT.rejected
//        cancelled -> nothing
//
// The turn's stop reason is `end_turn`, or `cancelled` once `session/cancel` arrived for
// the session. It waits ACP_PEER_DELAY_MS (default 20) between steps so that a test can
// cancel mid-turn; a cancel cuts the current wait short.

import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const STEP_DELAY_MS = Number.parseInt(process.env.ACP_PEER_DELAY_MS ?? "20", 10);

// Kept in sync with the expectations in tests/interop/test_typescript.py.
const TEXT = {
  opening: "Interop peer here: first I look at the workspace.",
  readResult: "alpha = 1\nbeta = 2\n",
  beforeEdit: " One setting is out of date; changing it needs your consent.",
  allowed: " Consent given, the setting is rewritten.",
  rejected: " No consent, so the file stays as it was.",
};

const READ_PATH = "/workspace/settings.ini";

class TurnCancelled extends Error {}

/** Per-session state: the controller of the turn in flight, if any. */
const live = new Map();
let sessionCounter = 0;

function wait(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });
}

async function runScript(client, sessionId, signal) {
  const send = async (update) => {
    if (signal.aborted) throw new TurnCancelled();
    await client.notify(acp.methods.client.session.update, { sessionId, update });
  };
  const step = async () => {
    await wait(STEP_DELAY_MS, signal);
    if (signal.aborted) throw new TurnCancelled();
  };
  const say = (text) => send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });

  await say(TEXT.opening);
  await step();

  await send({
    sessionUpdate: "tool_call",
    toolCallId: "survey",
    title: "Look at settings.ini",
    kind: "read",
    status: "pending",
    locations: [{ path: READ_PATH }],
    rawInput: { path: READ_PATH },
  });
  await step();
  await send({
    sessionUpdate: "tool_call_update",
    toolCallId: "survey",
    status: "completed",
    content: [{ type: "content", content: { type: "text", text: TEXT.readResult } }],
  });
  await step();

  await say(TEXT.beforeEdit);
  await step();

  const editCall = {
    toolCallId: "rewrite",
    title: "Set beta = 3 in settings.ini",
    kind: "edit",
    status: "pending",
    locations: [{ path: READ_PATH, line: 2 }],
    rawInput: { path: READ_PATH, replace: "beta = 2", with: "beta = 3" },
  };
  await send({ sessionUpdate: "tool_call", ...editCall });
  const answer = await client.request(acp.methods.client.session.requestPermission, {
    sessionId,
    toolCall: editCall,
    options: [
      { optionId: "allow", name: "Apply the edit", kind: "allow_once" },
      { optionId: "reject", name: "Leave the file", kind: "reject_once" },
    ],
  });

  const outcome = answer.outcome;
  if (outcome.outcome === "cancelled") return;
  if (outcome.optionId === "allow") {
    await send({
      sessionUpdate: "tool_call_update",
      toolCallId: "rewrite",
      status: "completed",
      rawOutput: { success: true },
    });
    await step();
    await say(TEXT.allowed);
  } else if (outcome.optionId === "reject") {
    await step();
    await say(TEXT.rejected);
  } else {
    throw acp.RequestError.invalidParams({ optionId: outcome.optionId }, "not an offered option");
  }
}

const app = acp
  .agent({ name: "acp-sdk-interop-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    agentInfo: { name: "acp-sdk-interop-agent", version: "0.0.0" },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, () => {
    sessionCounter += 1;
    const sessionId = `peer-session-${sessionCounter}`;
    live.set(sessionId, null);
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client, signal }) => {
    const { sessionId } = params;
    if (!live.has(sessionId)) throw acp.RequestError.sessionNotFound(sessionId);
    live.get(sessionId)?.abort(); // a newer prompt supersedes an unfinished one
    const turn = new AbortController();
    live.set(sessionId, turn);
    const turnSignal = AbortSignal.any([turn.signal, signal]);
    try {
      await runScript(client, sessionId, turnSignal);
    } catch (error) {
      if (!(error instanceof TurnCancelled)) throw error;
    } finally {
      if (live.get(sessionId) === turn) live.set(sessionId, null);
    }
    return { stopReason: turnSignal.aborted ? "cancelled" : "end_turn" };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    live.get(params.sessionId)?.abort();
  });

if (process.env.ACP_PEER_LISTEN) {
  // Remote mode: the SDK's experimental server (Streamable HTTP and WebSocket, through its
  // node adapter and the `ws` package) on 127.0.0.1:ACP_PEER_LISTEN; prints
  // "listening: PORT" once it accepts connections, and stops when stdin closes.
  const { createServer } = await import("node:http");
  const { WebSocketServer } = await import("ws");
  const { AcpServer } = await import("@agentclientprotocol/sdk/experimental/server");
  const { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } = await import(
    "@agentclientprotocol/sdk/experimental/node"
  );
  const server = new AcpServer({ agent: app });
  const http = createServer(createNodeHttpHandler(server));
  const sockets = new WebSocketServer({ noServer: true });
  http.on("upgrade", createNodeWebSocketUpgradeHandler(server, sockets));
  http.listen(Number(process.env.ACP_PEER_LISTEN), "127.0.0.1", () => {
    process.stdout.write(`listening: ${http.address().port}\n`);
  });
  await new Promise((resolve) => process.stdin.on("close", resolve).resume());
  http.closeAllConnections?.();
  await server.close();
  sockets.close();
  http.close();
} else {
  const connection = app.connect(
    acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
  );
  await connection.closed;
}
