#!/usr/bin/env node
// One-turn ACP client: an original test peer for acp_sdk's interop tests
// (tests/interop/test_typescript.py), written on the public API of the official
// TypeScript SDK, @agentclientprotocol/sdk (pinned in package-lock.json). The npm package
// ships no example programs, so the tests bring their own peers.
//
//     node client.mjs [--prompt TEXT] [--cwd DIR] -- AGENT_COMMAND [ARGS...]
//     node client.mjs [--prompt TEXT] [--cwd DIR] --url ws://HOST:PORT/acp      (or http://)
//
// With --url it connects to a remote agent with the SDK's experimental WebSocket client
// (ws://) or Streamable HTTP client (http://) instead of starting one; ACP_PEER_TOKEN, if
// set, is sent as a bearer token.
//
// It starts AGENT_COMMAND, initializes (advertising fs.readTextFile and fs.writeTextFile,
// served from the local disk), opens a session in DIR (default: the current directory),
// sends TEXT as one prompt and reports the turn on stdout, one `key: value` line per event:
//
//     ready: protocol 1
//     session: <sessionId>
//     text: <agent message chunk>           thought: <agent thought chunk>
//     tool: <title> [<kind>, <status>]      tool update: <toolCallId> -> <status>
//     plan: <n> entries
//     permission: <tool call title>, then one "  <n> = <name> (<kind>)" line per option
//     stop: <stopReason>
//
// A permission request is answered with the option whose number is the next line of
// stdin ("1" for the first); end of input answers `cancelled`. Diagnostics (file access,
// errors) go to stderr. Exit status: 0 once the prompt turn finished, 1 if the connection
// or the agent failed first, 2 for a bad command line.

import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";

function usage(problem) {
  process.stderr.write(
    `${problem}\nusage: client.mjs [--prompt TEXT] [--cwd DIR] -- AGENT_COMMAND [ARGS...]\n`,
  );
  process.exit(2);
}

function parseCommandLine(args) {
  const options = { prompt: "hello", cwd: process.cwd(), agent: [], url: null };
  let i = 0;
  for (; i < args.length && args[i] !== "--"; i += 2) {
    const value = args[i + 1];
    if (value === undefined) usage(`${args[i]} needs a value`);
    if (args[i] === "--prompt") options.prompt = value;
    else if (args[i] === "--cwd") options.cwd = value;
    else if (args[i] === "--url") options.url = value;
    else usage(`unknown option ${args[i]}`);
  }
  if (options.url !== null) return options;
  options.agent = args.slice(i + 1);
  if (options.agent.length === 0) usage("no agent command after --");
  return options;
}

// ------------------------------------------------------------------ the user at stdin

let stdinLines = null;

async function nextStdinLine() {
  stdinLines ??= createInterface({ input: process.stdin, terminal: false })[
    Symbol.asyncIterator
  ]();
  const { value, done } = await stdinLines.next();
  return done ? null : value.trim();
}

async function askUser({ toolCall, options }) {
  console.log(`permission: ${toolCall.title ?? toolCall.toolCallId}`);
  options.forEach((option, index) => {
    console.log(`  ${index + 1} = ${option.name} (${option.kind})`);
  });
  for (;;) {
    const line = await nextStdinLine();
    if (line === null) {
      console.error("no answer on stdin: the permission request is cancelled");
      return { outcome: { outcome: "cancelled" } };
    }
    const picked = options[Number(line) - 1];
    if (/^\d+$/.test(line) && picked !== undefined) {
      return { outcome: { outcome: "selected", optionId: picked.optionId } };
    }
    console.error(`"${line}" is not one of 1..${options.length}; try again`);
  }
}

// ------------------------------------------------------------------ files on local disk

function absolute(path) {
  if (!isAbsolute(path)) throw acp.RequestError.invalidParams({ path }, "path must be absolute");
  return path;
}

function asRequestError(error, path) {
  if (error instanceof acp.RequestError) return error;
  if (error?.code === "ENOENT") return acp.RequestError.resourceNotFound(path);
  return acp.RequestError.internalError({ path, reason: String(error?.message ?? error) });
}

async function readLocalFile({ path, line, limit }) {
  console.error(`fs: read ${path}`);
  try {
    const text = await readFile(absolute(path), "utf8");
    if (line == null && limit == null) return { content: text };
    const pieces = text.split(/(?<=\n)/);
    const start = Math.max((line ?? 1) - 1, 0);
    const end = limit == null ? pieces.length : start + limit;
    return { content: pieces.slice(start, end).join("") };
  } catch (error) {
    throw asRequestError(error, path);
  }
}

async function writeLocalFile({ path, content }) {
  console.error(`fs: write ${path} (${content.length} characters)`);
  try {
    await writeFile(absolute(path), content, "utf8");
    return {};
  } catch (error) {
    throw asRequestError(error, path);
  }
}

// ------------------------------------------------------------------ showing the turn

function show({ update }) {
  switch (update.sessionUpdate) {
    case "agent_message_chunk":
    case "agent_thought_chunk": {
      const label = update.sessionUpdate === "agent_message_chunk" ? "text" : "thought";
      const { content } = update;
      console.log(`${label}: ${content.type === "text" ? content.text : `<${content.type}>`}`);
      break;
    }
    case "tool_call":
      console.log(`tool: ${update.title} [${update.kind ?? "other"}, ${update.status ?? "pending"}]`);
      break;
    case "tool_call_update":
      console.log(`tool update: ${update.toolCallId} -> ${update.status ?? "unchanged"}`);
      break;
    case "plan":
      console.log(`plan: ${update.entries.length} entries`);
      break;
    default:
      console.error(`(not shown: ${update.sessionUpdate})`);
  }
}

// ------------------------------------------------------------------ main

function remoteStream(url) {
  const token = process.env.ACP_PEER_TOKEN;
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  return url.startsWith("ws")
    ? createWebSocketStream(url, { headers, WebSocket })
    : createHttpStream(url, { headers });
}

async function runOneTurn({ prompt, cwd, agent: argv, url }) {
  const child = url === null ? spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] }) : null;
  const spawnFailed = child === null ? new Promise(() => {}) : new Promise((_, reject) => child.once("error", reject));
  const stream =
    child === null
      ? remoteStream(url)
      : acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

  const app = acp
    .client({ name: "acp-sdk-interop-client" })
    .onNotification(acp.methods.client.session.update, ({ params }) => show(params))
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => askUser(params))
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => readLocalFile(params))
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => writeLocalFile(params));

  const conversation = app.connectWith(stream, async (agent) => {
    const hello = await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      clientInfo: { name: "acp-sdk-interop-client", version: "0.0.0" },
    });
    console.log(`ready: protocol ${hello.protocolVersion}`);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, {
      cwd,
      mcpServers: [],
    });
    console.log(`session: ${sessionId}`);
    return agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: prompt }],
    });
  });
  try {
    const { stopReason } = await Promise.race([conversation, spawnFailed]);
    console.log(`stop: ${stopReason}`);
    return 0;
  } catch (error) {
    console.error(`client failed: ${error?.stack ?? error}`);
    return 1;
  } finally {
    child?.kill();
  }
}

const status = await runOneTurn(parseCommandLine(process.argv.slice(2)));
process.exit(status);
