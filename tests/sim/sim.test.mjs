// Integration tests of rolter-sim: real processes on loopback, ephemeral ports.
//   ROLTER_BIN_DIR=build-sim/bin node --test tests/sim/
// Each test starts its own simulator (freshSim), so no test depends on another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSimFor } from '../lib/sim.mjs';
import { fetchWithin, parseSse } from '../lib/http.mjs';

// Engines by role within each test's simulator.
const PLAIN = 0;   // normal traffic
const FAULTY = 1;  // faults switched on and off
const POOLED = 2;  // refuse with a pooled keep-alive connection
const FRESH = 3;   // refuse before any connection was made

// A fresh simulator per test (startSimFor checks its clean exit when the test ends).
const freshSim = (t) => startSimFor(t, {
    engines: 4,
    args: ['--seed', '7', '--ttft-ms', '2', '--token-ms', '2', '--model', 'sim-model'],
  });

const url = (sim, i, path) => `${sim.engines[i].url}${path}`;

// Every request has a deadline (fetchWithin) unless init brings its own signal.
function post(sim, i, path, body, headers = {}, init = {}) {
  return fetchWithin(url(sim, i, path), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
}

// Reads a streamed body until it ends or breaks; returns the text and the error, if any.
async function readUntilEnd(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, error: null };
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    return { text, error };
  }
}

// Polls `probe` until it returns a truthy value or the deadline passes.
async function eventually(probe, { timeoutMs = 5000, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await probe();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

const chatBody = (extra = {}) => ({
  model: 'gateway-rewritten',
  messages: [
    { role: 'system', content: 'you are terse' },
    { role: 'user', content: 'say five words please' },
  ],
  ...extra,
});

test('models, health and metrics', async (t) => {
  const sim = await freshSim(t);
  const models = await fetchWithin(url(sim, PLAIN, '/v1/models'));
  assert.equal(models.status, 200);
  assert.equal(models.headers.get('x-sim-engine'), '0');
  const list = await models.json();
  assert.equal(list.object, 'list');
  assert.deepEqual(list.data.map((m) => m.id), ['sim-model']);

  const health = await fetchWithin(url(sim, PLAIN, '/health'));
  assert.equal(health.status, 200);
  await health.arrayBuffer();

  const metrics = await (await fetchWithin(url(sim, PLAIN, '/metrics'))).text();
  for (const name of [
    'vllm:num_requests_running',
    'vllm:num_requests_waiting',
    'vllm:gpu_cache_usage_perc',
    'vllm:prefix_cache_hits_total',
    'vllm:prefix_cache_queries_total',
  ]) {
    assert.match(metrics, new RegExp(`^${name}\\{model_name="sim-model"\\} 0$`, 'm'));
  }
});

test('non-streaming chat echoes the model and reports usage', async (t) => {
  const sim = await freshSim(t);
  const res = await post(sim, PLAIN, '/v1/chat/completions', chatBody({ max_tokens: 6 }), {
    'x-test': 'hello',
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-sim-engine'), '0');
  const body = await res.json();
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.model, 'gateway-rewritten');
  assert.equal(body.choices[0].message.role, 'assistant');
  assert.equal(body.choices[0].message.content.split(' ').length, 6);
  assert.equal(body.choices[0].finish_reason, 'length');
  assert.deepEqual(body.usage, {
    prompt_tokens: 7,
    completion_tokens: 6,
    total_tokens: 13,
    prompt_tokens_details: { cached_tokens: 0 },
  });

  const stats = await (await fetchWithin(url(sim, PLAIN, '/sim/stats'))).json();
  assert.equal(stats.engine, 0);
  assert.equal(stats.last_model, 'gateway-rewritten');
  assert.equal(stats.last_body.max_tokens, 6);
  assert.equal(stats.last_headers['x-test'], 'hello');
  assert.ok(stats.by_path['/v1/chat/completions'] >= 1);
});

test('max tokens default, and the same prompt gives the same text on every engine', async (t) => {
  const sim = await freshSim(t);
  const a = await (await post(sim, PLAIN, '/v1/chat/completions', chatBody())).json();
  const b = await (await post(sim, FAULTY, '/v1/chat/completions', chatBody())).json();
  assert.equal(a.usage.completion_tokens, 16);
  assert.equal(a.choices[0].finish_reason, 'stop');
  assert.equal(a.choices[0].message.content, b.choices[0].message.content);
});

test('streaming chat: one chunk per token, usage chunk, [DONE]', async (t) => {
  const sim = await freshSim(t);
  const res = await post(
    sim,
    PLAIN,
    '/v1/chat/completions',
    chatBody({ stream: true, stream_options: { include_usage: true }, max_tokens: 5 }),
  );
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/event-stream/);
  assert.equal(res.headers.get('x-sim-engine'), '0');
  const events = parseSse(await res.text());
  assert.equal(events.length, 5 + 3);
  const tokens = events.slice(0, 5);
  assert.equal(tokens[0].data.choices[0].delta.role, 'assistant');
  for (const e of tokens) {
    assert.equal(e.data.object, 'chat.completion.chunk');
    assert.equal(e.data.model, 'gateway-rewritten');
    assert.equal(e.data.choices[0].finish_reason, null);
  }
  assert.equal(events[5].data.choices[0].finish_reason, 'length');
  assert.deepEqual(events[6].data.choices, []);
  assert.equal(events[6].data.usage.completion_tokens, 5);
  assert.equal(events[6].data.usage.prompt_tokens, 7);
  assert.equal(events[7].data, '[DONE]');

  const whole = await (await post(sim, PLAIN, '/v1/chat/completions', chatBody({ max_tokens: 5 }))).json();
  assert.equal(tokens.map((e) => e.data.choices[0].delta.content).join(''), whole.choices[0].message.content);
});

test('streaming chat without include_usage has no usage chunk', async (t) => {
  const sim = await freshSim(t);
  const res = await post(sim, PLAIN, '/v1/chat/completions', chatBody({ stream: true, max_tokens: 3 }));
  const events = parseSse(await res.text());
  assert.equal(events.length, 3 + 2);
  assert.ok(events.every((e) => e.data === '[DONE]' || !e.data.usage));
});

test('completions with a token-array prompt, streaming and not', async (t) => {
  const sim = await freshSim(t);
  const body = { model: 'm-comp', prompt: [101, 102, 103, 104, 105], max_tokens: 4 };
  const res = await post(sim, PLAIN, '/v1/completions', body);
  assert.equal(res.status, 200);
  const json = await res.json();
  assert.equal(json.object, 'text_completion');
  assert.equal(json.model, 'm-comp');
  assert.equal(json.usage.prompt_tokens, 5);
  assert.equal(json.usage.completion_tokens, 4);

  const stream = await post(sim, PLAIN, '/v1/completions', {
    ...body,
    stream: true,
    stream_options: { include_usage: true },
  });
  const events = parseSse(await stream.text());
  assert.equal(events.length, 4 + 3);
  assert.equal(events.slice(0, 4).map((e) => e.data.choices[0].text).join(''), json.choices[0].text);
  assert.equal(events[5].data.usage.prompt_tokens, 5);
  assert.equal(events.at(-1).data, '[DONE]');
});

test('embeddings', async (t) => {
  const sim = await freshSim(t);
  const res = await post(sim, PLAIN, '/v1/embeddings', { model: 'emb', input: ['one two', 'three'] });
  assert.equal(res.status, 200);
  const json = await res.json();
  assert.equal(json.object, 'list');
  assert.equal(json.model, 'emb');
  assert.equal(json.data.length, 2);
  assert.equal(json.data[1].index, 1);
  assert.equal(json.data[0].embedding.length, 16);
  assert.equal(json.usage.prompt_tokens, 3);
});

test('responses API, streaming and not', async (t) => {
  const sim = await freshSim(t);
  const body = { model: 'resp-model', input: 'tell me a story', max_output_tokens: 4 };
  const json = await (await post(sim, PLAIN, '/v1/responses', body)).json();
  assert.equal(json.object, 'response');
  assert.equal(json.model, 'resp-model');
  assert.equal(json.status, 'incomplete', 'the output ran to max_output_tokens');
  assert.equal(json.output[0].content[0].type, 'output_text');
  assert.equal(json.usage.input_tokens, 4);
  assert.equal(json.usage.output_tokens, 4);

  const res = await post(sim, PLAIN, '/v1/responses', { ...body, stream: true });
  const events = parseSse(await res.text());
  const types = events.map((e) => e.event);
  assert.equal(types[0], 'response.created');
  assert.equal(types.at(-1), 'response.incomplete');
  const deltas = events.filter((e) => e.event === 'response.output_text.delta');
  assert.equal(deltas.length, 4);
  assert.equal(deltas.map((e) => e.data.delta).join(''), json.output[0].content[0].text);
  assert.equal(events.at(-1).data.response.usage.output_tokens, 4);
  events.forEach((e, i) => assert.equal(e.data.sequence_number, i));
});

test('messages API (Anthropic), streaming and not', async (t) => {
  const sim = await freshSim(t);
  const body = {
    model: 'claude-ish',
    max_tokens: 3,
    system: 'be kind',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi there' }] }],
  };
  const json = await (await post(sim, PLAIN, '/v1/messages', body)).json();
  assert.equal(json.type, 'message');
  assert.equal(json.model, 'claude-ish');
  assert.equal(json.content[0].type, 'text');
  assert.equal(json.stop_reason, 'max_tokens');
  assert.equal(json.usage.input_tokens, 4);
  assert.equal(json.usage.output_tokens, 3);

  const res = await post(sim, PLAIN, '/v1/messages', { ...body, stream: true });
  const events = parseSse(await res.text());
  assert.deepEqual(
    events.map((e) => e.event),
    [
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ],
  );
  for (const e of events) assert.equal(e.data.type, e.event);
  assert.equal(events[0].data.message.model, 'claude-ish');
  const text = events.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta.text);
  assert.equal(text.join(''), json.content[0].text);
  assert.equal(events[6].data.usage.output_tokens, 3);
});

test('bad requests get 400 in the API shape, unknown paths 404', async (t) => {
  const sim = await freshSim(t);
  const bad = await post(sim, PLAIN, '/v1/chat/completions', '{"model": ');
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.type, 'invalid_request_error');

  const noMessages = await post(sim, PLAIN, '/v1/chat/completions', { model: 'x' });
  assert.equal(noMessages.status, 400);
  await noMessages.arrayBuffer();

  const anthropic = await post(sim, PLAIN, '/v1/messages', 'nope');
  assert.equal(anthropic.status, 400);
  const a = await anthropic.json();
  assert.equal(a.type, 'error');
  assert.equal(a.error.type, 'invalid_request_error');

  const missing = await fetchWithin(url(sim, PLAIN, '/v2/nothing'));
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get('x-sim-engine'), '0');
  await missing.arrayBuffer();

  const wrongMethod = await fetchWithin(url(sim, PLAIN, '/v1/chat/completions'));
  assert.equal(wrongMethod.status, 405);
  await wrongMethod.arrayBuffer();
});

test('stats reset', async (t) => {
  const sim = await freshSim(t);
  await (await post(sim, PLAIN, '/v1/chat/completions', chatBody({ max_tokens: 1 }))).arrayBuffer();
  const reset = await (await fetchWithin(url(sim, PLAIN, '/sim/reset'), { method: 'POST' })).json();
  assert.equal(reset.requests, 0);
  assert.deepEqual(reset.by_path, {});
  const viaControl = await sim.stats(PLAIN);
  assert.equal(viaControl.requests, 0);
  assert.equal(viaControl.completed, 0);
});

test('refuse: connects fail with ECONNREFUSED, then work after clear', async (t) => {
  const sim = await freshSim(t);
  const faults = await sim.setFault(FRESH, { refuse: true });
  assert.equal(faults.refuse, true);
  await assert.rejects(fetchWithin(url(sim, FRESH, '/health')), (err) => {
    assert.equal(err.cause?.code, 'ECONNREFUSED');
    return true;
  });
  const cleared = await sim.clearFault(FRESH);
  assert.equal(cleared.refuse, false);
  const res = await fetchWithin(url(sim, FRESH, '/health'));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-sim-engine'), String(FRESH));
  await res.arrayBuffer();
});

test('refuse also closes idle keep-alive connections', async (t) => {
  const sim = await freshSim(t);
  const warm = await post(sim, POOLED, '/v1/chat/completions', chatBody({ max_tokens: 1 }));
  assert.equal(warm.status, 200);
  await warm.arrayBuffer(); // the connection goes back to fetch's pool
  await sim.setFault(POOLED, { refuse: true });
  // Whether fetch notices the closed pooled connection first or connects anew, the request fails.
  await assert.rejects(post(sim, POOLED, '/v1/chat/completions', chatBody({ max_tokens: 1 })));
  await assert.rejects(fetchWithin(url(sim, POOLED, '/health')), (err) => err.cause?.code === 'ECONNREFUSED');
  await sim.clearFault(POOLED);
  const res = await post(sim, POOLED, '/v1/chat/completions', chatBody({ max_tokens: 1 }));
  assert.equal(res.status, 200);
  await res.arrayBuffer();
});

test('429 with Retry-After', async (t) => {
  const sim = await freshSim(t);
  await sim.setFault(FAULTY, { status_429_retry_after_s: 3 });
  try {
    for (let i = 0; i < 3; i++) {
      const res = await post(sim, FAULTY, '/v1/chat/completions', chatBody());
      assert.equal(res.status, 429);
      assert.equal(res.headers.get('retry-after'), '3');
      assert.equal(res.headers.get('x-sim-engine'), String(FAULTY));
      const body = await res.json();
      assert.equal(body.error.type, 'rate_limit_error');
    }
    const messages = await post(sim, FAULTY, '/v1/messages', { model: 'x', max_tokens: 1, messages: [] });
    assert.equal(messages.status, 429);
    assert.equal((await messages.json()).error.type, 'rate_limit_error');
  } finally {
    await sim.clearFault(FAULTY);
  }
  const ok = await post(sim, FAULTY, '/v1/chat/completions', chatBody());
  assert.equal(ok.status, 200);
  await ok.arrayBuffer();
});

test('error_rate 1.0 fails every request with error_status', async (t) => {
  const sim = await freshSim(t);
  await sim.reset(FAULTY);
  await sim.setFault(FAULTY, { error_rate: 1.0, error_status: 503 });
  try {
    for (let i = 0; i < 5; i++) {
      const res = await post(sim, FAULTY, '/v1/chat/completions', chatBody({ stream: true }));
      assert.equal(res.status, 503);
      const body = await res.json();
      assert.equal(body.error.type, 'server_error');
      assert.equal(typeof body.error.message, 'string');
    }
    const stats = await sim.stats(FAULTY);
    assert.equal(stats.requests, 5);
    assert.equal(stats.faulted, 5);
    assert.equal(stats.faults.error_rate, 1);
  } finally {
    await sim.clearFault(FAULTY);
  }
});

test('stall delays the first byte', async (t) => {
  const sim = await freshSim(t);
  await sim.setFault(FAULTY, { stall_first_byte_ms: 150 });
  try {
    const start = Date.now();
    const res = await post(sim, FAULTY, '/v1/chat/completions', chatBody({ max_tokens: 1 }));
    assert.ok(Date.now() - start >= 150, 'headers arrived before the stall ended');
    assert.equal(res.status, 200);
    await res.arrayBuffer();
  } finally {
    await sim.clearFault(FAULTY);
  }
});

test('/tokenize answers the ids the engine caches, counts its calls, and can stall', async (t) => {
  const sim = await freshSim(t);
  const messages = chatBody().messages;
  const res = await post(sim, PLAIN, '/tokenize', { model: 'sim-model', messages });
  assert.equal(res.status, 200);
  const chat = await res.json();
  // "you are terse" + "say five words please": one id per word, newline-joined like the template.
  assert.equal(chat.count, 7);
  assert.equal(chat.tokens.length, 7);
  assert.ok(chat.max_model_len > 0);
  const asPrompt = await (await post(sim, PLAIN, '/tokenize',
    { prompt: 'you are terse\nsay five words please' })).json();
  assert.deepEqual(asPrompt.tokens, chat.tokens);
  const ids = await (await post(sim, PLAIN, '/tokenize', { prompt: [3, 1, 2] })).json();
  assert.deepEqual(ids, { count: 3, max_model_len: chat.max_model_len, tokens: [3, 1, 2] });
  const bad = await post(sim, PLAIN, '/tokenize', { model: 'sim-model' });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.type, 'invalid_request_error');
  const stats = await sim.stats(PLAIN);
  assert.equal(stats.tokenize.requests, 4);
  assert.equal(stats.tokenize.rejected, 1);
  assert.equal(stats.requests, 0, '/tokenize is not an inference request');

  await sim.setFault(FAULTY, { tokenize_stall_ms: 150 });
  try {
    const start = Date.now();
    const stalled = await post(sim, FAULTY, '/tokenize', { prompt: 'a b' });
    assert.ok(Date.now() - start >= 150, 'answered before the stall ended');
    assert.equal(stalled.status, 200);
    assert.equal((await stalled.json()).count, 2);
    const chatStart = Date.now();
    const plain = await post(sim, FAULTY, '/v1/chat/completions', chatBody({ max_tokens: 1 }));
    await plain.arrayBuffer();
    assert.ok(Date.now() - chatStart < 150, 'the tokenize stall slowed an inference request');
  } finally {
    await sim.clearFault(FAULTY);
  }
});

test('drop mid-stream ends the stream early', async (t) => {
  const sim = await freshSim(t);
  await sim.reset(FAULTY);
  await sim.setFault(FAULTY, { drop_mid_stream_after_tokens: 3 });
  try {
    const res = await post(sim, FAULTY, '/v1/chat/completions', chatBody({ stream: true, max_tokens: 10 }));
    assert.equal(res.status, 200);
    const { text, error } = await readUntilEnd(res);
    assert.ok(error, 'the body should end with an error, not cleanly');
    const events = parseSse(text);
    assert.equal(events.length, 3);
    assert.ok(events.every((e) => e.data !== '[DONE]'));
    const stats = await sim.stats(FAULTY);
    assert.equal(stats.dropped, 1);
    assert.equal(stats.cancelled, 0);
  } finally {
    await sim.clearFault(FAULTY);
  }
});

test('a client that goes away mid-stream cancels the request', async (t) => {
  const sim = await freshSim(t);
  await sim.reset(PLAIN);
  const controller = new AbortController();
  // 2000 tokens at 2 ms each: far longer than the test takes.
  const res = await post(
    sim,
    PLAIN,
    '/v1/chat/completions',
    chatBody({ stream: true, max_tokens: 2000 }),
    {},
    { signal: controller.signal },
  );
  const reader = res.body.getReader();
  const first = await reader.read();
  assert.equal(first.done, false);
  const running = await sim.stats(PLAIN);
  assert.equal(running.in_flight, 1);

  controller.abort();
  await assert.rejects(
    (async () => {
      for (;;) if ((await reader.read()).done) return;
    })(),
    { name: 'AbortError' },
  );

  const stats = await eventually(
    async () => {
      const s = await sim.stats(PLAIN);
      return s.cancelled === 1 ? s : null;
    },
    { what: 'the engine to count the cancellation' },
  );
  assert.equal(stats.in_flight, 0);
  assert.equal(stats.completed, 0);
});

test('a client that goes away before a non-streaming answer cancels it', async (t) => {
  const sim = await freshSim(t);
  await sim.reset(PLAIN);
  const controller = new AbortController();
  const pending = fetchWithin(url(sim, PLAIN, '/v1/chat/completions'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatBody({ max_tokens: 2000 })),
    signal: controller.signal,
  }).catch((err) => err);
  await eventually(async () => (await sim.stats(PLAIN)).in_flight === 1, { what: 'the request to arrive' });
  controller.abort();
  assert.equal((await pending).name, 'AbortError');
  await eventually(async () => (await sim.stats(PLAIN)).cancelled === 1, {
    what: 'the engine to count the cancellation',
  });
});

test('faults set on the command line, and control API errors', async (t) => {
  const other = await startSimFor(t, {
    engines: 2,
    args: ['--time-scale', '0', '--fault', 'engine=1,refuse', '--fault', 'engine=0,error_rate=1,error_status=502'],
  });
  await assert.rejects(fetchWithin(`${other.engines[1].url}/health`), (err) => err.cause?.code === 'ECONNREFUSED');
  const res = await fetchWithin(`${other.engines[0].url}/v1/completions`, {
    method: 'POST',
    body: JSON.stringify({ prompt: 'x' }),
  });
  assert.equal(res.status, 502);
  await res.arrayBuffer();
  const all = await other.allStats();
  assert.equal(all.length, 2);
  assert.equal(all[1].faults.refuse, true);

  const bad = await fetchWithin(`${other.controlUrl}/faults/0`, { method: 'POST', body: '{"error_rate": 2}' });
  assert.equal(bad.status, 400);
  await bad.arrayBuffer();
  const unknown = await fetchWithin(`${other.controlUrl}/faults/9`);
  assert.equal(unknown.status, 404);
  await unknown.arrayBuffer();
});
