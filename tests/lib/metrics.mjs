// Reading a rolter's Prometheus exposition in tests: scrape it, read one instance's series, and
// lint it with promtool.
//
//   const text = await scrapeMetrics(rolter);
//   instanceValue(text, 'rolter_in_flight', 'engine-0');   // a number, or undefined when absent
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

// The value of `metric` for provider `provider`'s instance (the series labelled
// instance="<provider>@<base_url>"), or undefined when absent.
export function instanceValue(text, metric, provider) {
  const m = text.match(new RegExp(`^${metric}\\{instance="${provider}@[^"]*"\\} (\\S+)$`, 'm'));
  return m ? Number(m[1]) : undefined;
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
