// scripts/count-syscalls on rolter alone: the system calls its worker makes per proxied request,
// keep-alive at concurrency 1, counted with strace -c -f.
//
// The event loop reads only when a socket may hold something (net/reactor_read.h), so the count
// does not depend on timing: per request one wait for the client's request and one for the
// upstream's answer (epoll_wait), one read of each (recvfrom), one write of each (sendmsg). A read
// tried before its data is there, a look at a pooled connection, or a watch re-armed with
// epoll_ctl would each add one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const binDir = process.env.ROLTER_BIN_DIR ?? path.join(root, 'build', 'bin');

function countSyscalls(args) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-syscalls-'));
  const json = path.join(dir, 'counts.json');
  return new Promise((resolve, reject) => {
    execFile(path.join(root, 'scripts', 'count-syscalls'),
      ['--paths', 'rolter', '--rolter', path.join(binDir, 'rolter'), '--json', json, ...args],
      { timeout: 240000 }, (err, stdout, stderr) => {
        try {
          if (err) return reject(new Error(`count-syscalls failed: ${err.message}\n${stderr}`));
          resolve(JSON.parse(readFileSync(json, 'utf8')));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
  });
}

test('a proxied JSON request costs the worker six system calls', async () => {
  const results = await countSyscalls(['--requests', '2000', '--warmup', '200']);
  const worker = results.find((r) => r.path === 'rolter (worker)');
  assert.ok(worker, JSON.stringify(results));
  const calls = worker.per_request;
  const detail = JSON.stringify(calls);
  // Rounded to a hundredth: a rare spurious wake-up or a timer re-armed does not fail it.
  assert.ok((calls.epoll_wait ?? 0) <= 2.02, detail);
  assert.ok((calls.recvfrom ?? 0) <= 2.02, detail);
  assert.ok((calls.sendmsg ?? 0) <= 2.02, detail);
  assert.equal(calls.epoll_ctl ?? 0, 0, detail);
  assert.ok(worker.total_per_request <= 6.05, detail);
  // And it did the work: a request's read and write on each side.
  assert.ok(calls.recvfrom >= 1.99 && calls.sendmsg >= 1.99, detail);
});
