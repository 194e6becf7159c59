// The browser harness: Debian's chromium (/usr/bin/chromium, or $CHROMIUM) driven by
// playwright-core (no browser download), pages served from a second loopback origin, and
// the official @ag-ui/client bundled for the browser with esbuild.
//
//   import { launchChromium, servePage, bundleAgUiClient } from "./chromium.mjs";
//   const browser = await launchChromium();           // fresh user-data-dir, fixed flags
//   const page = await browser.newPage();
//   const site = await servePage(port, { "/": html, "/agui.js": await bundleAgUiClient() });
//   await page.goto(site.url); ... ; await site.close(); await browser.close();
//
// bundleAgUiClient() is one ES module exporting everything @ag-ui/client exports
// (HttpAgent, randomUUID, verifyEvents, ...): `import { HttpAgent } from "/agui.js"`.

import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium } from "playwright-core";

const HERE = dirname(fileURLToPath(import.meta.url));
export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

/** A headless chromium with a fresh profile; close() also removes the profile. */
export async function launchChromium() {
  const profile = mkdtempSync(join(tmpdir(), "interlock-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS,
  });
  const close = context.close.bind(context);
  context.close = async () => {
    try { await close(); } finally { rmSync(profile, { recursive: true, force: true }); }
  };
  return context;
}

/** Serve `files` ({path: text}) on http://127.0.0.1:<port>; `{url, close}`. */
export async function servePage(port, files) {
  const server = createServer((request, response) => {
    const body = files[new URL(request.url, "http://x").pathname];
    if (body === undefined) { response.writeHead(404).end(); return; }
    const type = request.url.endsWith(".js") ? "text/javascript" : "text/html";
    response.writeHead(200, { "content-type": `${type}; charset=utf-8` }).end(body);
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((done) => server.close(done)) };
}

/** @ag-ui/client as one browser ES module (text). */
export async function bundleAgUiClient() {
  const result = await build({
    stdin: { contents: 'export * from "@ag-ui/client";', resolveDir: HERE, loader: "js" },
    bundle: true, format: "esm", platform: "browser", write: false, logLevel: "silent",
  });
  return result.outputFiles[0].text;
}
