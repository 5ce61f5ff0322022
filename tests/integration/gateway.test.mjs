// The gateway against a real rolter-sim fleet on loopback: every endpoint, model rewriting,
// round-robin, retry onto another engine, cancellation on client disconnect, and reloads.
// Each test starts its own rolter-sim and rolter (startFleet), so no test depends on another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFleet, configFor } from '../lib/rolter.mjs';
import { chat, postJson, settle, fetchWithin, waitUntil } from '../lib/http.mjs';
import { openRaw } from '../lib/raw_client.mjs';

const UPSTREAM = 'Qwen/Qwen3-8B';

function baseConfig(engines, { extraRoutes = [], ...options } = {}) {
  return configFor({
    engines,
    routes: [
      { name: 'qwen3', strategy: 'round_robin', targets: engines.map((_, i) => ({ engine: i, model: UPSTREAM })) },
      { name: 'pair', strategy: 'round_robin', targets: [{ engine: 0, model: 'pair-0' }, { engine: 1, model: 'pair-1' }] },
      ...extraRoutes,
    ],
    ...options,
  });
}

// A fresh 3-engine fleet (5 ms to the first token, 2 ms per token) and a rolter over it.
function fleet(t, { config = (engines) => baseConfig(engines), env } = {}) {
  return startFleet(t, { engines: 3, simArgs: ['--ttft-ms', '5', '--token-ms', '2'], config, env });
}

async function requestsPerEngine(sim) {
  return (await sim.allStats()).map((s) => s.requests);
}

test('non-streaming chat is relayed with target headers and the upstream model', async (t) => {
  const { sim, rolter } = await fleet(t);
  const r = await chat(rolter.url, 'qwen3', { content: 'hello there', maxTokens: 4 });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.target, `engine-${r.engine}/${UPSTREAM}`);
  assert.equal(r.attempts, 1);
  assert.equal(r.json.object, 'chat.completion');
  assert.equal(r.json.model, UPSTREAM, 'the engine received the rewritten model');
  assert.equal(r.json.usage.completion_tokens, 4);
  const stats = await sim.stats(r.engine);
  assert.equal(stats.last_model, UPSTREAM);
  assert.deepEqual(stats.last_body.messages, [{ role: 'user', content: 'hello there' }],
    'the rest of the body arrives unchanged');
  assert.equal((await requestsPerEngine(sim)).reduce((a, b) => a + b), 1, 'one request, one upstream request');
});

test('streaming chat arrives as SSE events, with a usage chunk and [DONE]', async (t) => {
  const { rolter } = await fleet(t);
  const r = await chat(rolter.url, 'qwen3', { stream: true, content: 'stream please', maxTokens: 5 });
  assert.equal(r.status, 200, r.text);
  assert.match(r.headers.get('content-type'), /text\/event-stream/);
  assert.equal(r.events.at(-1), '[DONE]');
  const chunks = r.events.slice(0, -1).map((e) => JSON.parse(e));
  const text = chunks.flatMap((c) => c.choices ?? []).map((c) => c.delta?.content ?? '').join('');
  assert.ok(text.length > 0);
  assert.ok(chunks.every((c) => c.model === UPSTREAM));
  const usage = chunks.find((c) => c.usage);
  assert.equal(usage.usage.completion_tokens, 5);
});

test('completions with a text prompt and with a token-array prompt', async (t) => {
  const { sim, rolter } = await fleet(t);
  const text = await settle(await postJson(`${rolter.url}/v1/completions`, { model: 'qwen3', prompt: 'once upon', max_tokens: 3 }));
  assert.equal(text.status, 200, text.text);
  assert.equal(text.json.object, 'text_completion');
  assert.equal(text.json.model, UPSTREAM);

  const tokens = await settle(await postJson(`${rolter.url}/v1/completions`, { model: 'qwen3', prompt: [11, 22, 33, 44], max_tokens: 3 }));
  assert.equal(tokens.status, 200, tokens.text);
  assert.equal(tokens.json.usage.prompt_tokens, 4);
  const stats = await sim.stats(tokens.engine);
  assert.deepEqual(stats.last_body.prompt, [11, 22, 33, 44]);
});

test('embeddings, responses, messages and models', async (t) => {
  const { sim, rolter } = await fleet(t);
  const emb = await settle(await postJson(`${rolter.url}/v1/embeddings`, { model: 'qwen3', input: 'embed me' }));
  assert.equal(emb.status, 200, emb.text);
  assert.equal(emb.json.object, 'list');
  assert.ok(Array.isArray(emb.json.data[0].embedding));

  const resp = await settle(await postJson(`${rolter.url}/v1/responses`, { model: 'qwen3', input: 'respond', max_output_tokens: 3 }));
  assert.equal(resp.status, 200, resp.text);
  assert.equal(resp.json.object, 'response');
  assert.equal(resp.json.model, UPSTREAM);

  const msg = await settle(await postJson(`${rolter.url}/v1/messages`, {
    model: 'qwen3', max_tokens: 3, messages: [{ role: 'user', content: 'hi claude' }],
  }, { headers: { 'anthropic-version': '2023-06-01' } }));
  assert.equal(msg.status, 200, msg.text);
  assert.equal(msg.json.type, 'message');
  assert.equal(msg.json.model, UPSTREAM);
  const stats = await sim.stats(msg.engine);
  assert.equal(stats.last_headers['anthropic-version'], '2023-06-01', 'client headers are forwarded');
  assert.equal(stats.last_path, '/v1/chat/completions', 'Messages to an OpenAI-compatible engine is translated');

  const models = await settle(await fetchWithin(`${rolter.url}/v1/models`));
  assert.equal(models.status, 200, models.text);
  assert.equal(models.json.object, 'list');
  assert.deepEqual(models.json.data.map((m) => m.id), ['qwen3', 'pair']);
});

test('each target gets its own upstream model', async (t) => {
  const { sim, rolter } = await fleet(t);
  const seen = new Map();
  for (let i = 0; i < 4; i++) {
    const r = await chat(rolter.url, 'pair', { content: 'x' });
    assert.equal(r.status, 200, r.text);
    seen.set(r.target, r.json.model);
  }
  assert.deepEqual(Object.fromEntries(seen), { 'engine-0/pair-0': 'pair-0', 'engine-1/pair-1': 'pair-1' });
  assert.deepEqual(await requestsPerEngine(sim), [2, 2, 0], 'round robin over the two targets only');
  assert.equal((await sim.stats(0)).last_model, 'pair-0');
  assert.equal((await sim.stats(1)).last_model, 'pair-1');
});

test('round_robin alternates across engines', async (t) => {
  const { sim, rolter } = await fleet(t);
  const targets = [];
  for (let i = 0; i < 9; i++) {
    const r = await chat(rolter.url, 'qwen3', { content: 'rr' });
    assert.equal(r.status, 200, r.text);
    targets.push(r.target);
  }
  // A shared counter: every window of three consecutive picks covers all three engines.
  for (let i = 0; i + 3 <= targets.length; i++) {
    assert.equal(new Set(targets.slice(i, i + 3)).size, 3, `picks ${targets.join(', ')}`);
  }
  assert.deepEqual(await requestsPerEngine(sim), [3, 3, 3]);
});

// Sends six requests to `qwen3` (round robin over three engines, one of them failing) and checks
// that each was served once by a healthy engine, with x-rolter-attempts counting the detours.
async function sixRequestsAroundAFailingEngine(sim, rolter, failing) {
  const answers = [];
  for (let i = 0; i < 6; i++) {
    const r = await chat(rolter.url, 'qwen3', { content: 'retry' });
    assert.equal(r.status, 200, r.text);
    assert.notEqual(r.engine, failing);
    assert.ok(r.attempts === 1 || r.attempts === 2, `x-rolter-attempts ${r.attempts}`);
    answers.push(r);
  }
  const retried = answers.filter((r) => r.attempts === 2).length;
  // Round robin over three engines puts the failing one among the first three picks at least
  // once, and among six picks at most twice.
  assert.ok(retried >= 1 && retried <= 2, `${retried} retried request(s)`);
  const healthy = [0, 1, 2].filter((i) => i !== failing);
  const stats = await sim.allStats();
  assert.equal(stats[healthy[0]].completed + stats[healthy[1]].completed, 6, 'each request served exactly once');
  assert.equal(stats[healthy[0]].requests + stats[healthy[1]].requests, 6, 'no duplicate upstream requests');
  return { retried, failingStats: stats[failing] };
}

test('an engine refusing connections is retried onto another one', async (t) => {
  const { sim, rolter } = await fleet(t);
  await sim.setFault(1, { refuse: true });
  const { failingStats } = await sixRequestsAroundAFailingEngine(sim, rolter, 1);
  assert.equal(failingStats.requests, 0, 'a refused connection never reaches the engine');
});

test('a retryable status moves the request to another engine', async (t) => {
  const { sim, rolter } = await fleet(t);
  await sim.setFault(2, { error_rate: 1, error_status: 503 });
  const { retried, failingStats } = await sixRequestsAroundAFailingEngine(sim, rolter, 2);
  assert.equal(failingStats.requests, retried, 'every 503 cost exactly one retry');
  assert.equal(failingStats.faulted, retried);
});

test('a client that disconnects mid-stream cancels the upstream request', async (t) => {
  const { sim, rolter } = await fleet(t);
  const res = await postJson(`${rolter.url}/v1/chat/completions`, {
    model: 'qwen3', stream: true, messages: [{ role: 'user', content: 'long story' }], max_tokens: 5000,
  });
  assert.equal(res.status, 200);
  const engine = Number(res.headers.get('x-sim-engine'));
  const reader = res.body.getReader();
  await reader.read(); // the stream is flowing
  await reader.cancel(); // closes the connection to rolter
  const stats = await waitUntil(async () => {
    const s = await sim.stats(engine);
    return s.cancelled >= 1 ? s : null;
  }, { timeoutMs: 5000, what: `engine ${engine} to see the request cancelled` });
  assert.equal(stats.cancelled, 1, JSON.stringify(stats));
  assert.equal(stats.completed, 0);
  assert.equal(stats.requests, 1);
});

// The watch on a kept-alive connection: each request's wait stays queued after its answer, and the
// next request is watched by a wait of its own. A client that leaves during its third request,
// before any answer byte, still cancels that request at once. (It leaves with a reset: a FIN
// alone is a half-close, and a half-closed client still gets its answer.)
test('a kept-alive client that leaves during its third request cancels it at the engine', async (t) => {
  const { sim, rolter } = await fleet(t);
  const body = (maxTokens, content) => JSON.stringify({
    model: 'qwen3', messages: [{ role: 'user', content }], max_tokens: maxTokens,
  });
  const request = (b) => `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`;
  const conn = await openRaw(rolter.port);
  t.after(() => conn.destroy());
  conn.write(request(body(2, 'first')));
  await conn.waitForResponses(1);
  conn.write(request(body(2, 'second')));
  await conn.waitForResponses(2);
  const before = await sim.allStats();
  // Non-streamed and 5,000 tokens long (10 s of decoding): nothing is answered before it ends.
  conn.write(request(body(5000, 'third, long')));
  const engine = await waitUntil(async () => {
    const now = await sim.allStats();
    const i = now.findIndex((s, k) => s.requests > before[k].requests);
    return i >= 0 ? i : null;
  }, { timeoutMs: 5000, what: 'the third request to reach an engine' });
  conn.socket.resetAndDestroy();
  const stats = await waitUntil(async () => {
    const s = await sim.stats(engine);
    return s.cancelled > before[engine].cancelled ? s : null;
  }, { timeoutMs: 3000, what: `engine ${engine} to see the third request cancelled` });
  assert.equal(stats.cancelled - before[engine].cancelled, 1, JSON.stringify(stats));
  assert.equal(stats.completed, before[engine].completed, 'the long request never completed');
  const all = await sim.allStats();
  assert.equal(all.reduce((n, s) => n + s.requests, 0), 3, 'three requests, each sent once');
});

test('bad input gets a clear JSON error and the gateway keeps serving', async (t) => {
  const { sim, rolter } = await fleet(t);
  const cases = [
    { body: '{"model": "qwen3", "messages": [', status: 400, code: 'invalid_json' },
    { body: '{"messages": []}', status: 400, code: 'missing_model' },
    { body: '{"model": "no-such-model", "messages": []}', status: 404, code: 'model_not_found' },
    { body: '{"model": "qwen3", "prompt": "x"}', status: 400, code: 'bad_token_ids', headers: { 'x-rolter-vllm-token-ids': '1,2,,3' } },
  ];
  for (const c of cases) {
    const r = await settle(await postJson(`${rolter.url}/v1/completions`, c.body, { headers: c.headers }));
    assert.equal(r.status, c.status, c.body);
    assert.equal(r.json.error.code, c.code);
    assert.equal(typeof r.json.error.message, 'string');
    assert.ok(r.json.error.type);
  }
  const anthropic = await settle(await postJson(`${rolter.url}/v1/messages`, '{"model": "nope", "max_tokens": 1, "messages": []}'));
  assert.equal(anthropic.status, 404);
  assert.equal(anthropic.json.type, 'error');
  assert.equal(anthropic.json.error.type, 'not_found_error');
  assert.deepEqual(await requestsPerEngine(sim), [0, 0, 0], 'no refused request reached an engine');

  const ok = await chat(rolter.url, 'qwen3', { content: 'still here' });
  assert.equal(ok.status, 200, ok.text);
});

test('Expect: 100-continue is answered before the body is sent', async (t) => {
  const { sim, rolter } = await fleet(t);
  const body = JSON.stringify({ model: 'qwen3', messages: [{ role: 'user', content: 'y'.repeat(2000) }], max_tokens: 1 });
  const c = await openRaw(rolter.port);
  t.after(() => c.destroy());
  c.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`);
  // Nothing but the interim response can arrive before the body is sent.
  await c.waitFor(/^HTTP\/1\.1 100 Continue\r\n\r\n$/, { timeoutMs: 5000 });
  assert.deepEqual(await requestsPerEngine(sim), [0, 0, 0]);
  c.write(body);
  const responses = await c.waitForResponses(1, { timeoutMs: 5000 });
  assert.deepEqual(responses.map((r) => r.status), [100, 200]);
  assert.equal(JSON.parse(responses[1].body.toString('utf8')).object, 'chat.completion');
});

// A chat request body of exactly `size` bytes (the user message pads it).
function chatBodyOfSize(size) {
  const shell = { model: 'qwen3', messages: [{ role: 'user', content: '' }], max_tokens: 1 };
  const padding = size - Buffer.byteLength(JSON.stringify(shell));
  assert.ok(padding >= 0, `a ${size}-byte body cannot hold the request`);
  const body = JSON.stringify({ ...shell, messages: [{ role: 'user', content: 'x'.repeat(padding) }] });
  assert.equal(Buffer.byteLength(body), size);
  return { body, padding };
}

test('max_body_bytes: a body of exactly the limit is served, one byte more is 413', async (t) => {
  const limit = 1024;
  const { sim, rolter } = await fleet(t, { config: (engines) => baseConfig(engines, { server: { max_body_bytes: limit } }) });
  const cases = [
    { size: limit, status: 200 },
    { size: limit + 1, status: 413 },
    { size: 4 * limit, status: 413 },
    { size: 100, status: 200 },
  ];
  for (const c of cases) {
    const { body, padding } = chatBodyOfSize(c.size);
    const before = (await requestsPerEngine(sim)).reduce((a, b) => a + b);
    const r = await settle(await postJson(`${rolter.url}/v1/chat/completions`, body));
    assert.equal(r.status, c.status, `${c.size}-byte body: ${r.text}`);
    const after = (await requestsPerEngine(sim)).reduce((a, b) => a + b);
    if (c.status === 200) {
      assert.equal(r.json.object, 'chat.completion');
      assert.equal(after, before + 1);
      assert.equal((await sim.stats(r.engine)).last_body.messages[0].content.length, padding, 'the whole body arrived');
    } else {
      assert.match(r.json.error.message, /max_body_bytes/);
      assert.equal(after, before, 'a refused body never reaches an engine');
    }
  }
});

test('API keys: missing or wrong key is 401, the right key passes', async (t) => {
  const { rolter } = await fleet(t, {
    config: (engines) => baseConfig(engines, { keys: [{ name: 'team-a', key_env: 'ROLTER_TEST_KEY' }] }),
    env: { ROLTER_TEST_KEY: 'sk-right' },
  });
  const ask = (headers) => chat(rolter.url, 'qwen3', { content: 'x', headers });
  const missing = await ask({});
  assert.equal(missing.status, 401);
  assert.match(missing.json.error.message, /missing API key/);
  const wrong = await ask({ authorization: 'Bearer sk-wrong' });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.json.error.code, 'invalid_api_key');
  const right = await ask({ authorization: 'Bearer sk-right' });
  assert.equal(right.status, 200, right.text);
  const anthropicStyle = await ask({ 'x-api-key': 'sk-right' });
  assert.equal(anthropicStyle.status, 200, anthropicStyle.text);
  const models = await fetchWithin(`${rolter.url}/v1/models`);
  await models.arrayBuffer();
  assert.equal(models.status, 401);
});

test('a reload adds a route without a restart; a broken config keeps the old one', async (t) => {
  const { sim, rolter } = await fleet(t);
  const ask = (model) => chat(rolter.url, model, { content: 'x' });
  assert.equal((await ask('added')).status, 404);

  let mark = rolter.log.text.length;
  rolter.writeConfig(baseConfig(sim.engines, { extraRoutes: [{ name: 'added', strategy: 'random', targets: [{ engine: 2, model: 'added-model' }] }] }));
  await rolter.log.waitFor(/config reloaded \(file changed\): version 2/, { from: mark });
  const added = await ask('added');
  assert.equal(added.status, 200, added.text);
  assert.equal(added.json.model, 'added-model');
  assert.equal(added.engine, 2);

  // A broken file: an unknown strategy and an unknown key. Both are reported; nothing changes.
  mark = rolter.log.text.length;
  rolter.writeConfig(baseConfig(sim.engines, {
    extraRoutes: [{ name: 'added', strategy: 'no_such_strategy', targets: [{ engine: 2, model: 'x' }] }],
    retry: { max_attempts: 2, bogus_key: 1 },
  }));
  await rolter.log.waitFor(/config reload failed \(file changed\): 2 error\(s\)/, { from: mark });
  const logged = rolter.log.text.slice(mark);
  assert.match(logged, /rolter\.toml:\d+:\d+: routes\[2\]\.strategy: .*no_such_strategy/);
  assert.match(logged, /rolter\.toml:\d+:\d+: retry\.bogus_key: unknown key/);
  assert.equal((await ask('added')).status, 200, 'the old snapshot still serves');

  // SIGHUP reloads on demand as well.
  mark = rolter.log.text.length;
  rolter.signal('SIGHUP');
  await rolter.log.waitFor(/config reload failed \(SIGHUP\)/, { from: mark });
  assert.equal((await ask('qwen3')).status, 200);
});

test('SIGTERM drains: a stream in flight finishes, then rolter exits 0', async (t) => {
  const { sim, rolter } = await fleet(t);
  const res = await postJson(`${rolter.url}/v1/chat/completions`, {
    model: 'qwen3', stream: true, messages: [{ role: 'user', content: 'x' }], max_tokens: 100,
  });
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value, { stream: true });
  rolter.signal('SIGTERM');
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  assert.match(text, /data: \[DONE\]\n\n$/);
  const { code } = await rolter.waitForExit({ timeoutMs: 10000 });
  assert.equal(code, 0);
  assert.equal((await sim.allStats()).reduce((sum, s) => sum + s.completed, 0), 1, 'the stream completed upstream');
});
