// The gateway against a real rolter-sim fleet on loopback: every endpoint, model rewriting,
// round-robin, retry onto another engine, cancellation on client disconnect, and reloads.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startSim } from '../lib/sim.mjs';
import { startRolter, configFor, readSse } from '../lib/rolter.mjs';

let sim;
let rolter;

const UPSTREAM = 'Qwen/Qwen3-8B';

function baseConfig(engines, extraRoutes = []) {
  return configFor({
    engines,
    routes: [
      { name: 'qwen3', strategy: 'round_robin', targets: engines.map((_, i) => ({ engine: i, model: UPSTREAM })) },
      { name: 'pair', strategy: 'round_robin', targets: [{ engine: 0, model: 'pair-0' }, { engine: 1, model: 'pair-1' }] },
      ...extraRoutes,
    ],
  });
}

async function post(path, body, headers = {}) {
  return fetch(`${rolter.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

before(async () => {
  sim = await startSim({ engines: 3, args: ['--ttft-ms', '5', '--token-ms', '2'] });
  rolter = await startRolter({ config: baseConfig(sim.engines) });
});

after(async () => {
  await rolter?.stop();
  await sim?.stop();
});

test('non-streaming chat is relayed with target headers and the upstream model', async () => {
  const res = await post('/v1/chat/completions', {
    model: 'qwen3', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 4,
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-rolter-target'), `engine-${res.headers.get('x-sim-engine')}/${UPSTREAM}`);
  assert.equal(res.headers.get('x-rolter-attempts'), '1');
  const body = await res.json();
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.model, UPSTREAM, 'the engine received the rewritten model');
  assert.equal(body.usage.completion_tokens, 4);
  const stats = await sim.stats(Number(res.headers.get('x-sim-engine')));
  assert.equal(stats.last_model, UPSTREAM);
  assert.deepEqual(stats.last_body.messages, [{ role: 'user', content: 'hello there' }],
    'the rest of the body arrives unchanged');
});

test('streaming chat arrives as SSE events, with a usage chunk and [DONE]', async () => {
  const res = await post('/v1/chat/completions', {
    model: 'qwen3', stream: true, stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'stream please' }], max_tokens: 5,
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /text\/event-stream/);
  const events = await readSse(res);
  assert.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
  const text = chunks.flatMap((c) => c.choices ?? []).map((c) => c.delta?.content ?? '').join('');
  assert.ok(text.length > 0);
  assert.ok(chunks.every((c) => c.model === UPSTREAM));
  const usage = chunks.find((c) => c.usage);
  assert.equal(usage.usage.completion_tokens, 5);
});

test('completions with a text prompt and with a token-array prompt', async () => {
  const text = await post('/v1/completions', { model: 'qwen3', prompt: 'once upon', max_tokens: 3 });
  assert.equal(text.status, 200);
  const textBody = await text.json();
  assert.equal(textBody.object, 'text_completion');
  assert.equal(textBody.model, UPSTREAM);

  const tokens = await post('/v1/completions', { model: 'qwen3', prompt: [11, 22, 33, 44], max_tokens: 3 });
  assert.equal(tokens.status, 200);
  const tokensBody = await tokens.json();
  assert.equal(tokensBody.usage.prompt_tokens, 4);
  const stats = await sim.stats(Number(tokens.headers.get('x-sim-engine')));
  assert.deepEqual(stats.last_body.prompt, [11, 22, 33, 44]);
});

test('embeddings, responses, messages and models', async () => {
  const emb = await post('/v1/embeddings', { model: 'qwen3', input: 'embed me' });
  assert.equal(emb.status, 200);
  const embBody = await emb.json();
  assert.equal(embBody.object, 'list');
  assert.ok(Array.isArray(embBody.data[0].embedding));

  const resp = await post('/v1/responses', { model: 'qwen3', input: 'respond', max_output_tokens: 3 });
  assert.equal(resp.status, 200);
  const respBody = await resp.json();
  assert.equal(respBody.object, 'response');
  assert.equal(respBody.model, UPSTREAM);

  const msg = await post('/v1/messages', {
    model: 'qwen3', max_tokens: 3, messages: [{ role: 'user', content: 'hi claude' }],
  }, { 'anthropic-version': '2023-06-01' });
  assert.equal(msg.status, 200);
  const msgBody = await msg.json();
  assert.equal(msgBody.type, 'message');
  assert.equal(msgBody.model, UPSTREAM);
  const stats = await sim.stats(Number(msg.headers.get('x-sim-engine')));
  assert.equal(stats.last_headers['anthropic-version'], '2023-06-01', 'client headers are forwarded');

  const models = await fetch(`${rolter.url}/v1/models`);
  assert.equal(models.status, 200);
  const list = await models.json();
  assert.equal(list.object, 'list');
  assert.deepEqual(list.data.map((m) => m.id), ['qwen3', 'pair']);
});

test('each target gets its own upstream model', async () => {
  const seen = new Map();
  for (let i = 0; i < 4; i++) {
    const res = await post('/v1/chat/completions', { model: 'pair', messages: [{ role: 'user', content: 'x' }], max_tokens: 1 });
    const body = await res.json();
    seen.set(res.headers.get('x-rolter-target'), body.model);
  }
  assert.deepEqual(Object.fromEntries(seen), { 'engine-0/pair-0': 'pair-0', 'engine-1/pair-1': 'pair-1' });
});

test('round_robin alternates across engines', async () => {
  const targets = [];
  for (let i = 0; i < 9; i++) {
    const res = await post('/v1/chat/completions', { model: 'qwen3', messages: [{ role: 'user', content: 'rr' }], max_tokens: 1 });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    targets.push(res.headers.get('x-rolter-target'));
  }
  // A shared counter: every window of three consecutive picks covers all three engines.
  for (let i = 0; i + 3 <= targets.length; i++) {
    assert.equal(new Set(targets.slice(i, i + 3)).size, 3, `picks ${targets.join(', ')}`);
  }
});

test('an engine refusing connections is retried onto another one', async () => {
  await sim.setFault(1, { refuse: true });
  try {
    let retried = 0;
    for (let i = 0; i < 6; i++) {
      const res = await post('/v1/chat/completions', { model: 'qwen3', messages: [{ role: 'user', content: 'retry' }], max_tokens: 1 });
      assert.equal(res.status, 200, await res.clone().text());
      await res.arrayBuffer();
      assert.notEqual(res.headers.get('x-sim-engine'), '1');
      if (res.headers.get('x-rolter-attempts') === '2') retried++;
    }
    assert.ok(retried >= 1, 'round robin must have landed on the refusing engine and moved on');
  } finally {
    await sim.clearFault(1);
  }
});

test('a retryable status moves the request to another engine', async () => {
  await sim.setFault(2, { error_rate: 1, error_status: 503 });
  try {
    for (let i = 0; i < 6; i++) {
      const res = await post('/v1/chat/completions', { model: 'qwen3', messages: [{ role: 'user', content: 'x' }], max_tokens: 1 });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      assert.notEqual(res.headers.get('x-sim-engine'), '2');
    }
  } finally {
    await sim.clearFault(2);
  }
});

test('a client that disconnects mid-stream cancels the upstream request', async () => {
  await sim.reset();
  const res = await post('/v1/chat/completions', {
    model: 'qwen3', stream: true, messages: [{ role: 'user', content: 'long story' }], max_tokens: 5000,
  }, {});
  assert.equal(res.status, 200);
  const engine = Number(res.headers.get('x-sim-engine'));
  const reader = res.body.getReader();
  await reader.read(); // the stream is flowing
  await reader.cancel(); // closes the connection to rolter
  const deadline = Date.now() + 5000;
  let stats;
  do {
    stats = await sim.stats(engine);
    if (stats.cancelled >= 1) break;
    await new Promise((r) => setTimeout(r, 25));
  } while (Date.now() < deadline);
  assert.equal(stats.cancelled, 1, JSON.stringify(stats));
  assert.equal(stats.completed ?? 0, 0);
});

test('bad input gets a clear JSON error and the gateway keeps serving', async () => {
  const cases = [
    { body: '{"model": "qwen3", "messages": [', status: 400, code: 'invalid_json' },
    { body: '{"messages": []}', status: 400, code: 'missing_model' },
    { body: '{"model": "no-such-model", "messages": []}', status: 404, code: 'model_not_found' },
    { body: '{"model": "qwen3", "prompt": "x"}', status: 400, code: 'bad_token_ids', headers: { 'x-rolter-vllm-token-ids': '1,2,,3' } },
  ];
  for (const c of cases) {
    const res = await post('/v1/completions', c.body, c.headers);
    assert.equal(res.status, c.status, c.body);
    const body = await res.json();
    assert.equal(body.error.code, c.code);
    assert.equal(typeof body.error.message, 'string');
    assert.ok(body.error.type);
  }
  const anthropic = await post('/v1/messages', '{"model": "nope", "max_tokens": 1, "messages": []}');
  assert.equal(anthropic.status, 404);
  const anthropicBody = await anthropic.json();
  assert.equal(anthropicBody.type, 'error');
  assert.equal(anthropicBody.error.type, 'not_found_error');

  const ok = await post('/v1/chat/completions', { model: 'qwen3', messages: [{ role: 'user', content: 'still here' }], max_tokens: 1 });
  assert.equal(ok.status, 200);
});

test('Expect: 100-continue is answered before the body is sent', async () => {
  const body = JSON.stringify({ model: 'qwen3', messages: [{ role: 'user', content: 'y'.repeat(2000) }], max_tokens: 1 });
  const socket = net.connect(rolter.port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let received = '';
  socket.setEncoding('utf8');
  const waitFor = (pattern) => new Promise((resolve) => {
    const check = () => { if (pattern.test(received)) { socket.off('data', onData); resolve(); } };
    const onData = (chunk) => { received += chunk; check(); };
    socket.on('data', onData);
    check();
  });
  socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`);
  // Nothing but the interim response can arrive before the body is sent.
  await waitFor(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
  socket.write(body);
  await waitFor(/HTTP\/1\.1 200 OK[\s\S]*"chat\.completion"/);
  socket.destroy();
});

test('a body over max_body_bytes is refused with 413', async () => {
  const small = await startRolter({
    config: baseConfig(sim.engines).replace('[server]\n', '[server]\nmax_body_bytes = 1024\n'),
  });
  try {
    const res = await fetch(`${small.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'qwen3', messages: [{ role: 'user', content: 'x'.repeat(4096) }] }),
    });
    assert.equal(res.status, 413);
    assert.match((await res.json()).error.message, /max_body_bytes/);
    const ok = await fetch(`${small.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'qwen3', messages: [{ role: 'user', content: 'fits' }], max_tokens: 1 }),
    });
    assert.equal(ok.status, 200);
  } finally {
    await small.stop();
  }
});

test('API keys: missing or wrong key is 401, the right key passes', async () => {
  const keyed = await startRolter({
    config: baseConfig(sim.engines) + '\n[[keys]]\nname = "team-a"\nkey_env = "ROLTER_TEST_KEY"\n',
    env: { ROLTER_TEST_KEY: 'sk-right' },
  });
  try {
    const body = JSON.stringify({ model: 'qwen3', messages: [{ role: 'user', content: 'x' }], max_tokens: 1 });
    const ask = (headers) => fetch(`${keyed.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body,
    });
    const missing = await ask({});
    assert.equal(missing.status, 401);
    assert.match((await missing.json()).error.message, /missing API key/);
    const wrong = await ask({ authorization: 'Bearer sk-wrong' });
    assert.equal(wrong.status, 401);
    assert.equal((await wrong.json()).error.code, 'invalid_api_key');
    const right = await ask({ authorization: 'Bearer sk-right' });
    assert.equal(right.status, 200);
    const anthropicStyle = await ask({ 'x-api-key': 'sk-right' });
    assert.equal(anthropicStyle.status, 200);
    const models = await fetch(`${keyed.url}/v1/models`);
    assert.equal(models.status, 401);
  } finally {
    await keyed.stop();
  }
});

test('a reload adds a route without a restart; a broken config keeps the old one', async () => {
  const own = await startRolter({ config: baseConfig(sim.engines) });
  try {
    const ask = (model) => fetch(`${own.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }], max_tokens: 1 }),
    });
    assert.equal((await ask('added')).status, 404);

    let mark = own.log.text.length;
    own.writeConfig(baseConfig(sim.engines, [{ name: 'added', strategy: 'random', targets: [{ engine: 2, model: 'added-model' }] }]));
    await own.log.waitFor(/config reloaded \(file changed\): version 2/, { from: mark });
    const added = await ask('added');
    assert.equal(added.status, 200);
    assert.equal((await added.json()).model, 'added-model');

    // A broken file: an unknown strategy and an unknown key. Both are reported; nothing changes.
    mark = own.log.text.length;
    const broken = baseConfig(sim.engines, [{ name: 'added', strategy: 'no_such_strategy', targets: [{ engine: 2, model: 'x' }] }])
      + '\n[retry]\nmax_attempts = 2\nbogus_key = 1\n';
    own.writeConfig(broken);
    await own.log.waitFor(/config reload failed \(file changed\): 2 error\(s\)/, { from: mark });
    const logged = own.log.text.slice(mark);
    assert.match(logged, /rolter\.toml:\d+:\d+: routes\[2\]\.strategy: .*no_such_strategy/);
    assert.match(logged, /rolter\.toml:\d+:\d+: retry\.bogus_key: unknown key/);
    assert.equal((await ask('added')).status, 200, 'the old snapshot still serves');

    // SIGHUP reloads on demand as well.
    mark = own.log.text.length;
    own.signal('SIGHUP');
    await own.log.waitFor(/config reload failed \(SIGHUP\)/, { from: mark });
    assert.equal((await ask('qwen3')).status, 200);
  } finally {
    await own.stop();
  }
});

test('SIGTERM drains: a stream in flight finishes, then rolter exits 0', async () => {
  const own = await startRolter({ config: baseConfig(sim.engines) });
  const res = await fetch(`${own.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'qwen3', stream: true, messages: [{ role: 'user', content: 'x' }], max_tokens: 100 }),
  });
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  await reader.read();
  own.signal('SIGTERM');
  let text = '';
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value);
  }
  assert.match(text, /data: \[DONE\]/);
  const { code } = await own.exited;
  assert.equal(code, 0);
  await own.stop();
});
