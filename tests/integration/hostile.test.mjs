// Hostile input: each case gets a clear answer (or a cut connection) and the gateway keeps
// serving everyone else.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startSim } from '../lib/sim.mjs';
import { startRolter, configFor } from '../lib/rolter.mjs';

let sim;
let garbage;
let rolter;

before(async () => {
  sim = await startSim({ engines: 1, args: ['--time-scale', '0'] });
  // An "engine" that answers every request with bytes that are not HTTP.
  garbage = net.createServer((socket) => {
    socket.once('data', () => socket.end('this is not http\r\n\r\n\x00\x01\x02'));
  });
  await new Promise((resolve) => garbage.listen(0, '127.0.0.1', resolve));
  const config = configFor({ engines: sim.engines, routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }] }] })
    .replace('[server]\n', '[server]\nheader_timeout_ms = 500\n') + `
[[providers]]
name = "garbage"
base_url = "http://127.0.0.1:${garbage.address().port}"

[[routes]]
name = "broken"
[[routes.targets]]
provider = "garbage"
model = "x"
`;
  rolter = await startRolter({ config });
});

after(async () => {
  await rolter?.stop();
  await sim?.stop();
  garbage?.close();
});

async function stillServing() {
  const res = await fetch(`${rolter.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'ok?' }], max_tokens: 1 }),
  });
  assert.equal(res.status, 200);
  await res.arrayBuffer();
}

// Opens a raw connection; returns helpers to write and to await what the server sends.
async function raw() {
  const socket = net.connect(rolter.port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (d) => { received += d; });
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.on('error', () => {});
  return { socket, closed, text: () => received };
}

test('a 1 GiB Content-Length gets 413 without the body being read', async () => {
  const c = await raw();
  c.socket.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
    'Content-Length: 1073741824\r\n\r\n{"model":"m"');
  await c.closed;
  assert.match(c.text(), /^HTTP\/1\.1 413 /);
  assert.match(c.text(), /max_body_bytes/);
  await stillServing();
});

test('a slow-loris client is cut at the header timeout while others are served', async () => {
  const c = await raw();
  c.socket.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n');
  const drip = setInterval(() => c.socket.write('X'), 100);
  try {
    await stillServing();
    const started = Date.now();
    await Promise.race([
      c.closed,
      new Promise((_, reject) => setTimeout(() => reject(new Error('not cut within 5 s')), 5000)),
    ]);
    assert.ok(Date.now() - started < 5000);
    assert.doesNotMatch(c.text(), /200 OK/);
  } finally {
    clearInterval(drip);
  }
  await stillServing();
});

test('10,000-deep JSON nesting is a 400', async () => {
  const body = '{"model":"m","messages":' + '['.repeat(10000) + ']'.repeat(10000) + '}';
  const res = await fetch(`${rolter.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body,
  });
  assert.equal(res.status, 400);
  const error = (await res.json()).error;
  assert.equal(error.code, 'too_deep');
  await stillServing();
});

test('invalid UTF-8 in the body is a 400', async () => {
  const body = Buffer.concat([Buffer.from('{"model":"m","messages":[{"role":"user","content":"'),
    Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')]);
  const res = await fetch(`${rolter.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body,
  });
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error.code, 'invalid_utf8');
  await stillServing();
});

test('a garbage upstream response is a 502 naming the target', async () => {
  const res = await fetch(`${rolter.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'broken', messages: [{ role: 'user', content: 'x' }] }),
  });
  assert.equal(res.status, 502);
  const error = (await res.json()).error;
  assert.match(error.message, /garbage\/x: response: /);
  assert.doesNotMatch(error.message, /http:|127\.0\.0\.1/);
  await stillServing();
});

test('an unknown endpoint is 404 and a wrong method 405, in the OpenAI shape', async () => {
  const missing = await fetch(`${rolter.url}/v1/nothing`);
  assert.equal(missing.status, 404);
  assert.ok((await missing.json()).error.message);
  const wrong = await fetch(`${rolter.url}/v1/chat/completions`);
  assert.equal(wrong.status, 405);
  assert.ok((await wrong.json()).error.message);
});
