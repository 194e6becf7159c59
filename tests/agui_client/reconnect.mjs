#!/usr/bin/env node
// A page that reloads mid-run, with the official @ag-ui/client: the first HttpAgent is
// aborted while a slow tool runs; a fresh agent (the reloaded page) hydrates the thread
// with GET /agui/{agent}/threads/{threadId}, then re-attaches with connectAgent(), whose
// connect() reads GET …/runs/{runId}/events. The run went on without a client: the
// re-attached agent sees it through the client's own verification to RUN_FINISHED.
//
// Usage: node reconnect.mjs <base-url> <agent>
// Output (stdout), JSON: {"ok": bool, "error"?, "types": [...]}

import { HttpAgent, randomUUID, runHttpRequest, transformHttpEventStream } from "@ag-ui/client";

const [baseUrl, agentName] = process.argv.slice(2);
const url = `${baseUrl}/agui/${agentName}`;

// The documented way to give HttpAgent a connect(): re-attach to input.runId.
class ReattachingAgent extends HttpAgent {
  connect(input) {
    const thread = encodeURIComponent(input.threadId);
    const run = encodeURIComponent(input.runId);
    const eventsUrl = `${this.url}/threads/${thread}/runs/${run}/events`;
    const init = { method: "GET", headers: { ...this.headers, Accept: "text/event-stream" } };
    return transformHttpEventStream(runHttpRequest(() => this.fetch(eventsUrl, init)), this.debugLogger);
  }
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function main() {
  const threadId = randomUUID();
  const tag = randomUUID();
  const first = new HttpAgent({ url, threadId });
  first.messages.push({
    id: randomUUID(), role: "user",
    content: `call paced_task with {"tag":"${tag}","seconds":1.5}`,
  });
  const runId = randomUUID();
  await first.runAgent({ runId }, {
    onEvent: ({ event }) => { if (event.type === "TOOL_CALL_END") first.abortRun(); },
  }).catch(() => undefined);  // the page goes away mid-run

  const view = await (await fetch(`${url}/threads/${threadId}`)).json();
  check(view.run?.runId === runId, `the thread does not report run ${runId}`);
  check(view.run.running === true, "the run is not running any more: it did not go on");
  const page = new ReattachingAgent({ url, threadId });
  page.setMessages(view.events.at(-1).messages);
  const types = [];
  let failure;
  await page.connectAgent({ runId }, {
    onEvent: ({ event }) => { types.push(event.type); },
    onRunFailed: ({ error }) => { failure = error; },
  });
  if (failure) throw failure;
  check(types[0] === "RUN_STARTED" && types.at(-1) === "RUN_FINISHED", `trace ${types.join(",")}`);
  const result = page.messages.find((message) => message.role === "tool");
  check(result && String(result.content).includes(`paced ${tag}`), "no tool result after re-attaching");
  return types;
}

try {
  const types = await main();
  process.stdout.write(JSON.stringify({ ok: true, types }) + "\n");
} catch (error) {
  process.stdout.write(JSON.stringify({ ok: false, error: String(error?.stack ?? error) }) + "\n");
  process.exitCode = 1;
}
