// TLS on the main listener ([tls] cert and key): real HTTPS clients against a rolter that
// terminates TLS in front of its ordinary sessions. A throwaway CA and a server certificate for
// 127.0.0.1 are made with the openssl CLI once for the file; each test starts its own rolter (and
// rolter-sim or echo upstream), so no test depends on another.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { startFleet, startRolter, configFor, binDir } from '../lib/rolter.mjs';
import { waitUntil, withDeadline } from '../lib/http.mjs';
import { startEchoUpstream } from '../lib/echo_upstream.mjs';

const UPSTREAM = 'Qwen/Qwen3-8B';
const kDeadlineMs = 10000;

let dir;
let ca;  // the CA certificate, PEM: what clients trust
let files;  // { cert, key, otherKey }

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rolter-tls-'));
  const at = (name) => path.join(dir, name);
  const openssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2',
    '-subj', '/CN=rolter test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(at('server.ext'), [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature',
    'extendedKeyUsage=serverAuth',
    'subjectAltName=IP:127.0.0.1',
  ].join('\n'));
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
    '-out', 'server.pem', '-days', '2', '-extfile', 'server.ext');
  openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'other.key');
  ca = readFileSync(at('ca.pem'));
  files = { cert: at('server.pem'), key: at('server.key'), otherKey: at('other.key'), ca: at('ca.pem') };
});

after(() => rmSync(dir, { recursive: true, force: true }));

const tlsTable = (cert = files.cert, key = files.key) =>
  `\n[tls]\ncert = ${JSON.stringify(cert)}\nkey = ${JSON.stringify(key)}\n`;

function simConfig(engines) {
  return configFor({
    engines,
    routes: [{ name: 'qwen3', targets: [{ engine: 0, model: UPSTREAM }] }],
    extra: tlsTable(),
  });
}

// One rolter-sim engine (5 ms to the first token, 2 ms per token) behind a TLS rolter.
function fleet(t) {
  return startFleet(t, { engines: 1, simArgs: ['--ttft-ms', '5', '--token-ms', '2'], config: simConfig });
}

// One HTTPS request, read whole. Resolves with { status, headers, body, reused } or rejects with
// the client's error (a refused certificate, a reset).
// A request without `agent` has a connection of its own. `servername`: the name the certificate
// must match (default: the URL's host).
function request(url, { method = 'GET', body, agent, trust = true, headers = {}, servername } = {}) {
  return withDeadline(new Promise((resolve, reject) => {
    const req = https.request(url, {
      method,
      agent: agent ?? false,
      servername,
      ca: trust && !agent ? ca : undefined,
      headers: body ? { 'content-type': 'application/json', ...headers } : headers,
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString(), reused: req.reusedSocket,
      }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  }), kDeadlineMs, `${method} ${url}`);
}

const chatBody = (extra = {}) => ({ model: 'qwen3', messages: [{ role: 'user', content: 'hello' }], max_tokens: 3, ...extra });

const dataEvents = (text) => text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));

test('rolter says https in its listening line and answers a chat over TLS', async (t) => {
  const { rolter } = await fleet(t);
  assert.match(rolter.url, /^https:\/\//);
  const r = await request(`${rolter.url}/v1/chat/completions`, { method: 'POST', body: chatBody() });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.headers['x-rolter-target'], `engine-0/${UPSTREAM}`);
  assert.equal(JSON.parse(r.body).usage.completion_tokens, 3);
});

test('a streamed chat arrives as SSE events, event by event', async (t) => {
  const { rolter } = await fleet(t);
  const events = [];
  let firstEventAt;
  let endAt;
  await withDeadline(new Promise((resolve, reject) => {
    const req = https.request(`${rolter.url}/v1/chat/completions`, {
      method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json' },
    }, (res) => {
      assert.equal(res.statusCode, 200);
      assert.match(res.headers['content-type'], /text\/event-stream/);
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        firstEventAt ??= Date.now();
        text += chunk;
      });
      res.on('end', () => {
        endAt = Date.now();
        events.push(...dataEvents(text));
        resolve();
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(chatBody({ stream: true, max_tokens: 100 })));
  }), kDeadlineMs, 'the stream');
  assert.equal(events.at(-1), '[DONE]');
  const content = events.slice(0, -1).map((e) => JSON.parse(e))
    .flatMap((c) => c.choices ?? []).map((c) => c.delta?.content ?? '').join('');
  assert.ok(content.length > 0);
  // 100 tokens at 2 ms each: a relay that buffered the stream would deliver it all at the end.
  assert.ok(endAt - firstEventAt >= 100, `first event ${endAt - firstEventAt} ms before the end`);
});

test('one TLS connection carries several keep-alive requests', async (t) => {
  const { rolter } = await fleet(t);
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca });
  t.after(() => agent.destroy());
  const sockets = new Set();
  let handshakes = 0;
  for (let i = 0; i < 4; i++) {
    const r = await new Promise((resolve, reject) => {
      const req = https.request(`${rolter.url}/v1/chat/completions`, {
        method: 'POST', agent, headers: { 'content-type': 'application/json' },
      }, (res) => {
        let body = '';
        res.on('data', (c) => { body += c; });
        res.on('end', () => resolve({ status: res.statusCode, body, reused: req.reusedSocket }));
      });
      req.on('socket', (s) => {
        if (!sockets.has(s)) s.once('secureConnect', () => { handshakes += 1; });
        sockets.add(s);
      });
      req.on('error', reject);
      req.end(JSON.stringify(chatBody()));
    });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.reused, i > 0, `request ${i} reused the connection`);
  }
  assert.equal(sockets.size, 1);
  assert.equal(handshakes, 1);
});

test('plain HTTP to the TLS port gets no answer, and a failed handshake is counted', async (t) => {
  const { rolter } = await fleet(t);
  const outcome = await withDeadline(new Promise((resolve) => {
    const req = http.request(`http://127.0.0.1:${rolter.port}/v1/models`, (res) => resolve(`status ${res.statusCode}`));
    req.on('error', (err) => resolve(`error ${err.code}`));
    req.end();
  }), kDeadlineMs, 'the plaintext request');
  assert.match(outcome, /^error /, outcome);
  // A client hello that is not one: garbage bytes.
  await withDeadline(new Promise((resolve) => {
    const socket = net.connect(rolter.port, '127.0.0.1', () => socket.write(Buffer.alloc(64, 0x5a)));
    socket.on('data', () => {});
    socket.on('error', resolve);
    socket.on('close', resolve);
  }), kDeadlineMs, 'rolter to close a garbage handshake');
  const metrics = await request(`${rolter.url}/metrics`);
  assert.equal(metrics.status, 200);
  const line = metrics.body.split('\n').find((l) => l.startsWith('rolter_tls_handshake_failures_total{reason="error"}'));
  assert.ok(line, metrics.body);
  assert.equal(Number(line.split(' ').pop()), 2, line);
  // The gateway still serves TLS clients.
  assert.equal((await request(`${rolter.url}/v1/models`)).status, 200);
});

test('a client that does not trust the certificate refuses the connection', async (t) => {
  const { rolter } = await fleet(t);
  await assert.rejects(request(`${rolter.url}/v1/models`, { trust: false }),
    (err) => /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT/.test(err.code) || assert.fail(err.code));
  // Nor does one that expects another name: the certificate is for 127.0.0.1 alone.
  await assert.rejects(request(`${rolter.url}/v1/models`, { servername: 'localhost' }),
    (err) => err.code === 'ERR_TLS_CERT_ALTNAME_INVALID' || assert.fail(`${err.code}: ${err.message}`));
});

test('a client that disconnects mid-stream is logged as 499 and cancels the upstream request', async (t) => {
  const { sim, rolter } = await fleet(t);
  const logFrom = rolter.log.text.length;
  await withDeadline(new Promise((resolve, reject) => {
    const req = https.request(`${rolter.url}/v1/chat/completions`, {
      method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json' },
    }, (res) => {
      assert.equal(res.statusCode, 200);
      res.once('data', () => {
        req.destroy(); // the stream is flowing: leave
        resolve();
      });
    });
    req.on('error', (err) => (err.code === 'ECONNRESET' ? undefined : reject(err)));
    req.end(JSON.stringify(chatBody({ stream: true, max_tokens: 5000 })));
  }), kDeadlineMs, 'the first streamed bytes');
  await rolter.log.waitFor(/"event":"request"[^\n]*"status":499/, { from: logFrom, timeoutMs: 5000 });
  const stats = await waitUntil(async () => {
    const s = await sim.stats(0);
    return s.cancelled >= 1 ? s : null;
  }, { timeoutMs: 5000, what: 'the engine to see the request cancelled' });
  assert.equal(stats.completed, 0, JSON.stringify(stats));
});

test('a client that half-closes after its request gets the answer, then the connection ends', async (t) => {
  const { rolter } = await fleet(t);
  const body = JSON.stringify(chatBody());
  const received = await withDeadline(new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port: rolter.port, ca, allowHalfOpen: true }, () => {
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      socket.end(); // close_notify: nothing more will come from this client
    });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => { text += chunk; });
    socket.on('end', () => resolve(text)); // rolter closed its side once it had answered
    socket.on('error', reject);
  }), 5000, 'the answer and the end of the connection');
  assert.match(received, /^HTTP\/1\.1 200 /);
  assert.match(received, /"chat\.completion"/);
});

test('the upstream sees X-Forwarded-Proto: https and the client address', async (t) => {
  const up = await startEchoUpstream();
  t.after(() => up.close());
  const rolter = await startRolter({
    config: configFor({ engines: [up], routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }] }], extra: tlsTable() }),
  });
  t.after(() => rolter.stop());
  const r = await request(`${rolter.url}/v1/chat/completions`, {
    method: 'POST', body: { model: 'm', messages: [{ role: 'user', content: 'x' }] },
    headers: { 'x-forwarded-proto': 'http' },  // not a trusted proxy: replaced
  });
  assert.equal(r.status, 200, r.body);
  const [record] = await up.waitForRequests(1);
  assert.deepEqual(record.headerValues('x-forwarded-proto'), ['https']);
  assert.deepEqual(record.headerValues('x-forwarded-for'), ['127.0.0.1']);
});

test('the openai client works against the https URL when it trusts the CA', async (t) => {
  const { rolter } = await fleet(t);
  const agent = new https.Agent({ keepAlive: true, ca });
  t.after(() => agent.destroy());
  const client = new OpenAI({ apiKey: 'unused', baseURL: `${rolter.url}/v1`, httpAgent: agent, maxRetries: 0, timeout: kDeadlineMs });
  const completion = await client.chat.completions.create(chatBody());
  assert.equal(completion.model, UPSTREAM);
  const stream = await client.chat.completions.create(chatBody({ stream: true }));
  let chunks = 0;
  for await (const chunk of stream) {
    assert.equal(chunk.model, UPSTREAM);
    chunks += 1;
  }
  assert.ok(chunks > 1, `${chunks} chunks`);
});

// `rolter check` on a config next to the certificate files; resolves with { code, stdout, stderr }.
function check(config) {
  const file = path.join(dir, `check-${Math.random().toString(36).slice(2)}.toml`);
  writeFileSync(file, config);
  return new Promise((resolve) => {
    execFile(path.join(binDir, 'rolter'), ['check', '--config', file], { timeout: kDeadlineMs },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
  });
}

test('rolter check refuses a [tls] it cannot use, naming the key or the file', async () => {
  const base = configFor({ engines: [{ url: 'http://127.0.0.1:9' }], routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }] }] });
  const ok = await check(base + tlsTable());
  assert.equal(ok.code, 0, ok.stderr);
  // Relative paths are read beside the config file.
  const relative = await check(base + tlsTable('server.pem', 'server.key'));
  assert.equal(relative.code, 0, relative.stderr);

  const onlyCert = await check(`${base}\n[tls]\ncert = ${JSON.stringify(files.cert)}\n`);
  assert.equal(onlyCert.code, 1);
  assert.match(onlyCert.stderr, /tls\.key: set both tls\.cert and tls\.key/);

  const missing = path.join(dir, 'nowhere.pem');
  const missingFile = await check(base + tlsTable(missing));
  assert.equal(missingFile.code, 1);
  assert.ok(missingFile.stderr.includes(`tls.cert: cannot read "${missing}": No such file or directory`), missingFile.stderr);

  const mismatched = await check(base + tlsTable(files.cert, files.otherKey));
  assert.equal(mismatched.code, 1);
  assert.match(mismatched.stderr, /private key file "[^"]*other\.key": does not match the certificate/);
});

test('a control plane and a gateway over TLS: the node verifies the control plane and serves HTTPS', async (t) => {
  const { startControlPlane, startGateway, adminClient, tempDir } = await import('../lib/cluster.mjs');
  const { startSim } = await import('../lib/sim.mjs');
  const sim = await startSim({ engines: 1, args: ['--time-scale', '0'] });
  t.after(() => sim.stop());
  const env = { ROLTER_ADMIN_TOKEN: 'tls-admin-token', ROLTER_NODE_TOKEN: 'tls-node-token' };
  const stateDir = tempDir();
  const cp = await startControlPlane({
    store: `sqlite:${path.join(stateDir, 'cp.db')}`, env,
    args: ['--tls-cert', files.cert, '--tls-key', files.key],
  });
  t.after(() => cp.stop());
  assert.match(cp.url, /^https:/);
  // The admin API answers over TLS only to a client that trusts the CA.
  const agent = new https.Agent({ ca });
  const post = (route, body) => new Promise((resolve, reject) => {
    const req = https.request(`${cp.url}/api/v1${route}`, {
      method: 'POST', agent, timeout: kDeadlineMs,
      headers: { authorization: 'Bearer tls-admin-token', 'content-type': 'application/json' },
    }, (res) => { let text = ''; res.on('data', (c) => { text += c; }); res.on('end', () => resolve({ status: res.statusCode, text })); });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  assert.equal((await post('/providers', { name: 'engine-0', base_url: sim.engines[0].url })).status, 201);
  assert.equal((await post('/routes', { name: 'qwen3', targets: [{ provider: 'engine-0', model: UPSTREAM }] })).status, 201);

  // A node that does not trust the control plane's certificate gets nothing from it.
  const untrusting = await startGateway({
    controlPlane: cp.url, nodeId: 'no-ca', env, startTimeoutMs: 3000,
  }).then(() => null, (err) => err);
  assert.ok(untrusting instanceof Error, 'a node without the CA must not start serving');
  assert.match(untrusting.message, /certificate verify failed|verify/i);

  // With the CA (OpenSSL's SSL_CERT_FILE) it follows, and serves HTTPS itself.
  const gw = await startGateway({
    controlPlane: cp.url, nodeId: 'tls-node', stateDir, env: { ...env, SSL_CERT_FILE: files.ca },
    args: ['--tls-cert', files.cert, '--tls-key', files.key],
  });
  t.after(() => gw.stop());
  assert.match(gw.url, /^https:/);
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', httpAgent: agent, maxRetries: 0 });
  const answer = await client.chat.completions.create({ model: 'qwen3', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
  assert.equal(answer.object, 'chat.completion');
  const plain = await fetch(gw.url.replace('https:', 'http:') + '/healthz', { signal: AbortSignal.timeout(kDeadlineMs) })
    .then((r) => r.status, () => 'refused');
  assert.notEqual(plain, 200, 'plain HTTP is not served on the TLS port');
});
