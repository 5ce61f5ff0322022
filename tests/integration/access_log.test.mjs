// The access log (SPEC §17): one JSON object per line per request, written to server.access_log
// ("stderr", "off" or a file that SIGUSR1 reopens). Asserted from what the gateway wrote: the
// fields of each kind of request, no line lost or torn while the file is rotated under load, and
// where the lines go for each destination, a reload and --no-access-log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { binDir, configFor, startFleet } from '../lib/rolter.mjs';
import { postJson, settle, sleep, waitUntil, withDeadline } from '../lib/http.mjs';

// ---- Helpers --------------------------------------------------------------------------------------

// A fresh directory for the test's log files, removed when it ends.
function logDir(t) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-access-log-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// Every line of every file in `dir`, parsed; a line that is not JSON fails the test, naming it.
function linesIn(dir) {
  const lines = [];
  for (const name of readdirSync(dir).sort()) {
    const text = readFileSync(path.join(dir, name), 'utf8');
    assert.ok(text === '' || text.endsWith('\n'), `${name} ends with a whole line`);
    for (const line of text.split('\n').slice(0, -1)) {
      try {
        lines.push(JSON.parse(line));
      } catch {
        assert.fail(`${name}: not a JSON line (torn?): ${line}`);
      }
    }
  }
  return lines;
}

// The request lines rolter wrote on stderr.
const stderrRequestLines = (rolter) =>
  rolter.log.text.split('\n').filter((l) => l.includes('"event":"request"'));

const chatBody = (model, { stream = false, content = 'hello' } = {}) => JSON.stringify({
  model,
  messages: [{ role: 'user', content }],
  max_tokens: 3,
  ...(stream ? { stream: true } : {}),
});

// POSTs a chat body as it is (so its size is known) and reads the answer whole.
async function ask(rolter, body, { key, query = '' } = {}) {
  const res = await postJson(`${rolter.url}/v1/chat/completions${query}`, body, {
    headers: key ? { authorization: `Bearer ${key}` } : {},
  });
  const answer = await settle(res);
  return { ...answer, bytes: Buffer.byteLength(answer.text) };
}

// SIGTERM, and the exit within a deadline: every line of the requests answered is written by then.
async function stopGracefully(rolter) {
  rolter.signal('SIGTERM');
  const { code } = await rolter.waitForExit({ timeoutMs: 15000 });
  assert.equal(code, 0, rolter.log.text);
}

async function closedPort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function rolterCheck(config) {
  return new Promise((resolve) => {
    execFile(path.join(binDir, 'rolter'), ['check', '--config', config], { timeout: 10000 },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
  });
}

// ---- 1. Rotation under load ---------------------------------------------------------------------

test('no line lost or torn while the file is renamed and SIGUSR1 sent every 50 ms under load', { timeout: 120000 }, async (t) => {
  const dir = logDir(t);
  const file = path.join(dir, 'access.log');
  const { rolter } = await startFleet(t, {
    engines: 2,
    config: (engines) => configFor({
      engines,
      routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }, { engine: 1, model: 'up' }] }],
      server: { access_log: file },
    }),
  });
  const total = 2400;
  const concurrency = 24;
  let sent = 0;
  let streams = 0;
  let loadDone = false;

  const load = (async () => {
    try {
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (sent < total) {
          const stream = sent % 3 === 0;
          sent += 1;
          if (stream) streams += 1;
          const r = await ask(rolter, chatBody('m', { stream }));
          assert.equal(r.status, 200, r.text);
        }
      }));
    } finally {
      loadDone = true;
    }
  })();

  // Rename, signal, and wait for rolter to open the new file before the next rename: a SIGUSR1
  // that rolter ignored fails here, at the deadline.
  let rotations = 0;
  const rotate = (async () => {
    while (!loadDone) {
      await waitUntil(() => existsSync(file), { timeoutMs: 5000, intervalMs: 2, what: `rolter to reopen ${file} after SIGUSR1 #${rotations}` });
      rotations += 1;
      renameSync(file, `${file}.${rotations}`);
      rolter.signal('SIGUSR1');
      await sleep(50);
    }
  })();
  await withDeadline(Promise.all([load, rotate]), 90000, 'the load and the rotations');
  await stopGracefully(rolter);

  const lines = linesIn(dir);
  t.diagnostic(`${total} requests (${streams} streamed), ${rotations} rotations, ${readdirSync(dir).length} files`);
  assert.equal(lines.length, total, `one line per request across ${rotations} rotations`);
  assert.ok(lines.every((l) => l.event === 'request' && l.status === 200 && l.route === 'm'));
  assert.equal(lines.filter((l) => l.stream === true).length, streams);
  assert.ok(rotations >= 5, `${rotations} rotations`);
  const filesWithLines = readdirSync(dir).filter((n) => readFileSync(path.join(dir, n), 'utf8').length > 0);
  assert.ok(filesWithLines.length >= 5, `lines reached the reopened files: ${filesWithLines.join(', ')}`);
  assert.deepEqual(stderrRequestLines(rolter), [], 'no request line on stderr');
  assert.match(rolter.log.text, /SIGUSR1: access log .* reopened/);
});

// ---- 2. The fields of each kind of request --------------------------------------------------------

test('the fields of a plain, a streamed, a retried, a rate-limited and an odd request', { timeout: 60000 }, async (t) => {
  const dir = logDir(t);
  const file = path.join(dir, 'access.log');
  const dead = `http://127.0.0.1:${await closedPort()}`;
  const { sim, rolter } = await startFleet(t, {
    engines: 2,
    config: (engines) => configFor({
      engines: [...engines, { url: dead, name: 'dead' }],
      routes: [
        { name: 'plain', targets: [{ engine: 0, model: 'up' }] },
        // round_robin's first request starts at the first target: dead, then the 503, then engine 0.
        { name: 'retry', targets: [{ engine: 2, model: 'up' }, { engine: 1, model: 'up' }, { engine: 0, model: 'up' }] },
      ],
      server: { access_log: file },
      retry: { max_attempts: 3 },
      keys: [
        { name: 'open', key_env: 'K_OPEN' },
        { name: 'tight', key_env: 'K_TIGHT', rpm: 1, burst: 1 },
      ],
    }),
    env: { K_OPEN: 'sk-open-secret', K_TIGHT: 'sk-tight-secret' },
  });
  await sim.setFault(1, { error_rate: 1, error_status: 503 });
  const [engine0, engine1] = sim.engines.map((e) => e.url);

  const plainBody = chatBody('plain');
  const plain = await ask(rolter, plainBody, { key: 'sk-open-secret', query: '?api_key=query-secret' });
  assert.equal(plain.status, 200, plain.text);
  const streamBody = chatBody('plain', { stream: true });
  const streamed = await ask(rolter, streamBody, { key: 'sk-open-secret' });
  assert.equal(streamed.status, 200, streamed.text);
  const retried = await ask(rolter, chatBody('retry'), { key: 'sk-open-secret' });
  assert.equal(retried.status, 200, retried.text);
  assert.equal(retried.attempts, 3);
  const first = await ask(rolter, chatBody('plain'), { key: 'sk-tight-secret' });
  assert.equal(first.status, 200, first.text);
  const refused = await ask(rolter, chatBody('plain'), { key: 'sk-tight-secret' });
  assert.equal(refused.status, 429, refused.text);
  const oddModel = 'engine-0/odd "model"\n{"event":"forged"} \u0001 é';
  const odd = await ask(rolter, chatBody(oddModel), { key: 'sk-open-secret' });

  await stopGracefully(rolter);
  const text = readFileSync(file, 'utf8');
  for (const secret of ['sk-open-secret', 'sk-tight-secret', 'query-secret', 'hello']) {
    assert.ok(!text.includes(secret), `${secret} is never logged`);
  }
  const lines = linesIn(dir);
  assert.equal(lines.length, 6, text);
  // Found by what they are: two requests answered on two connections may be logged in any order.
  const one = (what, match) => {
    const found = lines.filter(match);
    assert.equal(found.length, 1, `one line for ${what}:\n${text}`);
    return found[0];
  };
  const plainLine = one('the plain request', (l) => l.key === 'open' && l.model === 'plain' && !l.stream);
  const streamLine = one('the stream', (l) => l.stream);
  const retryLine = one('the retried request', (l) => l.route === 'retry');
  const firstLine = one("the tight key's first request", (l) => l.key === 'tight' && l.status === 200);
  const refusedLine = one('the refused request', (l) => l.status === 429);
  const oddLine = one('the odd model', (l) => l.model === oddModel);

  const common = { event: 'request', level: 'info', client: '127.0.0.1', method: 'POST', path: '/v1/chat/completions' };
  assert.deepEqual(
    pick(plainLine, [...Object.keys(common), 'model', 'stream', 'key', 'route', 'target', 'endpoint', 'attempts', 'status', 'upstream_status', 'bytes_in', 'bytes_out']),
    { ...common, model: 'plain', stream: false, key: 'open', route: 'plain', target: 'engine-0/up', endpoint: engine0, attempts: 1, status: 200, upstream_status: 200, bytes_in: Buffer.byteLength(plainBody), bytes_out: plain.bytes });
  assert.equal(plainLine.tries.length, 1);
  assert.deepEqual(pick(plainLine.tries[0], ['endpoint', 'status', 'reason']), { endpoint: engine0, status: 200 });
  assert.ok(plainLine.duration_ms >= plainLine.ttft_ms && plainLine.ttft_ms >= 0, JSON.stringify(plainLine));
  assert.ok(plainLine.tokens_in > 0 && plainLine.tokens_out > 0, JSON.stringify(plainLine));
  assert.equal(plainLine.ts_ms > 0, true);

  assert.deepEqual(
    pick(streamLine, ['stream', 'target', 'endpoint', 'attempts', 'status', 'bytes_in', 'bytes_out']),
    { stream: true, target: 'engine-0/up', endpoint: engine0, attempts: 1, status: 200, bytes_in: Buffer.byteLength(streamBody), bytes_out: streamed.bytes });
  assert.ok(streamLine.ttft_ms <= streamLine.duration_ms, JSON.stringify(streamLine));

  assert.deepEqual(
    pick(retryLine, ['route', 'target', 'endpoint', 'attempts', 'status', 'upstream_status']),
    { route: 'retry', target: 'engine-0/up', endpoint: engine0, attempts: 3, status: 200, upstream_status: 200 });
  assert.deepEqual(retryLine.tries.map((a) => pick(a, ['endpoint', 'status', 'reason'])), [
    { endpoint: dead, reason: 'connect_refused' },
    { endpoint: engine1, status: 503, reason: 'status_503' },
    { endpoint: engine0, status: 200 },
  ]);
  assert.ok(retryLine.tries.every((a) => a.ms >= 0));

  assert.equal(firstLine.key, 'tight');
  assert.equal(firstLine.status, 200);
  assert.deepEqual(
    pick(refusedLine, ['key', 'route', 'target', 'attempts', 'status', 'limited', 'tries', 'endpoint', 'bytes_out']),
    { key: 'tight', route: 'plain', target: 'none', attempts: 0, status: 429, limited: 'rate_limit', bytes_out: refused.bytes });

  // The odd model name was escaped: it reads back as it was, and its line is one line.
  assert.equal(oddLine.status, odd.status);
  assert.equal(oddLine.route, 'engine-0');
  assert.equal(oddLine.target, 'engine-0/*');
});

test('requests the gateway refuses itself, before any route: one line each, with the id their answer carried', { timeout: 60000 }, async (t) => {
  const dir = logDir(t);
  const file = path.join(dir, 'access.log');
  const { rolter } = await startFleet(t, {
    engines: 1,
    config: (engines) => configFor({
      engines,
      routes: [{ name: 'plain', targets: [{ engine: 0, model: 'up' }] }],
      server: { access_log: file, max_body_bytes: 1024 },
      keys: [{ name: 'open', key_env: 'K_OPEN' }],
    }),
    env: { K_OPEN: 'sk-open-secret' },
  });
  const key = 'sk-open-secret';
  const asked = {
    noKey: await ask(rolter, chatBody('plain')),
    badJson: await ask(rolter, '{"model":"plain","messages":[', { key }),
    unknownModel: await ask(rolter, chatBody('nowhere'), { key }),
    tooLarge: await ask(rolter, chatBody('plain', { content: 'x'.repeat(2000) }), { key }),
  };
  const wrongPath = await settle(await postJson(`${rolter.url}/v1/nowhere`, chatBody('plain'), {
    headers: { authorization: `Bearer ${key}` },
  }));
  // A head too large to take: its request line is logged as read. A head that is not HTTP: no
  // method or path to log, the status and the id still are.
  const tooBig = await rawExchange(rolter.port,
    `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70 * 1024)}\r\n\r\n`);
  const unread = await rawExchange(rolter.port, 'HELLO\x01 there\r\n\r\n');
  // A head HTTP/1.1 forbids (two Host fields: RFC 9112 §3.2), and a chunked body that outgrows
  // the limit once its key was accepted.
  const auth = `Authorization: Bearer ${key}\r\n`;
  const unframed = await rawExchange(rolter.port,
    `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nHost: y\r\n${auth}Content-Length: 2\r\n` +
    '\r\n{}');
  const chunk = 'y'.repeat(1500);
  const overgrown = await rawExchange(rolter.port,
    `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\n` +
    `Transfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`);
  const expected = {
    noKey: 401, badJson: 400, unknownModel: 404, tooLarge: 413,
  };
  for (const [what, status] of Object.entries(expected)) {
    assert.equal(asked[what].status, status, `${what}: ${asked[what].text}`);
  }
  assert.equal(wrongPath.status, 404, wrongPath.text);
  assert.match(tooBig.head, /^HTTP\/1\.1 431 /);
  assert.match(unread.head, /^HTTP\/1\.1 400 /);
  assert.match(unframed.head, /^HTTP\/1\.1 400 /);
  assert.match(overgrown.head, /^HTTP\/1\.1 413 /);

  await stopGracefully(rolter);
  const text = readFileSync(file, 'utf8');
  assert.ok(!text.includes(key), 'the key is never logged');
  const lines = linesIn(dir);
  assert.equal(lines.length, 9, text);
  const byId = (answer) => {
    const id = answer.headers.get('x-request-id');
    const found = lines.filter((l) => l.request_id === id);
    assert.equal(found.length, 1, `one line for request ${id}:\n${text}`);
    return found[0];
  };
  const common = { event: 'request', client: '127.0.0.1', method: 'POST', path: '/v1/chat/completions', route: '', target: 'none', attempts: 0 };
  const fields = [...Object.keys(common), 'status', 'key', 'model', 'bytes_out'];
  assert.deepEqual(pick(byId(asked.noKey), fields),
    { ...common, status: 401, bytes_out: asked.noKey.bytes });
  assert.deepEqual(pick(byId(asked.badJson), fields),
    { ...common, status: 400, key: 'open', bytes_out: asked.badJson.bytes });
  assert.deepEqual(pick(byId(asked.unknownModel), fields),
    { ...common, status: 404, key: 'open', model: 'nowhere', bytes_out: asked.unknownModel.bytes });
  // Its Content-Length alone refused it, with the head, before the key was looked at.
  assert.deepEqual(pick(byId(asked.tooLarge), fields),
    { ...common, status: 413, bytes_out: asked.tooLarge.bytes });
  assert.deepEqual(pick(byId(wrongPath), ['path', 'status', 'target']),
    { path: '/v1/nowhere', status: 404, target: 'none' });
  const rawLine = (answer) => {
    const found = lines.find((l) => l.request_id === answer.requestId);
    assert.ok(found, `a line for request ${answer.requestId}:\n${text}`);
    return found;
  };
  assert.deepEqual(pick(rawLine(tooBig), ['method', 'path', 'status', 'target', 'client']),
    { method: 'GET', path: '/v1/models', status: 431, target: 'none', client: '127.0.0.1' });
  assert.deepEqual(pick(rawLine(unframed), ['method', 'path', 'status', 'target', 'key']),
    { method: 'POST', path: '/v1/chat/completions', status: 400, target: 'none' });
  assert.deepEqual(pick(rawLine(overgrown), ['method', 'path', 'status', 'target', 'key']),
    { method: 'POST', path: '/v1/chat/completions', status: 413, target: 'none', key: 'open' });
  const unreadLine = rawLine(unread);
  assert.deepEqual(pick(unreadLine, ['status', 'target', 'client']), { status: 400, target: 'none', client: '127.0.0.1' });
  assert.ok(!('method' in unreadLine) && !('path' in unreadLine), JSON.stringify(unreadLine));
  for (const line of lines) assert.ok(line.duration_ms >= 0, JSON.stringify(line));
});

// Sends `request` as it is on a new connection and reads until the gateway closes it (within 10 s).
function rawExchange(port, request) {
  return withDeadline(new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const answer = Buffer.concat(chunks).toString('latin1');
      const head = answer.slice(0, answer.indexOf('\r\n\r\n'));
      resolve({ head, requestId: /\r\nx-request-id: *([^\r]*)/i.exec(head)?.[1] });
    });
    socket.write(request);
  }), 10000, 'the raw exchange');
}

const pick = (object, keys) => Object.fromEntries(keys.filter((k) => k in object).map((k) => [k, object[k]]));

// ---- 3. Destinations -----------------------------------------------------------------------------

const oneRoute = (engines, server = {}) => configFor({
  engines, routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }] }], server,
});

test('"stderr" (the default) writes the lines to stderr', async (t) => {
  const { rolter } = await startFleet(t, { config: (engines) => oneRoute(engines) });
  assert.equal((await ask(rolter, chatBody('m'))).status, 200);
  await stopGracefully(rolter);
  const lines = stderrRequestLines(rolter).map((l) => JSON.parse(l));
  assert.equal(lines.length, 1);
  assert.equal(lines[0].route, 'm');
});

test('"off" writes nothing, and --no-access-log overrides a file', async (t) => {
  const { rolter: off } = await startFleet(t, { config: (engines) => oneRoute(engines, { access_log: 'off' }) });
  assert.equal((await ask(off, chatBody('m'))).status, 200);
  await stopGracefully(off);
  assert.deepEqual(stderrRequestLines(off), []);

  const dir = logDir(t);
  const file = path.join(dir, 'access.log');
  const { rolter: flagged } = await startFleet(t, {
    config: (engines) => oneRoute(engines, { access_log: file }),
    args: ['--no-access-log'],
  });
  assert.equal((await ask(flagged, chatBody('m'))).status, 200);
  await stopGracefully(flagged);
  assert.deepEqual(stderrRequestLines(flagged), []);
  assert.ok(!existsSync(file) || readFileSync(file, 'utf8') === '', 'the file stays empty');
});

test('a reload moves the lines from stderr to a file, and back', { timeout: 60000 }, async (t) => {
  const dir = logDir(t);
  const file = path.join(dir, 'access.log');
  let engines;
  const { rolter } = await startFleet(t, { config: (e) => { engines = e; return oneRoute(e); } });
  assert.equal((await ask(rolter, chatBody('m'))).status, 200);

  let mark = rolter.log.text.length;
  rolter.writeConfig(oneRoute(engines, { access_log: file }));
  rolter.signal('SIGHUP');
  await rolter.log.waitFor(new RegExp(`access log: ${file} \\(was stderr\\)`), { from: mark });
  assert.equal((await ask(rolter, chatBody('m'))).status, 200);
  await waitUntil(() => existsSync(file) && readFileSync(file, 'utf8').split('\n').length === 2,
    { what: 'the line in the file' });

  mark = rolter.log.text.length;
  rolter.writeConfig(oneRoute(engines));
  rolter.signal('SIGHUP');
  await rolter.log.waitFor(new RegExp(`access log: stderr \\(was ${file}\\)`), { from: mark });
  assert.equal((await ask(rolter, chatBody('m'))).status, 200);
  await stopGracefully(rolter);
  assert.equal(stderrRequestLines(rolter).length, 2, 'before and after the file');
  assert.equal(linesIn(dir).length, 1);
});

test('rolter check and a reload name server.access_log when the file cannot be written', async (t) => {
  const dir = logDir(t);
  let engines;
  const { rolter } = await startFleet(t, { config: (e) => { engines = e; return oneRoute(e); } });
  const checked = await rolterCheck(rolter.configPath);
  assert.equal(checked.code, 0, checked.stderr);

  rolter.writeConfig(oneRoute(engines, { access_log: dir }));
  const refused = await rolterCheck(rolter.configPath);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /server\.access_log: ".*" is a directory, not a file/);

  // A reload applies the rest of the config and keeps the lines where they went.
  const mark = rolter.log.text.length;
  rolter.signal('SIGHUP');
  await rolter.log.waitFor(/server\.access_log: cannot open .* Is a directory; access lines still go to stderr/, { from: mark });
  assert.equal((await ask(rolter, chatBody('m'))).status, 200);
  await stopGracefully(rolter);
  assert.equal(stderrRequestLines(rolter).length, 1);
});
