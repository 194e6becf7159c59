#!/usr/bin/env node
// Drives the playground page of a running `interlock serve` in headless chromium:
// 1. asks for delete_file (needs approval), approves on the card, sees the result; rejects
//    one, approves another with edited arguments;
// 2. starts paced_task, reloads the page while it runs, sees the run finish after reload;
//    starts a long one, reloads, stops it with the Stop button (cancel on the attached socket);
// 3. answers the page's frontend tool pick_color;
// 4. on an agent whose upstream streams readable reasoning, sees the reasoning text render
//    before the answer (a MutationObserver records the order); saves a screenshot;
// 5. on the confirm_changes agent, accepts the confirmation and sees the result.
//
// Usage: node playground.mjs <base-url> <path-tag> <paced-tag> <screenshot.png>
// Output (stdout), JSON: {"ok": bool, "error"?, "steps": [...]}

import { launchChromium } from "./chromium.mjs";

const [baseUrl, pathTag, pacedTag, screenshot] = process.argv.slice(2);
const steps = [];
const browser = await launchChromium();
let ok = false;
let failure;
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(`${baseUrl}/`);
  await page.selectOption("#agent", "assistant");
  await page.waitForFunction(() => document.querySelector("#status").textContent === "idle");
  steps.push("loaded");

  await page.fill("#text", `call delete_file with {"path":"${pathTag}"}`);
  await page.click("#send");
  await page.getByRole("button", { name: "Approve", exact: true }).click({ timeout: 20000 });
  await page.getByText(`→ deleted ${pathTag}`, { exact: true }).waitFor({ timeout: 20000 });
  steps.push("approved");

  await page.fill("#text", `call delete_file with {"path":"${pathTag}-r"}`);
  await page.click("#send");
  await page.getByRole("button", { name: "Reject", exact: true }).click({ timeout: 20000 });
  await page.waitForFunction(() => document.querySelector("#status").textContent === "idle");
  await page.fill("#text", `call delete_file with {"path":"${pathTag}-e"}`);
  await page.click("#send");
  await page.locator(".card textarea").fill(`{"path":"${pathTag}-edited"}`, { timeout: 20000 });
  await page.getByRole("button", { name: "Approve with edits", exact: true }).click();
  await page.getByText(`→ deleted ${pathTag}-edited`).waitFor({ timeout: 20000 });
  steps.push("rejected and edited");

  await page.fill("#text", `call paced_task with {"tag":"${pacedTag}","seconds":3}`);
  await page.click("#send");
  await page.getByText("tool paced_task").waitFor({ timeout: 20000 });
  await page.reload();
  steps.push("reloaded");
  await page.getByText(`→ paced ${pacedTag}`).waitFor({ timeout: 20000 });
  await page.getByText(`→ deleted ${pathTag}`, { exact: true }).waitFor({ timeout: 5000 });
  steps.push("continued");
  await page.waitForFunction(() => document.querySelector("#status").textContent === "idle");

  await page.fill("#text", `call paced_task with {"tag":"${pacedTag}-stop","seconds":60}`);
  await page.click("#send");
  await page.locator(".tool", { hasText: `${pacedTag}-stop` }).waitFor({ timeout: 20000 });
  await page.reload();  // re-attached to the run, then stopped from the reloaded page
  await page.getByText("re-attached to the run in progress").waitFor({ timeout: 20000 });
  await page.locator("#stop:enabled").click({ timeout: 20000 });
  await page.waitForFunction(() => document.querySelector("#status").textContent === "cancelled", null, { timeout: 20000 });
  steps.push("stopped after reload");

  await page.fill("#text", "call pick_color");  // the page's frontend tool
  await page.click("#send");
  await page.getByRole("button", { name: "teal", exact: true }).click({ timeout: 20000 });
  await page.getByText("returned teal").waitFor({ timeout: 20000 });
  steps.push("frontend tool");

  await page.selectOption("#agent", "thinker");  // streams readable reasoning, a new thread
  await page.waitForFunction(() => document.querySelector("#status").textContent === "idle");
  await page.evaluate(() => {
    // Record, after every change of the log, whether the reasoning and the answer show yet.
    window.reasoningOrder = [];
    const has = (selector, text) =>
      [...document.querySelectorAll(selector)].some((element) => element.textContent.includes(text));
    new MutationObserver(() => {
      const seen = `${has(".reasoning", "Thinking about the request.") ? "R" : "-"}` +
        `${has(".assistant", "You said: hello thinker") ? "A" : "-"}`;
      if (window.reasoningOrder.at(-1) !== seen) window.reasoningOrder.push(seen);
    }).observe(document.querySelector("#log"), { subtree: true, childList: true, characterData: true });
  });
  await page.fill("#text", "hello thinker");
  await page.click("#send");
  await page.getByText("You said: hello thinker").waitFor({ timeout: 20000 });
  await page.waitForFunction(() => document.querySelector("#status").textContent === "idle");
  const order = await page.evaluate(() => window.reasoningOrder);
  const reasoningFirst = order.indexOf("R-");
  const answerFirst = order.findIndex((seen) => seen.endsWith("A"));
  if (reasoningFirst < 0 || answerFirst < reasoningFirst || order.at(-1) !== "RA") {
    throw new Error(`reasoning did not render before the answer: ${JSON.stringify(order)}`);
  }
  const shown = await page.locator(".reasoning").first().textContent();
  if (shown !== "Thinking about the request.") throw new Error(`reasoning shown as ${JSON.stringify(shown)}`);
  steps.push("reasoning before answer");

  await page.screenshot({ path: screenshot, fullPage: true });
  await page.selectOption("#agent", "confirmer");  // confirm_changes style, a new thread
  await page.waitForFunction(() => document.querySelector("#status").textContent === "idle");
  await page.fill("#text", `call delete_file with {"path":"${pathTag}-c"}`);
  await page.click("#send");
  await page.getByRole("button", { name: "Accept", exact: true }).click({ timeout: 20000 });
  await page.getByText(`deleted ${pathTag}-c`).first().waitFor({ timeout: 20000 });
  steps.push("confirm_changes");
  if (errors.length) throw new Error(`page errors: ${errors.join("; ")}`);
  ok = true;
} catch (error) {
  failure = String(error?.stack ?? error);
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify({ ok, error: failure, steps }) + "\n");
process.exitCode = ok ? 0 : 1;
