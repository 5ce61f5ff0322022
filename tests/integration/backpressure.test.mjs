// Back-pressure, not buffering: a stream relayed to a client that reads 1 byte per millisecond
// keeps rolter's memory flat, because rolter reads from the upstream only as fast as the client
// takes the bytes. The upstream offers far more than any buffer would hold (256 MiB of SSE, written
// as fast as its socket accepts); what it managed to write, and rolter's resident memory over the
// run, show whether rolter held it back or soaked it up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { configFor, startRolter } from '../lib/rolter.mjs';
import { sleep, withDeadline } from '../lib/http.mjs';

const OFFERED_BYTES = 256 * 1024 * 1024;
const READ_SECONDS = 6;

// An SSE upstream that writes events until OFFERED_BYTES, always waiting for 'drain' when its
// socket is full: the bytes it has written are the bytes the gateway (and the kernel's socket
// buffers) accepted.
async function floodingUpstream(t) {
  const state = { written: 0, requests: 0 };
  const event = `data: ${JSON.stringify({
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: { content: 'x'.repeat(900) }, finish_reason: null }],
  })}\n\n`;
  const server = http.createServer((req, res) => {
    req.resume();
    state.requests += 1;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const pump = () => {
      while (state.written < OFFERED_BYTES) {
        state.written += event.length;
        if (!res.write(event)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end('data: [DONE]\n\n');
    };
    pump();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${server.address().port}`, state };
}

function rssBytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]);
  return kb * 1024;
}

test('a stream relayed to a client reading 1 byte per millisecond keeps rolter\'s RSS flat', async (t) => {
  const up = await floodingUpstream(t);
  const rolter = await startRolter({
    config: configFor({ engines: [{ url: up.url }], routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }] }] }),
    workers: 1,
  });
  t.after(() => rolter.stop());
  const pid = rolter.child.pid;

  // A raw client with a small receive buffer that takes one byte per millisecond.
  const socket = net.connect({ port: rolter.port, host: '127.0.0.1' });
  t.after(() => socket.destroy());
  await withDeadline(new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  }), 5000, 'the client to connect');
  socket.pause();
  const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: rolter\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);

  let received = 0;
  let head = '';
  const reader = setInterval(() => {
    const byte = socket.read(1);
    if (byte !== null) {
      received += 1;
      if (head.length < 4096 && !head.includes('\r\n\r\n')) head += byte.toString('latin1');
    }
  }, 1);
  t.after(() => clearInterval(reader));

  // Let the pipes fill, then sample rolter's memory for the rest of the run.
  await withDeadline((async () => { while (up.state.requests === 0) await sleep(20); })(), 5000,
    'the request to reach the upstream');
  await sleep(1000);
  const baseline = rssBytes(pid);
  const writtenAtBaseline = up.state.written;
  let peak = baseline;
  for (let i = 0; i < (READ_SECONDS - 1) * 4; i += 1) {
    await sleep(250);
    peak = Math.max(peak, rssBytes(pid));
  }
  clearInterval(reader);

  assert.match(head, /^HTTP\/1\.1 200 /, `the client got the relayed head:\n${head}`);
  assert.ok(received > 500, `the client read ${received} bytes in ${READ_SECONDS} s`);
  // The upstream was held back: of 256 MiB offered, only what fits in the socket buffers along
  // the way (a few MiB each, as the kernel tunes them) left it; and after the first second, when
  // those buffers were full, it could write hardly more.
  assert.ok(up.state.written < 48 * 1024 * 1024,
    `the upstream wrote ${(up.state.written / 1048576).toFixed(1)} MiB: rolter read ahead of its client`);
  assert.ok(up.state.written - writtenAtBaseline < 8 * 1024 * 1024,
    `the upstream wrote ${((up.state.written - writtenAtBaseline) / 1048576).toFixed(1)} MiB more ` +
    `while the client read ${received} bytes`);
  // And rolter's memory stayed flat while it waited on the slow reader. Under AddressSanitizer
  // (scripts/test-sanitize sets ROLTER_SANITIZED) freed memory sits in the quarantine instead of
  // being reused, so the node's periodic stats report alone can add a few MiB; buffering the
  // stream would add far more than either bound (256 MiB are on offer).
  const growth = peak - baseline;
  const allowedMiB = process.env.ROLTER_SANITIZED === '1' ? 16 : 4;
  assert.ok(growth < allowedMiB * 1024 * 1024,
    `rolter's RSS grew by ${(growth / 1048576).toFixed(1)} MiB (from ${(baseline / 1048576).toFixed(1)} MiB)`);
  t.diagnostic(`rss ${(baseline / 1048576).toFixed(1)} -> peak ${(peak / 1048576).toFixed(1)} MiB; ` +
    `upstream wrote ${(up.state.written / 1048576).toFixed(1)} MiB of 256; client read ${received} B`);
});
