// Engines failing under load: nothing is lost, breakers and parking keep traffic away from sick
// engines, and clients get clear answers when nothing can serve.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSim } from '../lib/sim.mjs';
import { startRolter, configFor } from '../lib/rolter.mjs';

const chat = (extra = {}) => JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }], max_tokens: 2, ...extra });

async function ask(url, body = chat(), headers = {}) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

function routeOver(engines, strategy = 'round_robin', name = 'm') {
  return { name, strategy, targets: engines.map((_, i) => ({ engine: i, model: 'up' })) };
}

// Polls `probe` until it returns a truthy value; fails after deadlineMs.
async function until(probe, deadlineMs, what) {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('an engine refused mid-load: 2,000 requests at concurrency 32, zero failures', async () => {
  const sim = await startSim({ engines: 3, args: ['--time-scale', '0'] });
  const rolter = await startRolter({ config: configFor({ engines: sim.engines, routes: [routeOver(sim.engines)] }) });
  try {
    const total = 2000;
    let next = 0;
    let done = 0;
    const failures = [];
    let refused = false;
    const worker = async () => {
      while (next < total) {
        next++;
        const r = await ask(rolter.url);
        if (r.status !== 200) failures.push(`${r.status} ${r.text}`);
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
    const stats = await sim.allStats();
    const served = stats.reduce((sum, s) => sum + s.completed, 0);
    assert.equal(served, total, 'every request was served exactly once');
  } finally {
    await rolter.stop();
    await sim.stop();
  }
});

test('an engine answering 500 opens its breaker, gets no traffic while open, then one probe', async () => {
  const sim = await startSim({ engines: 2, args: ['--time-scale', '0'] });
  const openMs = 3000;
  const rolter = await startRolter({
    config: configFor({ engines: sim.engines, routes: [routeOver(sim.engines)] }) +
      `\n[breaker]\nfailure_threshold = 3\nopen_ms = ${openMs}\nhalf_open_probes = 1\n`,
  });
  try {
    await sim.setFault(0, { error_rate: 1, error_status: 500 });
    // Round robin sends every other request to engine 0; each 500 is retried on engine 1.
    let beforeThird = 0;
    for (let i = 0; i < 20; i++) {
      const faulted = (await sim.stats(0)).faulted;
      if (faulted === 2 && beforeThird === 0) beforeThird = Date.now();
      const r = await ask(rolter.url);
      assert.equal(r.status, 200, r.text);
    }
    const opened = await sim.stats(0);
    assert.equal(opened.faulted, 3, 'the breaker opened at failure_threshold and took no more traffic');

    // Still open: more requests, none to engine 0.
    for (let i = 0; i < 10; i++) assert.equal((await ask(rolter.url)).status, 200);
    if (Date.now() - beforeThird < openMs) assert.equal((await sim.stats(0)).requests, 3);

    // After open_ms the breaker lets one probe through; the engine is healthy again.
    await sim.clearFault(0);
    const probeAt = await until(async () => {
      await ask(rolter.url);
      return (await sim.stats(0)).requests > 3 ? Date.now() : 0;
    }, openMs + 5000, 'the half-open probe');
    assert.ok(probeAt - beforeThird >= openMs, `probe after ${probeAt - beforeThird} ms`);
    // The probe succeeded: the breaker closed and engine 0 is back in the rotation.
    for (let i = 0; i < 6; i++) await ask(rolter.url);
    assert.ok((await sim.stats(0)).completed >= 3);
  } finally {
    await rolter.stop();
    await sim.stop();
  }
});

test('429 with Retry-After parks that engine for that long', async () => {
  const sim = await startSim({ engines: 2, args: ['--time-scale', '0'] });
  const rolter = await startRolter({ config: configFor({ engines: sim.engines, routes: [routeOver(sim.engines)] }) });
  try {
    await sim.setFault(0, { status_429_retry_after_s: 2 });
    let t0 = 0;
    for (let i = 0; i < 2 && (await sim.stats(0)).faulted === 0; i++) {
      t0 = Date.now();
      const r = await ask(rolter.url);
      assert.equal(r.status, 200, 'the 429 was retried on the other engine');
    }
    assert.equal((await sim.stats(0)).faulted, 1);
    await sim.clearFault(0);
    const back = await until(async () => {
      assert.equal((await ask(rolter.url)).status, 200);
      return (await sim.stats(0)).requests > 1 ? Date.now() : 0;
    }, 6000, 'engine 0 to get traffic again');
    assert.ok(back - t0 >= 2000, `engine 0 got traffic again after ${back - t0} ms`);
  } finally {
    await rolter.stop();
    await sim.stop();
  }
});

test('an engine dying mid-stream ends the stream with an SSE error event', async () => {
  const sim = await startSim({ engines: 1, args: ['--ttft-ms', '1', '--token-ms', '1'] });
  const rolter = await startRolter({ config: configFor({ engines: sim.engines, routes: [routeOver(sim.engines)] }) });
  try {
    await sim.setFault(0, { drop_mid_stream_after_tokens: 3 });
    const res = await fetch(`${rolter.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: chat({ stream: true, max_tokens: 50 }),
    });
    assert.equal(res.status, 200);
    let text = '';
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
    } catch {
      // The relay closes the connection after the error event: the body is incomplete on purpose.
    }
    // Chat streams end with the error as a data event, which the OpenAI SDKs raise as an APIError.
    assert.match(text, /\n\ndata: \{"error":\{"message":"upstream failed mid-stream[^\n]*"code":"upstream_error"\}\}\n\n$/);
    assert.doesNotMatch(text, /event: error/);
    assert.doesNotMatch(text, /\[DONE\]/);
    assert.equal((text.match(/"chat\.completion\.chunk"/g) ?? []).length, 3);
  } finally {
    await rolter.stop();
    await sim.stop();
  }
});

test('every engine down: 503 naming why each one is out', async () => {
  const sim = await startSim({ engines: 2, args: ['--time-scale', '0'] });
  let config = '[server]\nlisten = "127.0.0.1:0"\n\n[health]\ninterval_ms = 50\ntimeout_ms = 500\nunhealthy_threshold = 1\nhealthy_threshold = 1\n\n';
  sim.engines.forEach((e, i) => {
    config += `[[providers]]\nname = "engine-${i}"\nbase_url = "${e.url}"\nhealth_path = "/health"\n\n`;
  });
  config += '[[routes]]\nname = "m"\n[[routes.targets]]\nprovider = "engine-0"\nmodel = "up"\n[[routes.targets]]\nprovider = "engine-1"\nmodel = "up"\n';
  const rolter = await startRolter({ config });
  try {
    assert.equal((await ask(rolter.url)).status, 200);
    await sim.setFault(0, { refuse: true });
    await sim.setFault(1, { refuse: true });
    const r = await until(async () => {
      const res = await ask(rolter.url);
      return res.status === 503 ? res : null;
    }, 5000, 'a 503');
    const message = JSON.parse(r.text).error.message;
    assert.match(message, /engine-0\/up: failing health checks/);
    assert.match(message, /engine-1\/up: failing health checks/);
    assert.doesNotMatch(message, /http:|127\.0\.0\.1/);

    // Health checks bring them back.
    await sim.clearFault(0);
    await sim.clearFault(1);
    await until(async () => (await ask(rolter.url)).status === 200, 5000, 'recovery');
  } finally {
    await rolter.stop();
    await sim.stop();
  }
});
