// Hostile input: each case gets a clear answer (or a cut connection) and the gateway keeps
// serving everyone else. Each test starts its own rolter-sim, "garbage" engine and rolter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startFleet, configFor } from '../lib/rolter.mjs';
import { chat, fetchWithin, postJson, settle, sleep } from '../lib/http.mjs';
import { openRaw } from '../lib/raw_client.mjs';

const HEADER_TIMEOUT_MS = 500;

// An "engine" that answers every request with bytes that are not HTTP; closed when the test ends.
async function startGarbageEngine(t) {
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.once('data', () => socket.end('this is not http\r\n\r\n\x00\x01\x02'));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return { name: 'garbage', url: `http://127.0.0.1:${server.address().port}` };
}

// Route `m` is a rolter-sim engine; route `broken` is the garbage engine.
async function fleet(t) {
  const garbage = await startGarbageEngine(t);
  return startFleet(t, {
    engines: 1,
    config: (engines) => configFor({
      engines: [...engines, garbage],
      routes: [
        { name: 'm', targets: [{ engine: 0, model: 'up' }] },
        { name: 'broken', targets: [{ engine: 1, model: 'x' }] },
      ],
      server: { header_timeout_ms: HEADER_TIMEOUT_MS },
    }),
  });
}

async function assertStillServing(rolter) {
  const r = await chat(rolter.url, 'm', { content: 'ok?' });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.object, 'chat.completion');
}

test('a 1 GiB Content-Length gets 413 without the body being read', async (t) => {
  const { sim, rolter } = await fleet(t);
  const c = await openRaw(rolter.port);
  t.after(() => c.destroy());
  c.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
    'Content-Length: 1073741824\r\n\r\n{"model":"m"');
  // 12 of 1,073,741,824 body bytes sent: the answer cannot have waited for the body.
  const [response] = await c.waitForResponses(1, { timeoutMs: 5000 });
  assert.equal(response.status, 413);
  assert.match(response.body.toString('utf8'), /max_body_bytes/);
  c.end();
  assert.equal(await c.waitForClose({ timeoutMs: 5000 }), true, 'the connection closes after the 413');
  assert.equal((await sim.stats(0)).requests, 0);
  await assertStillServing(rolter);
});

test('a slow-loris client is cut at the header timeout while others are served', async (t) => {
  const { rolter } = await fleet(t);
  const c = await openRaw(rolter.port);
  t.after(() => c.destroy());
  let closedAt;
  c.socket.once('close', () => { closedAt = Date.now(); });
  const firstByteAt = Date.now();
  c.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n');
  const drip = setInterval(() => { if (!c.isClosed) c.write('X'); }, 100);
  t.after(() => clearInterval(drip));

  await assertStillServing(rolter);
  const deadline = 2 * HEADER_TIMEOUT_MS;
  const cut = await c.waitForClose({ timeoutMs: Math.max(0, firstByteAt + deadline - Date.now()) });
  clearInterval(drip);
  assert.ok(cut, `still open ${Date.now() - firstByteAt} ms after the first header byte (header_timeout_ms ${HEADER_TIMEOUT_MS})`);
  const elapsed = closedAt - firstByteAt;
  // The gateway's timer starts when it reads that first byte, after we wrote it.
  assert.ok(elapsed >= HEADER_TIMEOUT_MS, `cut after ${elapsed} ms, before header_timeout_ms`);
  assert.ok(elapsed <= deadline, `cut after ${elapsed} ms`);
  assert.doesNotMatch(c.text(), /HTTP\/1\.1 200/);
  await assertStillServing(rolter);
});

test('a client that sends its head within the header timeout is served', async (t) => {
  const { rolter } = await fleet(t);
  const c = await openRaw(rolter.port);
  t.after(() => c.destroy());
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'slow' }], max_tokens: 1 });
  const head = 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  // Half of the head, a pause of 40% of the timeout, the rest: slow, but within the limit.
  c.write(head.slice(0, 20));
  await sleep(HEADER_TIMEOUT_MS * 0.4);
  c.write(head.slice(20) + body);
  const [response] = await c.waitForResponses(1, { timeoutMs: 5000 });
  assert.equal(response.status, 200);
});

test('10,000-deep JSON nesting is a 400', async (t) => {
  const { sim, rolter } = await fleet(t);
  const body = '{"model":"m","messages":' + '['.repeat(10000) + ']'.repeat(10000) + '}';
  const r = await settle(await postJson(`${rolter.url}/v1/chat/completions`, body));
  assert.equal(r.status, 400, r.text);
  assert.equal(r.json.error.code, 'too_deep');
  assert.equal((await sim.stats(0)).requests, 0);
  await assertStillServing(rolter);
});

test('invalid UTF-8 in the body is a 400', async (t) => {
  const { sim, rolter } = await fleet(t);
  const body = Buffer.concat([Buffer.from('{"model":"m","messages":[{"role":"user","content":"'),
    Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')]);
  const r = await settle(await postJson(`${rolter.url}/v1/chat/completions`, body));
  assert.equal(r.status, 400, r.text);
  assert.equal(r.json.error.code, 'invalid_utf8');
  assert.equal((await sim.stats(0)).requests, 0);
  await assertStillServing(rolter);
});

test('a garbage upstream response is a 502 naming the target', async (t) => {
  const { rolter } = await fleet(t);
  const r = await chat(rolter.url, 'broken', { content: 'x' });
  assert.equal(r.status, 502, r.text);
  assert.match(r.json.error.message, /garbage\/x: response: /);
  assert.doesNotMatch(r.json.error.message, /http:|127\.0\.0\.1/);
  await assertStillServing(rolter);
});

test('an unknown endpoint is 404 and a wrong method 405, in the OpenAI shape', async (t) => {
  const { rolter } = await fleet(t);
  const missing = await settle(await fetchWithin(`${rolter.url}/v1/nothing`));
  assert.equal(missing.status, 404);
  assert.equal(typeof missing.json.error.message, 'string');
  assert.ok(missing.json.error.message.length > 0);
  const wrong = await settle(await fetchWithin(`${rolter.url}/v1/chat/completions`));
  assert.equal(wrong.status, 405);
  assert.equal(typeof wrong.json.error.message, 'string');
  assert.ok(wrong.json.error.message.length > 0);
});
