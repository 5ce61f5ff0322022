// Failure paths of the attempt loop (SPEC §8, README "Reliability and access"), asserted from
// what happened rather than from status codes alone: x-rolter-attempts, each engine's own request
// counters, arrival times at the engines, /metrics and the request log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { startSim } from '../lib/sim.mjs';
import { startRolter } from '../lib/rolter.mjs';
import { startEchoUpstream } from '../lib/echo_upstream.mjs';
import { startRawUpstream, response, chunk, openRaw, rawPost, parseResponses } from '../lib/raw_upstream.mjs';

// ---------------------------------------------------------------------------------------------
// Helpers.

const chatBody = (content = 'hello', extra = {}) =>
  JSON.stringify({ model: 'm', messages: [{ role: 'user', content }], max_tokens: 2, ...extra });

async function ask(url, body = chatBody(), { path = '/v1/chat/completions', headers = {} } = {}) {
  const t0 = Date.now();
  const res = await fetch(`${url}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body,
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    attempts: res.headers.get('x-rolter-attempts'),
    target: res.headers.get('x-rolter-target'),
    text,
    ms: Date.now() - t0,
  };
}

// A rolter.toml over upstream URLs: provider "engine-i" per URL, one route "m" over all of them.
function configOver(urls, { strategy = 'round_robin', server = {}, retry = {}, extra = '' } = {}) {
  const serverKeys = { first_byte_timeout_ms: 10000, ...server };
  let toml = '[server]\nlisten = "127.0.0.1:0"\n';
  for (const [k, v] of Object.entries(serverKeys)) toml += `${k} = ${v}\n`;
  toml += '\n';
  if (Object.keys(retry).length) {
    toml += '[retry]\n';
    for (const [k, v] of Object.entries(retry)) toml += `${k} = ${JSON.stringify(v)}\n`;
    toml += '\n';
  }
  urls.forEach((url, i) => { toml += `[[providers]]\nname = "engine-${i}"\nbase_url = "${url}"\n\n`; });
  toml += `[[routes]]\nname = "m"\nstrategy = "${strategy}"\n`;
  urls.forEach((_, i) => { toml += `[[routes.targets]]\nprovider = "engine-${i}"\nmodel = "up"\n`; });
  return `${toml}\n${extra}`;
}

// Polls `probe` until it returns a truthy value; fails after deadlineMs.
async function until(probe, deadlineMs, what) {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// The value of one Prometheus sample, or undefined when absent.
async function metric(url, name, labels) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.lastIndexOf('}'));
    const have = labelText.split(/,(?=[a-z_]+=")/);
    if (have.length === want.length && want.every((w) => have.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

const instanceOf = (i, url) => `engine-${i}@${url}`;

// Runs `body`, then always runs `closers` (last first).
async function withProcesses(closers, body) {
  try {
    return await body();
  } finally {
    for (const c of closers.reverse()) await c?.();
  }
}

// ---------------------------------------------------------------------------------------------
// Timeouts.

test('first-byte timeout: 504 after max_attempts engines that accept and never answer', async () => {
  // Three engines that read the request and say nothing; max_attempts = 2.
  const ups = [];
  for (let i = 0; i < 3; i++) ups.push(await startRawUpstream({ respond: () => {} }));
  const firstByteMs = 300;
  const rolter = await startRolter({
    config: configOver(ups.map((u) => u.url), { server: { first_byte_timeout_ms: firstByteMs }, retry: { max_attempts: 2 } }),
  });
  await withProcesses([...ups.map((u) => () => u.close()), () => rolter.stop()], async () => {
    const r = await ask(rolter.url);
    assert.equal(r.status, 504, r.text);
    assert.equal(r.attempts, '2', 'as many attempts as retry.max_attempts');
    assert.deepEqual(ups.map((u) => u.requests.length).sort(), [0, 1, 1], 'two distinct engines got one request each');
    assert.ok(r.ms >= 2 * firstByteMs - 50, `gave each attempt its first-byte timeout (${r.ms} ms)`);
    assert.ok(r.ms < 2 * firstByteMs + 2000, `no attempt waited much longer than first_byte_timeout_ms (${r.ms} ms)`);
    const error = JSON.parse(r.text).error;
    assert.equal(typeof error.message, 'string');
    const tried = ups.map((u, i) => (u.requests.length ? i : -1)).filter((i) => i >= 0);
    for (const i of tried) assert.match(error.message, new RegExp(`engine-${i}/up`));
    assert.doesNotMatch(error.message, /127\.0\.0\.1|http:/);
    await rolter.log.waitFor(/"event":"request"[^\n]*"attempts":2,"status":504/, { timeoutMs: 5000 });
  });
});

// A loopback listener whose accept queue is full: a connect to it neither completes nor is refused
// (Linux drops the SYN). The listener lives in a child process whose event loop is blocked, so it
// never accepts; `fillers` are the connections that filled the queue.
async function startBlackhole() {
  const script = `const net = require('net');
const s = net.createServer();
s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
  process.stdout.write(s.address().port + '\\n');  // synchronous on a pipe
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
});`;
  // Not a test-runner child: NODE_TEST_CONTEXT would make it report over its stdout.
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'], env });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('blackhole listener did not start')), 5000);
    child.stdout.once('data', (d) => {
      clearTimeout(timer);
      const n = Number(String(d).trim());
      if (Number.isInteger(n) && n > 0) resolve(n); else reject(new Error(`blackhole listener said ${d}`));
    });
  });
  const fillers = [];
  const stop = async () => {
    for (const s of fillers) s.destroy();
    child.kill('SIGKILL');
    await exited;
  };
  // Connect until one connect hangs: the queue is full from then on.
  try {
    for (let i = 0; ; i++) {
      if (i >= 16) throw new Error('could not fill the accept queue of the blackhole listener');
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => {});
      fillers.push(s);
      const connected = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), 300);
        s.once('connect', () => { clearTimeout(timer); resolve(true); });
      });
      if (!connected) break;
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, url: `http://127.0.0.1:${port}`, stop };
}

test('connect timeout: an engine that never completes the handshake fails within connect_timeout_ms, naming the target', async () => {
  const hole = await startBlackhole();
  const connectMs = 400;
  const rolter = await startRolter({
    config: configOver([hole.url], { server: { connect_timeout_ms: connectMs, first_byte_timeout_ms: 10000 } }),
  });
  await withProcesses([() => hole.stop(), () => rolter.stop()], async () => {
    const r = await ask(rolter.url);
    assert.equal(r.status, 504, `a connect timeout is an upstream timeout: ${r.text}`);
    assert.equal(JSON.parse(r.text).error.type, 'timeout_error');
    assert.equal(r.attempts, '1');
    assert.ok(r.ms >= connectMs - 50, `waited for the connect timeout (${r.ms} ms)`);
    assert.ok(r.ms < connectMs + 1500, `gave up near connect_timeout_ms (${r.ms} ms)`);
    const { message } = JSON.parse(r.text).error;
    assert.match(message, /engine-0\/up/, 'the message names the target');
    assert.match(message, /connect/i, 'the message says the connect failed');
    assert.ok(!message.includes(String(hole.port)) && !message.includes('127.0.0.1'), `no internal URL: ${message}`);
  });
});

test('connect timeout is retried on another engine while nothing reached the client', async () => {
  const hole = await startBlackhole();
  const good = await startEchoUpstream();
  const connectMs = 400;
  const rolter = await startRolter({
    config: configOver([hole.url, good.url], { server: { connect_timeout_ms: connectMs } }),
  });
  await withProcesses([() => hole.stop(), () => good.close(), () => rolter.stop()], async () => {
    // Round robin reaches the blackhole first within two requests.
    const results = [];
    for (let i = 0; i < 2 && !results.some((r) => r.attempts === '2'); i++) results.push(await ask(rolter.url));
    for (const r of results) {
      assert.equal(r.status, 200, r.text);
      assert.equal(r.target, 'engine-1/up');
    }
    const retried = results.find((r) => r.attempts === '2');
    assert.ok(retried, `one request tried the blackhole first: ${results.map((r) => r.attempts)}`);
    assert.ok(retried.ms >= connectMs - 50 && retried.ms < connectMs + 1500, `retried after the connect timeout (${retried.ms} ms)`);
    assert.equal(good.requests.length, results.length, 'the good engine served each request once');
  });
});

// Two engines that answer after 5 s; the whole-request budget is 700 ms and the first-byte
// timeout (10 s) does not fire.
async function slowFleet(body) {
  const ups = [await startEchoUpstream(), await startEchoUpstream(), await startEchoUpstream()];
  for (const u of ups) u.setReply({ delayMs: 5000 });
  const totalMs = 700;
  const rolter = await startRolter({
    config: configOver(ups.map((u) => u.url), { server: { upstream_timeout_ms: totalMs, first_byte_timeout_ms: 10000 } }) +
      '[breaker]\nfailure_threshold = 1\nopen_ms = 60000\nhalf_open_probes = 1\n',
  });
  await withProcesses([...ups.map((u) => () => u.close()), () => rolter.stop()], () => body({ ups, rolter, totalMs }));
}

test('upstream_timeout_ms bounds the whole request: a slow answer is a 504 within the budget, not one budget per attempt', async () => {
  await slowFleet(async ({ rolter, totalMs }) => {
    const r = await ask(rolter.url);
    assert.equal(r.status, 504, r.text);
    assert.equal(JSON.parse(r.text).error.type, 'timeout_error');
    assert.ok(r.ms >= totalMs - 50, `waited for upstream_timeout_ms (${r.ms} ms)`);
    assert.ok(r.ms < totalMs + 1000, `the budget is for the whole request, not per attempt (${r.ms} ms)`);
  });
});

test('once upstream_timeout_ms is spent no further attempt is made or counted, and engines never asked keep their breakers closed', async () => {
  await slowFleet(async ({ ups, rolter }) => {
    const r = await ask(rolter.url);
    assert.equal(r.status, 504, r.text);
    const seen = ups.map((u) => u.requests.length);
    const asked = seen.reduce((a, b) => a + b, 0);
    assert.equal(Number(r.attempts), asked,
      `x-rolter-attempts ${r.attempts} but the engines saw ${seen}: ${r.text}`);
    // failure_threshold = 1: a failure recorded against an engine opens its breaker at once.
    for (const [i, u] of ups.entries()) {
      if (u.requests.length > 0) continue;
      assert.equal(await metric(rolter.url, 'rolter_breaker_state', { endpoint: instanceOf(i, u.url), state: 'open' }), 0,
        `engine ${i} never got the request, yet its breaker opened`);
    }
  });
});

test('upstream_timeout_ms on a body that stalls after its head: the client sees a cut body, the log says complete:false', async () => {
  const up = await startRawUpstream({
    async respond(req, ctx) {
      ctx.write(response({ headers: { 'Content-Type': 'application/json', 'Content-Length': '400' }, framing: 'none' }));
      ctx.write('{"id":"slow","object":"chat.completion","choices":[');
      await ctx.sleep(10000);
    },
  });
  const totalMs = 800;
  const rolter = await startRolter({ config: configOver([up.url], { server: { upstream_timeout_ms: totalMs } }) });
  const client = await openRaw(rolter.port);
  await withProcesses([() => up.close(), () => rolter.stop(), async () => client.destroy()], async () => {
    const t0 = Date.now();
    client.write(rawPost('/v1/chat/completions', chatBody()));
    await client.closedWithin(totalMs + 3000);
    const ms = Date.now() - t0;
    assert.ok(ms >= totalMs - 50 && ms < totalMs + 1500, `cut at upstream_timeout_ms (${ms} ms)`);
    const [res, ...rest] = parseResponses(client.buffer());
    assert.equal(rest.length, 0);
    assert.equal(res.status, 200);
    assert.notEqual(res.framing, 'close', 'a close-delimited body would look complete');
    assert.equal(res.complete, false, 'the client can tell the body is incomplete');
    assert.equal(up.requests.length, 1, 'not retried once the head reached the client');
    await rolter.log.waitFor(/"event":"request"[^\n]*"complete":false/, { timeoutMs: 5000 });
  });
});

// ---------------------------------------------------------------------------------------------
// Attempts.

test('max_attempts exhausted: engines that reset before answering, x-rolter-attempts = max_attempts, one request each', async () => {
  const ups = [];
  for (let i = 0; i < 4; i++) ups.push(await startRawUpstream({ respond: (req, ctx) => ctx.destroy() }));
  const rolter = await startRolter({ config: configOver(ups.map((u) => u.url), { retry: { max_attempts: 3 } }) });
  await withProcesses([...ups.map((u) => () => u.close()), () => rolter.stop()], async () => {
    const r = await ask(rolter.url);
    assert.equal(r.status, 502, r.text);
    assert.equal(r.attempts, '3');
    assert.deepEqual(ups.map((u) => u.requests.length).sort(), [0, 1, 1, 1],
      'three distinct engines, one request each; the fourth untouched');
    const { message } = JSON.parse(r.text).error;
    assert.match(message, /3 attempts/);
    ups.forEach((u, i) => {
      if (u.requests.length) assert.match(message, new RegExp(`engine-${i}/up`), 'the message lists each attempt');
      else assert.doesNotMatch(message, new RegExp(`engine-${i}/up`));
    });
  });
});

// Four engines for three attempts: a fourth candidate is still untried when the attempts run out,
// so only the attempt limit (not a lack of candidates) makes the third answer final.
test('the last attempt relays a retryable status unchanged: status, body and content type of that engine', async () => {
  const statuses = [500, 502, 503, 504];
  const order = [];
  const ups = [];
  for (let i = 0; i < 4; i++) {
    const up = await startEchoUpstream();
    up.setReply(() => {
      order.push(i);
      return {
        status: statuses[i],
        headers: { 'X-Engine-Said': `engine-${i}` },
        body: { error: { message: `engine ${i} says ${statuses[i]}`, type: 'server_error', code: `e${i}` } },
      };
    });
    ups.push(up);
  }
  const rolter = await startRolter({ config: configOver(ups.map((u) => u.url), { retry: { max_attempts: 3 } }) });
  await withProcesses([...ups.map((u) => () => u.close()), () => rolter.stop()], async () => {
    const r = await ask(rolter.url);
    assert.equal(order.length, 3, 'three attempts reached three engines, the fourth none');
    assert.equal(new Set(order).size, 3, 'each engine at most once');
    const last = order[2];
    assert.equal(r.status, statuses[last], 'the last engine\'s status');
    assert.equal(r.text, `{"error":{"message":"engine ${last} says ${statuses[last]}","type":"server_error","code":"e${last}"}}`,
      'the last engine\'s body, byte for byte');
    assert.equal(r.headers.get('content-type'), 'application/json');
    assert.equal(r.headers.get('x-engine-said'), `engine-${last}`);
    assert.equal(r.attempts, '3');
    assert.equal(r.target, `engine-${last}/up`);
  });
});

test('a non-retryable 4xx from the engine is relayed unchanged and not retried', async () => {
  const sim = await startSim({ engines: 3, args: ['--time-scale', '0'] });
  const rolter = await startRolter({ config: configOver(sim.engines.map((e) => e.url)) });
  await withProcesses([() => sim.stop(), () => rolter.stop()], async () => {
    for (const status of [400, 404, 409, 422]) {
      for (let i = 0; i < 3; i++) await sim.setFault(i, { error_rate: 1, error_status: status });
      // The engine's own answer, asked directly, is what the client must get.
      const direct = await ask(sim.engines[0].url, chatBody());
      assert.equal(direct.status, status);
      await sim.reset();
      for (const path of ['/v1/chat/completions', '/v1/embeddings']) {
        const body = path === '/v1/embeddings' ? JSON.stringify({ model: 'm', input: 'x' }) : chatBody();
        const before = (await sim.allStats()).map((s) => s.requests);
        const r = await ask(rolter.url, body, { path });
        assert.equal(r.status, status, `${path} ${status}: ${r.text}`);
        assert.equal(r.text, direct.text, 'the engine\'s body unchanged');
        assert.equal(r.attempts, '1', `${status} is not retried`);
        const after = (await sim.allStats()).map((s) => s.requests);
        const grew = after.map((n, i) => n - before[i]);
        assert.deepEqual([...grew].sort(), [0, 0, 1], `${status}: exactly one engine saw the request (${grew})`);
        assert.equal(r.target, `engine-${grew.indexOf(1)}/up`);
      }
    }
  });
});

test('default retry set: 429, 500, 502, 503, 504 move the request to another engine; 501 does not', async () => {
  // The first engine a request reaches answers `status`; any later attempt gets a 200 naming its
  // engine. Order-independent: the test does not assume which engine is picked first.
  const ups = [await startEchoUpstream(), await startEchoUpstream()];
  let plan = null;
  ups.forEach((up, i) => up.setReply(() => {
    plan.arrivals.push(i);
    if (plan.arrivals.length === 1) {
      return { status: plan.status, body: `{"error":{"message":"first engine says ${plan.status}","type":"x","code":null}}` };
    }
    return { body: { id: `served-by-${i}`, object: 'chat.completion', choices: [] } };
  }));
  try {
    for (const status of [429, 500, 502, 503, 504, 501]) {
      plan = { status, arrivals: [] };
      const rolter = await startRolter({ config: configOver(ups.map((u) => u.url)) });
      try {
        const r = await ask(rolter.url);
        if (status === 501) {
          assert.equal(r.status, 501, 'a status outside retry.on_status is relayed');
          assert.equal(r.text, '{"error":{"message":"first engine says 501","type":"x","code":null}}');
          assert.equal(r.attempts, '1');
          assert.equal(plan.arrivals.length, 1, '501 is not retried: the other engine got nothing');
        } else {
          assert.equal(r.status, 200, `${status} is retried: ${r.text}`);
          assert.equal(plan.arrivals.length, 2, `${status}: two engines were asked`);
          assert.notEqual(plan.arrivals[0], plan.arrivals[1], `${status}: the retry went to the other engine`);
          const second = plan.arrivals[1];
          assert.equal(JSON.parse(r.text).id, `served-by-${second}`, 'the client got the second engine\'s answer');
          assert.equal(r.attempts, '2');
          assert.equal(r.target, `engine-${second}/up`);
        }
      } finally {
        await rolter.stop();
      }
    }
  } finally {
    for (const u of ups) await u.close();
  }
});

// ---------------------------------------------------------------------------------------------
// Parking on 429 with Retry-After.

// Engine 0 answers its first request with 429 + `retryAfter()`, then 200s; engine 1 always 200.
// Returns how long engine 0 stayed out, measured at the engines: from its 429 to its next request.
async function parkedFor(retryAfter, { retry = {} } = {}) {
  const ups = [await startEchoUpstream(), await startEchoUpstream()];
  const arrivals = [[], []];
  let rateLimitedAt = 0;
  let retryAfterValue;
  ups[0].setReply(() => {
    arrivals[0].push(Date.now());
    if (arrivals[0].length === 1) {
      retryAfterValue = retryAfter();
      rateLimitedAt = Date.now();
      return {
        status: 429,
        headers: { 'Retry-After': retryAfterValue },
        body: { error: { message: 'slow down', type: 'rate_limit_error', code: 'rate_limit_exceeded' } },
      };
    }
    return {};
  });
  ups[1].setReply(() => { arrivals[1].push(Date.now()); return {}; });
  const rolter = await startRolter({ config: configOver(ups.map((u) => u.url), { retry }) });
  const instance = instanceOf(0, ups[0].url);
  try {
    // Round robin reaches engine 0 within two requests; its 429 is retried on engine 1.
    for (let i = 0; i < 2 && arrivals[0].length === 0; i++) {
      const r = await ask(rolter.url);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.target, 'engine-1/up');
    }
    assert.equal(arrivals[0].length, 1, 'engine 0 got a request and answered 429');
    assert.equal(await metric(rolter.url, 'rolter_endpoint_parked', { endpoint: instance }), 1, 'engine 0 is parked');
    assert.equal(await metric(rolter.url, 'rolter_parks_total', { endpoint: instance, reason: '429' }), 1);
    assert.equal(await metric(rolter.url, 'rolter_endpoint_parked', { endpoint: instanceOf(1, ups[1].url) }), 0);
    // Keep asking; engine 1 serves everything until engine 0's parking ends.
    const servedWhileParked = [];
    await until(async () => {
      const r = await ask(rolter.url);
      assert.equal(r.status, 200, r.text);
      if (arrivals[0].length < 2) servedWhileParked.push(r.target);
      return arrivals[0].length >= 2;
    }, 10000, 'engine 0 to get traffic again');
    assert.ok(servedWhileParked.every((t) => t === 'engine-1/up'));
    assert.ok(servedWhileParked.length > 0, 'requests went on while engine 0 was parked');
    assert.equal(await metric(rolter.url, 'rolter_endpoint_parked', { endpoint: instance }), 0, 'no longer parked');
    assert.equal(await metric(rolter.url, 'rolter_parks_total', { endpoint: instance, reason: '429' }), 1);
    return { outMs: arrivals[0][1] - rateLimitedAt, rateLimitedAt, backAt: arrivals[0][1], retryAfterValue };
  } finally {
    await rolter.stop();
    for (const u of ups) await u.close();
  }
}

test('Retry-After in seconds parks the engine for that long', async () => {
  const { outMs } = await parkedFor(() => '2');
  assert.ok(outMs >= 2000 - 100, `parked for ${outMs} ms, Retry-After: 2`);
  assert.ok(outMs < 2000 + 1000, `back soon after the parking ended (${outMs} ms)`);
});

test('Retry-After as an HTTP date parks the engine until that date', async () => {
  // A date ~3 s ahead on a whole second (HTTP dates have one-second resolution).
  let dateMs = 0;
  const { backAt, retryAfterValue } = await parkedFor(() => {
    dateMs = Math.ceil(Date.now() / 1000) * 1000 + 3000;
    return new Date(dateMs).toUTCString();
  });
  assert.match(retryAfterValue, /GMT$/);
  assert.ok(backAt >= dateMs - 100, `engine 0 got traffic ${dateMs - backAt} ms before its Retry-After date (${retryAfterValue})`);
  assert.ok(backAt < dateMs + 1000, `back soon after the date (${backAt - dateMs} ms late)`);
});

test('Retry-After is capped by retry.park_on_429_max_ms', async () => {
  const { outMs } = await parkedFor(() => '30', { retry: { park_on_429_max_ms: 1500 } });
  assert.ok(outMs >= 1500 - 100, `parked for ${outMs} ms, cap 1500`);
  assert.ok(outMs < 1500 + 1000, `the cap ended the parking, not Retry-After: 30 (${outMs} ms)`);
});

test('every candidate is out: the one back soonest serves instead of an error', async () => {
  const sim = await startSim({ engines: 3, args: ['--time-scale', '0'] });
  // Parked for 20 s, 4 s and 12 s: the soonest back is engine 1, neither first nor last.
  const parkS = [20, 4, 12];
  for (let i = 0; i < 3; i++) await sim.setFault(i, { status_429_retry_after_s: parkS[i] });
  const rolter = await startRolter({ config: configOver(sim.engines.map((e) => e.url), { retry: { max_attempts: 3 } }) });
  await withProcesses([() => sim.stop(), () => rolter.stop()], async () => {
    const first = await ask(rolter.url);
    assert.equal(first.status, 429, 'every engine said 429: the last one is relayed');
    assert.equal(first.attempts, '3');
    assert.deepEqual((await sim.allStats()).map((s) => s.requests), [1, 1, 1]);
    for (let i = 0; i < 3; i++) {
      assert.equal(await metric(rolter.url, 'rolter_endpoint_parked', { endpoint: instanceOf(i, sim.engines[i].url) }), 1, `engine ${i} parked`);
    }
    for (let i = 0; i < 3; i++) await sim.clearFault(i);
    for (let k = 0; k < 3; k++) {
      const r = await ask(rolter.url);
      assert.equal(r.status, 200, `not an error while an engine can come back: ${r.text}`);
      assert.equal(r.target, 'engine-1/up', 'the engine whose parking ends soonest');
      assert.equal(r.attempts, '1');
    }
    assert.deepEqual((await sim.allStats()).map((s) => s.requests), [1, 4, 1], 'engines 0 and 2 got nothing more');
  });
});

// ---------------------------------------------------------------------------------------------
// A body cut mid-way.

test('a non-SSE body cut mid-way: the client sees an incomplete body, never a complete-looking answer', async () => {
  const full = JSON.stringify({ id: 'cut', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(300) } }] });
  const sent = full.slice(0, 120);
  for (const framing of ['length', 'chunked']) {
    // Two engines that both cut; only one may be asked: bytes already reached the client.
    const ups = [];
    for (let i = 0; i < 2; i++) {
      ups.push(await startRawUpstream({
        async respond(req, ctx) {
          if (framing === 'length') {
            ctx.write(response({ headers: { 'Content-Type': 'application/json', 'Content-Length': String(full.length) }, framing: 'none' }));
            ctx.write(sent);
          } else {
            ctx.write(response({ headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }, framing: 'none' }));
            ctx.write(chunk(sent));
          }
          await ctx.sleep(100);
          ctx.destroy();
        },
      }));
    }
    const rolter = await startRolter({ config: configOver(ups.map((u) => u.url)) });
    const client = await openRaw(rolter.port);
    await withProcesses([...ups.map((u) => () => u.close()), () => rolter.stop(), async () => client.destroy()], async () => {
      client.write(rawPost('/v1/chat/completions', chatBody()));
      await client.closedWithin(5000);
      const [res, ...rest] = parseResponses(client.buffer());
      assert.equal(rest.length, 0, `${framing}: one response`);
      assert.equal(res.status, 200);
      assert.notEqual(res.framing, 'close', `${framing}: a close-delimited body would look complete`);
      assert.equal(res.complete, false, `${framing}: the client can tell the body was cut`);
      assert.ok(sent.startsWith(res.text), `${framing}: what arrived is a prefix of what the engine sent`);
      assert.equal(ups[0].requests.length + ups[1].requests.length, 1, `${framing}: not retried after bytes reached the client`);
      await rolter.log.waitFor(/"event":"request"[^\n]*"status":200[^\n]*"complete":false/, { timeoutMs: 5000 });
    });
  }
});

test('a cut non-SSE body makes fetch fail, not resolve with a short body', async () => {
  const full = JSON.stringify({ id: 'cut', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'y'.repeat(300) } }] });
  const up = await startRawUpstream({
    async respond(req, ctx) {
      ctx.write(response({ headers: { 'Content-Type': 'application/json', 'Content-Length': String(full.length) }, framing: 'none' }));
      ctx.write(full.slice(0, 100));
      await ctx.sleep(100);
      ctx.destroy();
    },
  });
  const rolter = await startRolter({ config: configOver([up.url]) });
  await withProcesses([() => up.close(), () => rolter.stop()], async () => {
    const res = await fetch(`${rolter.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody(),
    });
    assert.equal(res.status, 200);
    await assert.rejects(res.text(), 'reading the body fails');
  });
});

// ---------------------------------------------------------------------------------------------
// power_of_two under load.

// Closed-loop load: `workers` clients send requests back to back for `forMs`.
async function load(url, { workers, forMs }) {
  const end = Date.now() + forMs;
  const failures = [];
  let sent = 0;
  await Promise.all(Array.from({ length: workers }, async (_, w) => {
    while (Date.now() < end) {
      sent++;
      const r = await ask(url, chatBody(`worker ${w} request ${sent}`));
      if (r.status !== 200) failures.push(`${r.status} ${r.text}`);
    }
  }));
  return { sent, failures };
}

test('power_of_two under load: equal engines share evenly; a slow engine gets little, the least loaded get the traffic', async () => {
  const sim = await startSim({ engines: 3, args: ['--time-scale', '0'] });
  const rolter = await startRolter({ config: configOver(sim.engines.map((e) => e.url), { strategy: 'power_of_two' }) });
  await withProcesses([() => sim.stop(), () => rolter.stop()], async () => {
    // Equal engines, each request 150 ms: no engine takes more than a bound share.
    for (let i = 0; i < 3; i++) await sim.setFault(i, { stall_first_byte_ms: 150 });
    const even = await load(rolter.url, { workers: 12, forMs: 1500 });
    assert.deepEqual(even.failures, []);
    const evenCounts = (await sim.allStats()).map((s) => s.requests);
    const evenTotal = evenCounts.reduce((a, b) => a + b, 0);
    assert.equal(evenTotal, even.sent, 'every request reached an engine once');
    for (const [i, n] of evenCounts.entries()) {
      assert.ok(n / evenTotal <= 0.45 && n / evenTotal >= 0.22, `engine ${i} took ${n} of ${evenTotal}: ${evenCounts}`);
    }

    // Engine 0 slow (1.5 s a request), engines 1 and 2 fast (100 ms): requests pile up on engine 0,
    // so it loses nearly every comparison; uniform or round-robin picks would give it a third.
    await sim.reset();
    await sim.setFault(0, { stall_first_byte_ms: 1500 });
    for (const i of [1, 2]) await sim.setFault(i, { stall_first_byte_ms: 100 });
    const skew = await load(rolter.url, { workers: 12, forMs: 3000 });
    assert.deepEqual(skew.failures, []);
    const counts = (await sim.allStats()).map((s) => s.requests);
    const total = counts.reduce((a, b) => a + b, 0);
    assert.equal(total, skew.sent);
    assert.ok(counts[0] / total < 0.15, `the slow engine took ${counts[0]} of ${total}: ${counts}`);
    for (const i of [1, 2]) {
      assert.ok(counts[i] / total > 0.35, `fast engine ${i} took ${counts[i]} of ${total}: ${counts}`);
    }
  });
});
