// Reading a rolter's Prometheus exposition in tests: scrape it, read one endpoint's series, and
// lint it with promtool.
//
//   const text = await scrapeMetrics(rolter);
//   endpointValue(text, 'rolter_in_flight', 'engine-0');          // a number, or undefined
//   endpointState(text, 'rolter_kv_events_state', 'engine-0');    // 'live', ..., or undefined
//   assert.equal((await promtool(t, text)).code, 0);
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fetchWithin, settle } from './http.mjs';

// GET /metrics on `rolter` (anything with a `url`); asserts a 200 and returns the text.
export async function scrapeMetrics(rolter) {
  const r = await settle(await fetchWithin(`${rolter.url}/metrics`));
  assert.equal(r.status, 200, r.text);
  return r.text;
}

// The value of `metric` for provider `provider`'s endpoint (the series labelled
// endpoint="<provider>@<base_url>" and nothing else), or undefined when absent.
export function endpointValue(text, metric, provider) {
  const m = text.match(new RegExp(`^${metric}\\{endpoint="${provider}@[^"]*"\\} (\\S+)$`, 'm'));
  return m ? Number(m[1]) : undefined;
}

// The state a state-set `metric` marks (its series with value 1) for provider `provider`'s
// endpoint, or undefined when it has none.
export function endpointState(text, metric, provider) {
  const re = new RegExp(`^${metric}\\{endpoint="${provider}@[^"]*",state="([^"]*)"\\} 1$`, 'm');
  return text.match(re)?.[1];
}

// Runs `promtool check metrics` on an exposition; resolves with its exit code and output. The
// temporary file is removed when the test ends.
export async function promtool(t, text) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-metrics-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'metrics.txt');
  writeFileSync(file, text);
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', `promtool check metrics < ${file}`], { timeout: 10000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code ?? error.signal) : 0, out: stdout + stderr }));
  });
}
