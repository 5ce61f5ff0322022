// Fallback routes (SPEC §16): a route that cannot answer hands the request to the routes of its
// `fallbacks` list, in order, at most retry.max_fallbacks hops. Each test starts its own
// rolter-sim and rolter (port 0) and asserts from what happened: which engine served (the sim's
// counters), x-rolter-route / x-rolter-fallbacks / x-rolter-attempts, the request log line, and
// that the client received exactly one response on its connection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFleet, binDir } from '../lib/rolter.mjs';
import { startRawUpstream, response } from '../lib/raw_upstream.mjs';
import { postJson, readAll, fetchWithin } from '../lib/http.mjs';
import { rawExchange, rawPost } from '../lib/raw_upstream.mjs';

// rolter.toml: one provider per engine ("engine-<i>"), then `routes`:
// [{ name, engines: [i...], fallbacks?, fallback_on? }], each target forwarding model "up".
function fallbackConfig(engines, routes, { retry = {} } = {}) {
  const q = JSON.stringify;
  const list = (a) => `[${a.map(q).join(', ')}]`;
  let toml = '[server]\nlisten = "127.0.0.1:0"\nfirst_byte_timeout_ms = 10000\n\n';
  toml += '[retry]\n' + Object.entries({ max_attempts: 3, ...retry }).map(([k, v]) => `${k} = ${v}\n`).join('') + '\n';
  engines.forEach((e, i) => { toml += `[[providers]]\nname = "engine-${i}"\nbase_url = ${q(e.url)}\n\n`; });
  for (const r of routes) {
    toml += `[[routes]]\nname = ${q(r.name)}\nstrategy = "round_robin"\n`;
    if (r.fallbacks) toml += `fallbacks = ${list(r.fallbacks)}\n`;
    if (r.fallback_on) toml += `fallback_on = ${list(r.fallback_on)}\n`;
    for (const i of r.engines) toml += `[[routes.targets]]\nprovider = "engine-${i}"\nmodel = "up"\n`;
    toml += '\n';
  }
  return toml;
}

// One chat completion on a fresh connection (Connection: close), read until rolter closes it.
// Everything the client received must be exactly one complete response.
async function askOnce(rolter, model, { stream = false, content = 'hello' } = {}) {
  const body = { model, messages: [{ role: 'user', content }], max_tokens: 2, ...(stream ? { stream: true } : {}) };
  const got = await rawExchange(rolter.port, rawPost('/v1/chat/completions', body), { deadlineMs: 10000 });
  assert.equal(got.timedOut, false, `rolter did not close the connection in time: ${got.text}`);
  assert.equal(got.responses.length, 1, `exactly one response on the connection:\n${got.text}`);
  const [r] = got.responses;
  assert.ok(!r.garbage && r.complete, `one complete response:\n${got.text}`);
  return {
    status: r.status,
    text: r.text,
    json: (() => { try { return JSON.parse(r.text); } catch { return undefined; } })(),
    route: r.header('x-rolter-route'),
    fallbacks: r.header('x-rolter-fallbacks'),
    attempts: Number(r.header('x-rolter-attempts')),
    target: r.header('x-rolter-target'),
    engine: r.header('x-sim-engine') === undefined ? undefined : Number(r.header('x-sim-engine')),
  };
}

const requestsPerEngine = async (sim) => (await sim.allStats()).map((s) => s.requests);

test('every target of the route refuses: its fallback route serves, once', async (t) => {
  const { sim, rolter } = await startFleet(t, {
    engines: 3,
    config: (engines) => fallbackConfig(engines, [
      { name: 'a', engines: [0, 1], fallbacks: ['b'] },
      { name: 'b', engines: [2] },
    ]),
  });
  await sim.setFault(0, { refuse: true });
  await sim.setFault(1, { refuse: true });
  const r = await askOnce(rolter, 'a');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.engine, 2);
  assert.equal(r.route, 'b', 'x-rolter-route names the route that answered');
  assert.equal(r.fallbacks, 'a', 'x-rolter-fallbacks names the route given up on');
  assert.equal(r.target, 'engine-2/up');
  assert.equal(r.attempts, 3, 'two refused attempts on a, one on b');
  assert.equal(r.json.object, 'chat.completion');
  assert.deepEqual(await requestsPerEngine(sim), [0, 0, 1]);
  await rolter.log.waitFor(/"event":"request",[^\n]*"route":"b","fallbacks":"a","target":"engine-2\/up",[^\n]*"attempts":3,"status":200/,
    { timeoutMs: 5000 });
  const metrics = await (await fetchWithin(`${rolter.url}/metrics`)).text();
  assert.match(metrics, /rolter_fallbacks_total\{route="a",to="b"\} 1/);
});

test('every target answers 429: fallback_on = ["rate_limited"] moves the request, the default relays the 429', async (t) => {
  const { sim, rolter } = await startFleet(t, {
    engines: 3,
    config: (engines) => fallbackConfig(engines, [
      { name: 'limited', engines: [0, 1], fallbacks: ['b'], fallback_on: ['rate_limited'] },
      { name: 'plain', engines: [0, 1], fallbacks: ['b'] },
      { name: 'b', engines: [2] },
    ]),
  });
  await sim.setFault(0, { status_429_retry_after_s: 1 });
  await sim.setFault(1, { status_429_retry_after_s: 1 });

  const moved = await askOnce(rolter, 'limited');
  assert.equal(moved.status, 200, moved.text);
  assert.equal(moved.engine, 2);
  assert.equal(moved.route, 'b');
  assert.equal(moved.fallbacks, 'limited');
  assert.equal(moved.attempts, 3, 'a 429 from each of the two engines, then b');
  assert.deepEqual(await requestsPerEngine(sim), [1, 1, 1]);

  // Without rate_limited, a 429 from every target is relayed: it is an answer, not unavailability.
  const relayed = await askOnce(rolter, 'plain');
  assert.equal(relayed.status, 429, relayed.text);
  assert.equal(relayed.route, 'plain');
  assert.equal(relayed.fallbacks, undefined);
  assert.equal(relayed.attempts, 2);
  assert.deepEqual(await requestsPerEngine(sim), [2, 2, 1], "b's engine saw nothing more");
});

test('a prompt too long for the route: fallback_on = ["context_length"] moves it, the default answers the 400', async (t) => {
  const { sim, rolter } = await startFleet(t, {
    engines: 3,
    config: (engines) => fallbackConfig(engines, [
      { name: 'short', engines: [0, 1], fallbacks: ['long'], fallback_on: ['context_length'] },
      { name: 'plain', engines: [0, 1], fallbacks: ['long'] },
      { name: 'long', engines: [2] },
    ]),
  });
  // Engines 0 and 1 take prompts of at most 2 tokens; this one has six.
  const content = 'a prompt of six words here';
  await sim.setFault(0, { max_model_len: 2 });
  await sim.setFault(1, { max_model_len: 2 });

  const moved = await askOnce(rolter, 'short', { content });
  assert.equal(moved.status, 200, moved.text);
  assert.equal(moved.engine, 2);
  assert.equal(moved.route, 'long');
  assert.equal(moved.fallbacks, 'short');
  assert.equal(moved.attempts, 3, 'a context-length 400 from each short engine, then the long one');
  assert.deepEqual(await requestsPerEngine(sim), [1, 1, 1]);

  // Without context_length the engine's 400 is the answer, relayed whole, and nothing moves.
  const relayed = await askOnce(rolter, 'plain', { content });
  assert.equal(relayed.status, 400, relayed.text);
  assert.match(relayed.json.message ?? relayed.json.error?.message ?? '', /maximum context length/);
  assert.equal(relayed.fallbacks, undefined);
  assert.equal(relayed.attempts, 1);
  assert.equal((await requestsPerEngine(sim))[2], 1, "the long route's engine saw nothing more");

  // Another 400 (not about the prompt's length) on a context_length route is relayed, not moved.
  await sim.setFault(0, { max_model_len: 0, error_rate: 1, error_status: 400 });
  await sim.setFault(1, { max_model_len: 0, error_rate: 1, error_status: 400 });
  const other = await askOnce(rolter, 'short', { content });
  assert.equal(other.status, 400, other.text);
  assert.equal(other.fallbacks, undefined);
  assert.equal(other.attempts, 1);
});

test('a content filter refusing the request: fallback_on = ["content_filter"] moves it to the next route', async (t) => {
  // An Azure-style content filter answers 400 with code "content_filter"; the engine behind the
  // fallback route serves.
  const filtered = await startRawUpstream({
    respond(req, ctx) {
      ctx.write(response({
        status: 400,
        reason: 'Bad Request',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ error: { message: 'The response was filtered due to the prompt triggering the content management policy.', type: null, param: 'prompt', code: 'content_filter', status: 400 } }),
      }));
    },
  });
  t.after(() => filtered.close());
  const { sim, rolter } = await startFleet(t, {
    engines: 1,
    config: (engines) => fallbackConfig([filtered, ...engines], [
      { name: 'strict', engines: [0], fallbacks: ['open'], fallback_on: ['content_filter'] },
      { name: 'plain', engines: [0], fallbacks: ['open'] },
      { name: 'open', engines: [1] },
    ]),
  });
  const moved = await askOnce(rolter, 'strict');
  assert.equal(moved.status, 200, moved.text);
  assert.equal(moved.route, 'open');
  assert.equal(moved.fallbacks, 'strict');
  assert.equal(moved.attempts, 2);
  assert.equal(filtered.requests.length, 1);
  assert.equal((await sim.stats(0)).requests, 1);

  const relayed = await askOnce(rolter, 'plain');
  assert.equal(relayed.status, 400, relayed.text);
  assert.equal(relayed.json.error.code, 'content_filter');
  assert.equal(relayed.fallbacks, undefined);
  assert.equal((await sim.stats(0)).requests, 1, "the open route's engine saw nothing more");
});

test('a stream that began on the route and then breaks is never moved to the fallback route', async (t) => {
  const { sim, rolter } = await startFleet(t, {
    engines: 2,
    simArgs: ['--ttft-ms', '1', '--token-ms', '1'],
    config: (engines) => fallbackConfig(engines, [
      { name: 'a', engines: [0], fallbacks: ['b'], fallback_on: ['unavailable', 'rate_limited'] },
      { name: 'b', engines: [1] },
    ]),
  });
  await sim.setFault(0, { drop_mid_stream_after_tokens: 3 });
  const res = await postJson(`${rolter.url}/v1/chat/completions`, {
    model: 'a', stream: true, messages: [{ role: 'user', content: 'hello' }], max_tokens: 50,
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-rolter-route'), 'a');
  assert.equal(res.headers.get('x-rolter-fallbacks'), null);
  assert.equal(res.headers.get('x-rolter-attempts'), '1');
  const { text } = await readAll(res);
  assert.match(text, /\n\ndata: \{"error":\{"message":"upstream failed mid-stream[^\n]*"code":"upstream_error","request_id":"[^"]+"\}\}\n\n$/);
  assert.equal((text.match(/"chat\.completion\.chunk"/g) ?? []).length, 3);
  assert.deepEqual(await requestsPerEngine(sim), [1, 0], "the fallback route's engine saw no request");
});

test('max_fallbacks = 1: a and b down, c is not tried; the error names a and b', async (t) => {
  const { sim, rolter } = await startFleet(t, {
    engines: 3,
    config: (engines) => fallbackConfig(engines, [
      { name: 'a', engines: [0], fallbacks: ['b', 'c'] },
      { name: 'b', engines: [1], fallbacks: ['c'] },
      { name: 'c', engines: [2] },
    ], { retry: { max_fallbacks: 1 } }),
  });
  await sim.setFault(0, { refuse: true });
  await sim.setFault(1, { refuse: true });
  const r = await askOnce(rolter, 'a');
  assert.equal(r.status, 502, r.text);
  assert.equal(r.fallbacks, 'a,b');
  assert.equal(r.route, undefined, 'no route answered');
  assert.equal(r.attempts, 2);
  const message = r.json.error.message;
  assert.match(message, /route 'a': all 1 attempts failed: engine-0\/up: connect: Connection refused/);
  assert.match(message, /route 'b': all 1 attempts failed: engine-1\/up: connect: Connection refused/);
  assert.doesNotMatch(message, /route 'c'/);
  assert.deepEqual(await requestsPerEngine(sim), [0, 0, 0], 'c was not tried');
  await rolter.log.waitFor(/"event":"request",[^\n]*"route":"a","fallbacks":"a,b","target":"none","attempts":2,"status":502/,
    { timeoutMs: 5000 });
});

test('the default max_fallbacks (2) goes on to c, the second route of the list', async (t) => {
  const { sim, rolter } = await startFleet(t, {
    engines: 3,
    config: (engines) => fallbackConfig(engines, [
      { name: 'a', engines: [0], fallbacks: ['b', 'c'] },
      { name: 'b', engines: [1] },
      { name: 'c', engines: [2] },
    ]),
  });
  await sim.setFault(0, { refuse: true });
  await sim.setFault(1, { refuse: true });
  const r = await askOnce(rolter, 'a');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.engine, 2);
  assert.equal(r.route, 'c');
  assert.equal(r.fallbacks, 'a,b');
  assert.equal(r.attempts, 3);
  assert.deepEqual(await requestsPerEngine(sim), [0, 0, 1]);
});

test('rolter check refuses a fallback loop with its file:line', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-fallback-'));
  try {
    const file = path.join(dir, 'rolter.toml');
    writeFileSync(file, fallbackConfig([{ url: 'http://127.0.0.1:9' }], [
      { name: 'a', engines: [0], fallbacks: ['b'] },
      { name: 'b', engines: [0], fallbacks: ['a'] },
    ]));
    const lineOf = readFileSync(file, 'utf8').split('\n').findIndex((l) => l === 'fallbacks = ["a"]') + 1;
    assert.ok(lineOf > 0);
    const { code, output } = await new Promise((resolve) => {
      execFile(path.join(binDir, 'rolter'), ['check', '--config', file], { timeout: 10000 },
        (error, stdout, stderr) => resolve({ code: error ? error.code : 0, output: stdout + stderr }));
    });
    assert.equal(code, 1, `exit code; output:\n${output}`);
    assert.match(output, /fallbacks form a loop: (a -> b -> a|b -> a -> b)/);
    assert.ok(output.includes(`${file}:${lineOf}`) || output.includes(`rolter.toml:${lineOf}`),
      `the error names the file and line ${lineOf}:\n${output}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
