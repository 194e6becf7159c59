#!/usr/bin/env node
// Runs recorded AG-UI event traces through the official @ag-ui/client 1.0.0 checks, in the
// order the client's own pipeline applies them: enforceEvents (schema: nulls, integer
// timestamps, required fields; strips unknown material with a warning) → transformChunks
// (CHUNK expansion) → verifyEvents (run/message/tool/reasoning sequencing).
//
// Input (stdin, or the file named by the first argument), JSON, one of:
//   [event, ...]                                  one trace
//   {"traces": [{"name": "...", "events": [event, ...]}, ...]}   several traces
// Output (stdout), JSON: {"ok": bool, "traces": [{"name", "ok", "error"?, "warnings": [...]}]}
// A trace fails when a stage throws, or when the client had to strip or drop anything
// (a warning of the enforcement stage): the official client would silently lose it.
// Exit status: 0 when every trace passes, 1 otherwise, 2 on unreadable input.

import { readFileSync } from "node:fs";
import { enforceEvents, transformChunks, verifyEvents } from "@ag-ui/client";
import { from, lastValueFrom, toArray } from "rxjs";

const LOSSY_WARNING = /\[ag-ui\]\[(enforce|compat)\]|Removed unrecognised|Dropping unrecognised/;

function readInput() {
  const path = process.argv[2];
  const text = path && path !== "-" ? readFileSync(path, "utf8") : readFileSync(0, "utf8");
  const document = JSON.parse(text);
  if (Array.isArray(document)) return [{ name: "trace", events: document }];
  if (document && Array.isArray(document.traces)) return document.traces;
  throw new Error("expected a JSON array of events or {\"traces\": [...]}");
}

async function verifyTrace(trace) {
  const warnings = [];
  const originalWarn = console.warn;
  console.warn = (...args) => warnings.push(args.map(String).join(" "));
  let error;
  try {
    await lastValueFrom(
      from(trace.events).pipe(enforceEvents(), transformChunks(), verifyEvents(), toArray()),
    );
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
  } finally {
    console.warn = originalWarn;
  }
  const lossy = warnings.filter((line) => LOSSY_WARNING.test(line));
  const verdict = { name: trace.name, ok: error === undefined && lossy.length === 0, warnings };
  if (error !== undefined) verdict.error = error;
  else if (lossy.length) verdict.error = `the client stripped or dropped material: ${lossy[0]}`;
  return verdict;
}

async function main() {
  let traces;
  try {
    traces = readInput();
  } catch (caught) {
    process.stdout.write(JSON.stringify({ ok: false, error: String(caught), traces: [] }) + "\n");
    return 2;
  }
  const verdicts = [];
  for (const trace of traces) verdicts.push(await verifyTrace(trace));
  const ok = verdicts.every((verdict) => verdict.ok);
  process.stdout.write(JSON.stringify({ ok, traces: verdicts }) + "\n");
  return ok ? 0 : 1;
}

process.exitCode = await main();
