#!/usr/bin/env node
// A client that never sees MESSAGES_SNAPSHOT (dropped by a middleware, as a network drop
// or an oversized event would) must continue its thread: the ids it holds from the
// streamed events are the server's ids. Also: a thread larger than the client's 10 MiB
// per-event limit keeps working (windowed snapshot).
//
// Usage: node missed_snapshot.mjs <base-url> <agent> [--no-large] (skip the thread over 10 MiB)
// Output (stdout), JSON: {"ok": bool, "scenarios": [{"name", "ok", "error"?}]}

import { HttpAgent, randomUUID } from "@ag-ui/client";
import { filter } from "rxjs";

const [baseUrl, agentName, flag] = process.argv.slice(2);
const url = `${baseUrl}/agui/${agentName}`;
const PICK_COLOR = {
  name: "pick_color",
  description: "Ask the user to pick a color",
  parameters: { type: "object", properties: {} },
};

function newAgent({ dropSnapshots }) {
  const agent = new HttpAgent({ url, threadId: randomUUID() });
  if (dropSnapshots) {
    agent.use((input, next) => next.run(input).pipe(filter((event) => event.type !== "MESSAGES_SNAPSHOT")));
  }
  return agent;
}

function say(agent, text) {
  agent.messages.push({ id: randomUUID(), role: "user", content: text });
}

async function run(agent, parameters = {}) {
  const events = [];
  let failure;
  let runError;
  try {
    await agent.runAgent({ runId: randomUUID(), ...parameters }, {
      onEvent: ({ event }) => { events.push(event); },
      onRunErrorEvent: ({ event }) => { runError = event; },
      onRunFailed: ({ error }) => { failure = error; },
    });
  } catch (error) {
    failure = failure ?? error;
  }
  if (failure) throw new Error(`runAgent failed: ${failure.message ?? failure}`);
  if (runError) throw new Error(`RUN_ERROR ${runError.code}: ${runError.message}`);
  return events;
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

// The ids the blind client holds must all be ids of the server's own snapshot.
async function compareWithServer(blind) {
  const seeing = newAgent({ dropSnapshots: false });
  seeing.threadId = blind.threadId;
  seeing.messages = structuredClone(blind.messages);
  const events = await run(seeing);
  const snapshot = events.find((event) => event.type === "MESSAGES_SNAPSHOT");
  check(snapshot, "no snapshot on the replay run");
  const stored = new Set(snapshot.messages.map((message) => message.id));
  const unknown = blind.messages.map((message) => message.id).filter((id) => !stored.has(id));
  check(unknown.length === 0, `streamed ids the server does not store: ${unknown.join(", ")}`);
}

const scenarios = {
  async chat_reasoning_and_server_tool() {
    const agent = newAgent({ dropSnapshots: true });
    say(agent, "think about this");
    await run(agent);
    say(agent, 'call get_weather with {"city":"Paris"}');
    const events = await run(agent);
    check(events.some((event) => event.type === "TOOL_CALL_RESULT"), "no tool result");
    check(!events.some((event) => event.type === "MESSAGES_SNAPSHOT"), "the snapshot was not dropped");
    say(agent, "and now?");
    await run(agent);
    await compareWithServer(agent);
  },
  async frontend_tool() {
    const agent = newAgent({ dropSnapshots: true });
    say(agent, "call pick_color");
    const events = await run(agent, { tools: [PICK_COLOR] });
    const pending = events.at(-1).outcome?.pendingToolCallIds ?? [];
    check(pending.length === 1, "no pendingToolCallIds");
    agent.messages.push({ id: randomUUID(), role: "tool", toolCallId: pending[0], content: "teal" });
    await run(agent, { tools: [PICK_COLOR] });
    const reply = agent.messages.filter((message) => message.role === "assistant").pop();
    check(reply && String(reply.content).includes("teal"), "the continuation did not see the result");
    await compareWithServer(agent);
  },
  async approval_interrupt() {
    const agent = newAgent({ dropSnapshots: true });
    say(agent, 'call delete_file with {"path":"/tmp/demo.txt"}');
    const first = await run(agent);
    const outcome = first.at(-1).outcome;
    check(outcome?.type === "interrupt", "no interrupt outcome");
    const resume = outcome.interrupts.map((interrupt) => ({
      interruptId: interrupt.id, status: "resolved", payload: { approved: true },
    }));
    const second = await run(agent, { resume });
    check(second.some((event) => event.type === "TOOL_CALL_RESULT"), "the approved tool did not run");
    say(agent, "thanks");
    await run(agent);
    await compareWithServer(agent);
  },
  async thread_over_the_event_limit() {
    const agent = newAgent({ dropSnapshots: false });
    const filler = "x".repeat(3 * 1024 * 1024);
    let omitted = 0;
    for (let turn = 0; turn < 3; turn += 1) {  // each turn adds ~6 MiB (the demo echoes it)
      say(agent, `note ${turn}: ${filler}`);
      const events = await run(agent);
      const snapshot = events.find((event) => event.type === "MESSAGES_SNAPSHOT");
      check(snapshot, "no snapshot");
      check(JSON.stringify(snapshot).length < 10 * 1024 * 1024, "the snapshot exceeds 10 MiB");
      omitted = snapshot.metadata?.interlock?.omittedMessages ?? 0;
    }
    check(omitted > 0, "the snapshot of a >10 MiB thread was not windowed");
    say(agent, "hello after all that");
    const events = await run(agent);
    check(events.some((event) => event.type === "TEXT_MESSAGE_CONTENT"), "no reply after the window");
  },
};

const results = [];
if (flag === "--no-large") delete scenarios.thread_over_the_event_limit;
for (const [name, scenario] of Object.entries(scenarios)) {
  try {
    await scenario();
    results.push({ name, ok: true });
  } catch (error) {
    results.push({ name, ok: false, error: String(error?.stack ?? error) });
  }
}
const ok = results.every((result) => result.ok);
process.stdout.write(JSON.stringify({ ok, scenarios: results }) + "\n");
process.exitCode = ok ? 0 : 1;
