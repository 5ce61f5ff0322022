// tests/bench/soak.mjs, short: 16 clients for 20 s, the same mix of streamed, dropped and plain
// requests. Every request must be answered whole (zero client errors), each kind must have been
// sent, and rolter must still be running. The memory band is the 10-minute run's business
// (docs/benchmarks.md); here it is wide, so only a gross leak would fail it.
//   ROLTER_BIN_DIR=build/bin node --test tests/bench/soak.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withDeadline } from '../lib/http.mjs';

const soak = path.join(path.dirname(fileURLToPath(import.meta.url)), 'soak.mjs');

function run(args) {
  const child = spawn(process.execPath, [soak, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const done = new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
  return withDeadline(done, 120000, 'the soak to finish').catch((e) => {
    child.kill('SIGKILL');
    throw e;
  });
}

test('a short soak: every answer whole, every kind of request sent, rolter alive', async () => {
  const { code, out, err } = await run(['--seconds', '20', '--clients', '16', '--warmup-s', '5',
    '--sample-s', '5', '--rss-band-mb', '64']);
  const lines = out.trim().split('\n');
  const summary = JSON.parse(lines[lines.length - 1]);
  assert.equal(summary.errors, 0, `client errors: ${JSON.stringify(summary.firstErrors)}\n${err}`);
  assert.equal(summary.rolterAlive, true);
  assert.ok(summary.streamed > 100, `streamed ${summary.streamed}`);
  assert.ok(summary.plain > 20, `plain ${summary.plain}`);
  assert.ok(summary.dropped > 10, `dropped ${summary.dropped}`);
  assert.equal(summary.sent, summary.streamed + summary.plain + summary.dropped);
  assert.ok(lines.some((l) => l.startsWith('| 5 |') || /^\| \d+ \| [\d.]+ \|/.test(l)), out);
  assert.equal(code, 0, `${out}\n${err}`);
});
