// The Interlock playground: plain JavaScript, no build step. Talks AG-UI over the
// WebSocket (/agui/{agent}/ws), hydrates a reloaded page with GET /agui/{agent}/threads/{id}
// and re-attaches to a run still going ({"type":"attach"}). The thread lives in the URL
// hash (#agent/thread), so a reload comes back to it.

const $ = (id) => document.getElementById(id);
const log = $("log");
const PICK_COLOR = {
  name: "pick_color",
  description: "Ask the user to pick a color; returns the color name.",
  parameters: { type: "object", properties: {} },
};
const page = { agent: "", thread: "", socket: null, running: false, runId: "", calls: {}, decisions: {}, interrupts: [] };

const uuid = () => crypto.randomUUID();
const key = () => $("key").value.trim();
const headers = () => (key() ? { authorization: `Bearer ${key()}` } : {});

function status(text) { $("status").textContent = text; }

function entry(id, className) {
  let element = id ? document.getElementById(`e-${id}`) : null;
  if (!element) {
    element = document.createElement("div");
    if (id) element.id = `e-${id}`;
    log.append(element);
  }
  element.className = className;
  return element;
}

function note(text, className = "note") { entry(null, className).textContent = text; }

function toolEntry(callId, name) {
  const element = entry(`call-${callId}`, "tool");
  if (!element.firstChild) {
    element.innerHTML = '<span class="call"></span><span class="result"></span>';
  }
  const call = page.calls[callId] || (page.calls[callId] = { name, args: "" });
  if (name) call.name = name;
  element.querySelector(".call").textContent = `tool ${call.name}(${call.args})`;
  return element;
}

function showResult(callId, content) {
  toolEntry(callId, page.calls[callId]?.name).querySelector(".result").textContent = `→ ${content}`;
}

function renderSnapshot(messages) {
  log.replaceChildren();
  page.calls = {};
  for (const message of messages) {
    if (message.role === "tool") { showResult(message.toolCallId, message.content); continue; }
    const content = message.content;
    const text = typeof content === "string" ? content : content ? JSON.stringify(content) : "";
    if (!text) { /* a tool-call-only step, or reasoning with no readable summary */ }
    else if (message.role === "reasoning") entry(message.id, "reasoning").textContent = text;
    else entry(message.id, message.role === "user" ? "user" : "assistant").textContent = text;
    for (const call of message.toolCalls ?? []) {
      page.calls[call.id] = { name: call.function.name, args: call.function.arguments };
      toolEntry(call.id, call.function.name);
    }
  }
}

function apply(event) {
  switch (event.type) {
    case "RUN_STARTED": started(event.runId); break;
    case "TEXT_MESSAGE_START": entry(event.messageId, "assistant").textContent = ""; break;
    case "TEXT_MESSAGE_CONTENT": entry(event.messageId, "assistant").textContent += event.delta; break;
    case "REASONING_MESSAGE_START": break;  // shown once it has text
    case "REASONING_MESSAGE_CONTENT": entry(event.messageId, "reasoning").textContent += event.delta; break;
    case "TOOL_CALL_START": page.calls[event.toolCallId] = { name: event.toolCallName, args: "" }; toolEntry(event.toolCallId, event.toolCallName); break;
    case "TOOL_CALL_ARGS": page.calls[event.toolCallId].args += event.delta; toolEntry(event.toolCallId); break;
    case "TOOL_CALL_RESULT": showResult(event.toolCallId, event.content); break;
    case "STATE_SNAPSHOT": note(`state: ${JSON.stringify(event.snapshot)}`); break;
    case "STATE_DELTA": note(`state change: ${JSON.stringify(event.delta)}`); break;
    case "MESSAGES_SNAPSHOT": renderSnapshot(event.messages); break;
    case "RUN_FINISHED": finished(event.outcome ?? { type: "success" }); break;
    case "RUN_ERROR": stopped(); status("idle"); note(`${event.code}: ${event.message}`, "error"); break;
    default: break;
  }
}

// The run in progress (started here, or re-attached after a reload) can be stopped: a
// cancel on this socket reaches it wherever it runs.
function started(runId) {
  page.running = true;
  page.runId = runId;
  $("stop").disabled = false;
  status(`running ${runId.slice(0, 8)}`);
}

function stopped() {
  page.running = false;
  page.runId = "";
  $("stop").disabled = true;
}

function finished(outcome) {
  stopped();
  status(outcome.type === "success" ? "idle" : outcome.type);
  if (outcome.type === "interrupt") approvalCards(outcome.interrupts);
  for (const callId of outcome.pendingToolCallIds ?? []) waitingCall(callId);
}

function approvalCards(interrupts) {
  page.interrupts = interrupts;
  page.decisions = {};
  for (const interrupt of interrupts) {
    const call = page.calls[interrupt.toolCallId] ?? { name: "?", args: "{}" };
    const card = entry(`card-${interrupt.id}`, "card");
    card.innerHTML = "";
    const title = document.createElement("div");
    title.textContent = `${interrupt.message ?? "Approve?"} ${call.name}(${call.args})`;
    card.append(title);
    const editable = Boolean(interrupt.responseSchema?.properties?.editedArgs);
    const edits = document.createElement("textarea");
    edits.value = call.args;
    if (editable) card.append(edits);
    const decide = (payload) => { page.decisions[interrupt.id] = payload; card.remove(); resumeWhenDecided(); };
    button(card, "Approve", () => decide({ approved: true }));
    button(card, "Reject", () => decide({ approved: false, reason: "rejected in the playground" }));
    if (editable) button(card, "Approve with edits", () => decide({ approved: true, editedArgs: JSON.parse(edits.value) }));
  }
}

function resumeWhenDecided() {
  if (page.interrupts.some((interrupt) => !page.decisions[interrupt.id])) return;
  const resume = page.interrupts.map((interrupt) => ({
    interruptId: interrupt.id, status: "resolved", payload: page.decisions[interrupt.id],
  }));
  page.interrupts = [];
  run({ resume });
}

function waitingCall(callId) {
  const call = page.calls[callId] ?? { name: callId.startsWith("confirm_changes:") ? "confirm_changes" : "?", args: "{}" };
  const card = entry(`card-${callId}`, "card");
  card.innerHTML = "";
  const answer = (content) => { card.remove(); run({ messages: [{ id: uuid(), role: "tool", toolCallId: callId, content }] }); };
  if (call.name === "confirm_changes") {
    const detail = JSON.parse(call.args || "{}");
    card.append(`Confirm ${detail.function_name}(${JSON.stringify(detail.function_arguments)})?`);
    button(card, "Accept", () => answer(JSON.stringify({ accepted: true })));
    button(card, "Decline", () => answer(JSON.stringify({ accepted: false })));
  } else if (call.name === "pick_color") {
    card.append("The agent asks you to pick a color: ");
    const colors = document.createElement("span");
    colors.className = "colors";
    for (const color of ["teal", "orange", "purple"]) button(colors, color, () => answer(color));
    card.append(colors);
  } else {
    card.append(`The agent waits for frontend tool ${call.name}.`);
  }
}

function button(parent, label, onClick) {
  const element = document.createElement("button");
  element.type = "button";
  element.textContent = label;
  element.addEventListener("click", onClick);
  parent.append(element);
}

function run({ messages = [], resume } = {}) {
  const input = {
    threadId: page.thread, runId: uuid(), messages, tools: $("colorTool").checked ? [PICK_COLOR] : [],
    context: [{ description: "The page", value: "the Interlock playground" }], forwardedProps: {},
  };
  if (resume) input.resume = resume;
  page.running = true;
  page.socket.send(JSON.stringify({ type: "run", input }));
}

function connect() {
  return new Promise((resolve, reject) => {
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/agui/${encodeURIComponent(page.agent)}/ws`;
    const socket = new WebSocket(url, key() ? ["interlock", `interlock.key.${key()}`] : []);
    socket.onmessage = (message) => apply(JSON.parse(message.data));
    socket.onopen = () => { page.socket = socket; status("idle"); resolve(); };
    socket.onerror = () => reject(new Error("the WebSocket could not connect"));
    socket.onclose = () => status("disconnected (reload to reconnect)");
  });
}

async function hydrate() {
  const response = await fetch(`/agui/${encodeURIComponent(page.agent)}/threads/${encodeURIComponent(page.thread)}`, { headers: headers() });
  if (response.status === 404) return;
  const view = await response.json();
  for (const event of view.events) apply(event);
  if (view.run?.running) {
    note("re-attached to the run in progress");
    page.socket.send(JSON.stringify({ type: "attach", threadId: page.thread, runId: view.run.runId, lastEventId: 0 }));
    return;
  }
  if (view.interrupts.length) approvalCards(view.interrupts);
  for (const callId of view.pendingToolCallIds) waitingCall(callId);
}

async function open(agent, thread) {
  page.socket?.close();
  page.agent = agent;
  page.thread = thread;
  location.hash = `${agent}/${thread}`;
  log.replaceChildren();
  stopped();
  await connect();
  await hydrate();
}

async function main() {
  const response = await fetch("/agui", { headers: headers() });
  const { agents } = await response.json();
  for (const agent of agents) $("agent").append(new Option(`${agent.name} (${agent.approvalStyle})`, agent.name));
  const [agent, thread] = decodeURIComponent(location.hash.slice(1)).split("/");
  if (agent && agents.some((known) => known.name === agent)) $("agent").value = agent;
  await open($("agent").value, thread || uuid());
  $("agent").addEventListener("change", () => open($("agent").value, uuid()));
  $("newThread").addEventListener("click", () => open($("agent").value, uuid()));
  $("stop").addEventListener("click", () => {
    if (page.runId) page.socket.send(JSON.stringify({ type: "cancel", runId: page.runId }));
  });
  $("composer").addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    const text = $("text").value.trim();
    if (!text || page.running) return;
    $("text").value = "";
    const message = { id: uuid(), role: "user", content: text };
    entry(message.id, "user").textContent = text;
    run({ messages: [message] });
  });
}

main().catch((error) => { status("error"); note(String(error), "error"); });
