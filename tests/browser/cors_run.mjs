// A page on http://127.0.0.1:<page-port> (another origin than the gateway) runs the official
// @ag-ui/client HttpAgent against <gateway-url>/agui/<agent>: a tool needing approval, the
// interrupt, a resume approving it. Every event passes the client's own verification.
//
// Usage: node cors_run.mjs <gateway-url> <agent> <page-port> <path-argument>
// Output (stdout), JSON: {"ok", "runs": [{"types", "outcome", "error"?}], "error"?, "console": [...]}

import { bundleAgUiClient, launchChromium, servePage } from "./chromium.mjs";

const [gatewayUrl, agentName, pagePort, pathArgument] = process.argv.slice(2);
const PAGE = `<!doctype html><meta charset="utf-8"><title>interlock cors</title>
<script type="module">
import { HttpAgent, randomUUID } from "/agui.js";
window.runScenario = async (url, text) => {
  const agent = new HttpAgent({ url });
  agent.messages.push({ id: randomUUID(), role: "user", content: text });
  const runs = [];
  const once = async (parameters) => {
    const types = []; let outcome; let error;
    try {
      await agent.runAgent({ runId: randomUUID(), ...parameters }, {
        onEvent: ({ event }) => { types.push(event.type); if (event.type === "RUN_FINISHED") outcome = event.outcome; },
        onRunErrorEvent: ({ event }) => { error = "RUN_ERROR " + event.code + ": " + event.message; },
      });
    } catch (caught) { error = String(caught && caught.message || caught); }
    runs.push({ types, outcome, error });
    return runs[runs.length - 1];
  };
  const first = await once({});
  if (first.error || !first.outcome || first.outcome.type !== "interrupt") return runs;
  const resume = first.outcome.interrupts.map((interrupt) => ({
    interruptId: interrupt.id, status: "resolved", payload: { approved: true },
  }));
  await once({ resume });
  return runs;
};
</script>`;

const verdict = { ok: false, runs: [], console: [] };
let browser;
let site;
try {
  site = await servePage(Number(pagePort), { "/": PAGE, "/agui.js": await bundleAgUiClient() });
  browser = await launchChromium();
  const page = await browser.newPage();
  page.on("console", (message) => verdict.console.push(message.text()));
  await page.goto(`${site.url}/`);
  await page.waitForFunction(() => typeof window.runScenario === "function");
  verdict.origin = await page.evaluate(() => location.origin);
  const text = `call delete_file with {"path":"${pathArgument}"}`;
  verdict.runs = await page.evaluate(
    ([url, message]) => window.runScenario(url, message),
    [`${gatewayUrl}/agui/${agentName}`, text],
  );
  verdict.ok = verdict.runs.length === 2 && verdict.runs.every((run) => !run.error);
} catch (error) {
  verdict.error = String(error?.stack ?? error);
} finally {
  await browser?.close();
  await site?.close();
}
process.stdout.write(JSON.stringify(verdict) + "\n");
