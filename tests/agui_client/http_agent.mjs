#!/usr/bin/env node
// Drives a running Interlock gateway's SSE endpoint with the official @ag-ui/client 1.0.0
// HttpAgent: every event passes the client's own pipeline (enforceEvents → transformChunks
// → verifyEvents → defaultApplyEvents) before it reaches us.
//
// Usage: node http_agent.mjs <base-url> <agent>
// Scenarios: plain chat, reasoning (sealed values sent back on the next run), a server
// tool, a frontend tool continued in a second run, an approval via interrupt and resume.
// Output (stdout), JSON: {"ok": bool, "scenarios": [{"name", "ok", "error"?, "runs": [...]}]}
// A run fails when runAgent rejects (verification/HTTP), when RUN_ERROR arrives, when the
// client stripped or dropped material (an [ag-ui] enforce/compat warning), or when the
// checks the client leaves to us fail: RUN_STARTED ids and protocolVersion, exactly one
// terminal event repeating the ids.

import { HttpAgent, randomUUID } from "@ag-ui/client";

const [baseUrl, agentName] = process.argv.slice(2);
const url = `${baseUrl}/agui/${agentName}`;
const LOSSY_WARNING = /\[ag-ui\]\[(enforce|compat)\]|Removed unrecognised|Dropping unrecognised/;
const PICK_COLOR = {
  name: "pick_color",
  description: "Ask the user to pick a color",
  parameters: { type: "object", properties: {} },
};

async function run(agent, parameters = {}) {
  const events = [];
  const warnings = [];
  const originalWarn = console.warn;
  console.warn = (...args) => warnings.push(args.map(String).join(" "));
  let failure;
  let runError;
  const runId = randomUUID();
  try {
    await agent.runAgent(
      { runId, ...parameters },
      {
        onEvent: ({ event }) => { events.push(event); },
        onRunErrorEvent: ({ event }) => { runError = event; },
        onRunFailed: ({ error }) => { failure = error; },
      },
    );
  } catch (error) {
    failure = failure ?? error;
  } finally {
    console.warn = originalWarn;
  }
  const problems = [];
  if (failure) problems.push(`runAgent failed: ${failure.message ?? failure}`);
  if (runError) problems.push(`RUN_ERROR ${runError.code}: ${runError.message}`);
  const lossy = warnings.filter((line) => LOSSY_WARNING.test(line));
  if (lossy.length) problems.push(`the client stripped or dropped material: ${lossy[0]}`);
  const first = events[0];
  if (!first || first.type !== "RUN_STARTED") problems.push("the first event is not RUN_STARTED");
  else {
    if (first.threadId !== agent.threadId || first.runId !== runId) problems.push("RUN_STARTED ids differ");
    if (first.protocolVersion !== "1.0") problems.push("RUN_STARTED.protocolVersion is not 1.0");
  }
  const terminal = events.filter((event) => event.type === "RUN_FINISHED" || event.type === "RUN_ERROR");
  if (terminal.length !== 1 || terminal[0] !== events[events.length - 1]) {
    problems.push(`expected exactly one terminal event, last; got ${terminal.length}`);
  } else if (terminal[0].type === "RUN_FINISHED"
             && (terminal[0].threadId !== agent.threadId || terminal[0].runId !== runId)) {
    problems.push("RUN_FINISHED ids differ");
  }
  const outcome = terminal[0]?.outcome;
  return {
    runId,
    problems,
    types: events.map((event) => event.type),
    outcome,
    pendingToolCallIds: outcome?.pendingToolCallIds ?? [],
    interrupts: outcome?.type === "interrupt" ? outcome.interrupts : [],
    events,
  };
}

function newAgent(text) {
  return new HttpAgent({
    url,
    threadId: randomUUID(),
    initialMessages: [{ id: randomUUID(), role: "user", content: text }],
  });
}

function say(agent, text) {
  agent.messages.push({ id: randomUUID(), role: "user", content: text });
}

function expect(condition, message, runs) {
  if (!condition) runs[runs.length - 1].problems.push(message);
}

const scenarios = {
  async plain_chat() {
    const agent = newAgent("hello there");
    const runs = [await run(agent)];
    expect(runs[0].types.includes("TEXT_MESSAGE_CONTENT"), "no text streamed", runs);
    return runs;
  },
  async reasoning() {
    const agent = newAgent("think about this");
    const runs = [await run(agent)];
    expect(runs[0].types.includes("REASONING_MESSAGE_START"), "no reasoning streamed", runs);
    const sealed = agent.messages.filter((message) => message.encryptedValue
      || (message.toolCalls ?? []).some((call) => call.encryptedValue));
    expect(sealed.length > 0, "no sealed value reached the client's messages", runs);
    say(agent, "and now?");
    runs.push(await run(agent));
    return runs;
  },
  async server_tool() {
    const agent = newAgent('call get_weather with {"city":"Paris"}');
    const runs = [await run(agent)];
    expect(runs[0].types.includes("TOOL_CALL_RESULT"), "no tool result", runs);
    return runs;
  },
  async frontend_tool() {
    const agent = newAgent("call pick_color");
    const runs = [await run(agent, { tools: [PICK_COLOR] })];
    const pending = runs[0].pendingToolCallIds ?? [];
    expect(pending.length === 1, "no pendingToolCallIds", runs);
    agent.messages.push({ id: randomUUID(), role: "tool", toolCallId: pending[0], content: "teal" });
    runs.push(await run(agent, { tools: [PICK_COLOR] }));
    const reply = agent.messages.filter((message) => message.role === "assistant").pop();
    expect(reply && String(reply.content).includes("teal"), "the continuation did not see the result", runs);
    return runs;
  },
  async approval_interrupt() {
    const agent = newAgent('call delete_file with {"path":"/tmp/demo.txt"}');
    const runs = [await run(agent)];
    expect(runs[0].outcome?.type === "interrupt", "no interrupt outcome", runs);
    const interrupts = runs[0].interrupts;
    const resume = interrupts.map((interrupt) => ({
      interruptId: interrupt.id, status: "resolved", payload: { approved: true },
    }));
    runs.push(await run(agent, { resume }));
    expect(runs[1].types.includes("TOOL_CALL_RESULT"), "the approved tool did not run", runs);
    return runs;
  },
};

const results = [];
for (const [name, scenario] of Object.entries(scenarios)) {
  try {
    const runs = await scenario();
    const problems = runs.flatMap((entry) => entry.problems);
    results.push({ name, ok: problems.length === 0, error: problems[0], runs });
  } catch (error) {
    results.push({ name, ok: false, error: String(error?.stack ?? error), runs: [] });
  }
}
const ok = results.every((result) => result.ok);
process.stdout.write(JSON.stringify({ ok, scenarios: results }) + "\n");
process.exitCode = ok ? 0 : 1;
