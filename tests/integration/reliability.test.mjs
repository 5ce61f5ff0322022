// Engines failing under load: nothing is lost, breakers and parking keep traffic away from sick
// engines, and clients get clear answers when nothing can serve. Each test starts its own
// rolter-sim and rolter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFleet, configFor } from '../lib/rolter.mjs';
import { chat, postJson, readAll, waitUntil } from '../lib/http.mjs';

const ask = (rolter, opts = {}) => chat(rolter.url, 'm', { maxTokens: 2, ...opts });

function routeOver(engines, strategy = 'round_robin', name = 'm') {
  return { name, strategy, targets: engines.map((_, i) => ({ engine: i, model: 'up' })) };
}

// `engines` engines behind route `m` (round robin); `options` go to configFor.
function fleet(t, { engines, simArgs, ...options }) {
  return startFleet(t, {
    engines,
    simArgs,
    config: (list) => configFor({ engines: list, routes: [routeOver(list)], ...options }),
  });
}

test('an engine refused mid-load: 2,000 requests at concurrency 32, zero failures', async (t) => {
  const { sim, rolter } = await fleet(t, { engines: 3 });
  const total = 2000;
  let next = 0;
  let done = 0;
  let retried = 0;
  let extraAttempts = 0;
  const failures = [];
  let refused = false;
  const worker = async () => {
    while (next < total) {
      next++;
      const r = await ask(rolter);
      if (r.status !== 200) failures.push(`${r.status} ${r.text}`);
      if (r.attempts > 1) retried++;
      extraAttempts += r.attempts - 1;
      done++;
      if (done === 300 && !refused) {
        refused = true;
        await sim.setFault(1, { refuse: true });
      }
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  assert.ok(refused);
  assert.deepEqual(failures, []);
  assert.ok(retried >= 1, 'requests met the refusing engine and were retried');
  const stats = await sim.allStats();
  assert.equal(stats.reduce((sum, s) => sum + s.completed, 0), total, 'every request was served exactly once');
  // A request on a pooled connection that the refusing engine closed can reach it without an
  // answer and be retried: every upstream request beyond `total` must be such a retry.
  const upstream = stats.reduce((sum, s) => sum + s.requests, 0);
  assert.ok(upstream >= total && upstream - total <= extraAttempts,
    `${upstream} upstream requests for ${total} requests and ${extraAttempts} retries`);
});

test('an engine answering 500 opens its breaker, gets no traffic while open, then one probe', async (t) => {
  // open_ms is far longer than the checks made while the breaker is open; the test fails (rather
  // than skips a check) if they still took too long to prove anything.
  const openMs = 3000;
  const { sim, rolter } = await fleet(t, {
    engines: 2,
    breaker: { failure_threshold: 3, open_ms: openMs, half_open_probes: 1 },
  });
  await sim.setFault(0, { error_rate: 1, error_status: 500 });

  // Round robin sends every other request to engine 0; each 500 is retried on engine 1. The
  // breaker opens at the third failure, some time after beforeThird.
  let beforeThird = 0;
  const first = [];
  for (let i = 0; i < 20; i++) {
    if ((await sim.stats(0)).faulted === 2 && beforeThird === 0) beforeThird = Date.now();
    const r = await ask(rolter);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.engine, 1);
    first.push(r.attempts);
  }
  assert.ok(beforeThird > 0);
  assert.equal((await sim.stats(0)).faulted, 3, 'the breaker opened at failure_threshold and took no more traffic');
  assert.equal((await sim.stats(0)).requests, 3);
  assert.equal(first.filter((a) => a === 2).length, 3, `x-rolter-attempts: ${first.join(', ')}`);
  assert.equal(first.filter((a) => a === 1).length, 17);

  // Still open: more requests, none to engine 0.
  for (let i = 0; i < 10; i++) {
    const r = await ask(rolter);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.attempts, 1, 'an open breaker is skipped, not tried');
  }
  assert.equal((await sim.stats(0)).requests, 3);
  const openFor = Date.now() - beforeThird;
  assert.ok(openFor < openMs, `the open-breaker checks took ${openFor} ms, not within open_ms ${openMs}: they prove nothing`);
  assert.equal((await sim.stats(1)).completed, 30);

  // After open_ms the breaker lets one probe through; the engine is healthy again.
  await sim.clearFault(0);
  const probeAt = await waitUntil(async () => {
    assert.equal((await ask(rolter)).status, 200);
    return (await sim.stats(0)).requests > 3 ? Date.now() : 0;
  }, { timeoutMs: openMs + 5000, what: 'the half-open probe' });
  assert.ok(probeAt - beforeThird >= openMs, `probe after ${probeAt - beforeThird} ms`);
  const probed = await sim.stats(0);
  assert.equal(probed.requests, 4, 'one probe');
  assert.equal(probed.completed, 1);
  // The probe succeeded: the breaker closed and engine 0 is back in the rotation.
  for (let i = 0; i < 6; i++) assert.equal((await ask(rolter)).status, 200);
  assert.equal((await sim.stats(0)).completed, 4, 'the probe and three of six round-robin picks');
});

test('429 with Retry-After parks that engine for that long', async (t) => {
  const { sim, rolter } = await fleet(t, { engines: 2 });
  await sim.setFault(0, { status_429_retry_after_s: 2 });
  // Round robin reaches engine 0 within two requests; that one is retried on engine 1.
  let t0 = 0;
  let rateLimited;
  for (let i = 0; i < 2 && (await sim.stats(0)).faulted === 0; i++) {
    t0 = Date.now();
    rateLimited = await ask(rolter);
    assert.equal(rateLimited.status, 200, 'the 429 was retried on the other engine');
    assert.equal(rateLimited.engine, 1);
  }
  assert.equal((await sim.stats(0)).faulted, 1);
  assert.equal(rateLimited.attempts, 2, 'the request that met the 429 took a second attempt');
  await sim.clearFault(0);
  const back = await waitUntil(async () => {
    const r = await ask(rolter);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.attempts, 1, 'a parked engine is skipped, not tried');
    return (await sim.stats(0)).requests > 1 ? Date.now() : 0;
  }, { timeoutMs: 6000, what: 'engine 0 to get traffic again' });
  assert.ok(back - t0 >= 2000, `engine 0 got traffic again after ${back - t0} ms`);
  assert.equal((await sim.stats(0)).completed, 1);
});

test('an engine dying mid-stream ends the stream with an SSE error event', async (t) => {
  const { sim, rolter } = await fleet(t, { engines: 1, simArgs: ['--ttft-ms', '1', '--token-ms', '1'] });
  await sim.setFault(0, { drop_mid_stream_after_tokens: 3 });
  const res = await postJson(`${rolter.url}/v1/chat/completions`, {
    model: 'm', stream: true, messages: [{ role: 'user', content: 'hello' }], max_tokens: 50,
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-rolter-attempts'), '1');
  // The relay closes the connection after the error event: the body may end cut on purpose.
  const { text } = await readAll(res);
  // Chat streams end with the error as a data event, which the OpenAI SDKs raise as an APIError.
  assert.match(text, /\n\ndata: \{"error":\{"message":"upstream failed mid-stream[^\n]*"code":"upstream_error","request_id":"[^"]+"\}\}\n\n$/);
  assert.doesNotMatch(text, /event: error/);
  assert.doesNotMatch(text, /\[DONE\]/);
  assert.equal((text.match(/"chat\.completion\.chunk"/g) ?? []).length, 3);
  assert.equal((await sim.stats(0)).requests, 1, 'a stream that reached the client is never retried');
});

test('every engine down: 503 naming why each one is out', async (t) => {
  const { sim, rolter } = await fleet(t, {
    engines: 2,
    health: { interval_ms: 50, timeout_ms: 500, unhealthy_threshold: 1, healthy_threshold: 1 },
    providerFields: { health_path: '/health' },
  });
  assert.equal((await ask(rolter)).status, 200);
  await sim.setFault(0, { refuse: true });
  await sim.setFault(1, { refuse: true });
  const r = await waitUntil(async () => {
    const res = await ask(rolter);
    return res.status === 503 ? res : null;
  }, { timeoutMs: 5000, what: 'a 503' });
  const message = r.json.error.message;
  assert.match(message, /engine-0\/up: failing health checks/);
  assert.match(message, /engine-1\/up: failing health checks/);
  assert.doesNotMatch(message, /http:|127\.0\.0\.1/);

  // Health checks bring them back.
  await sim.clearFault(0);
  await sim.clearFault(1);
  await waitUntil(async () => (await ask(rolter)).status === 200, { timeoutMs: 5000, what: 'recovery' });
});
