// Fidelity of rolter-sim to real OpenAI-compatible engines (vLLM): n choices, batch prompts,
// embeddings encodings and dimensions, Expect: 100-continue, and incomplete Responses.
//   ROLTER_BIN_DIR=build-sim/bin node --test tests/sim/fidelity.test.mjs
// Each test starts its own simulator (freshSim), so no test depends on another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import OpenAI from 'openai';
import { startSimFor } from '../lib/sim.mjs';
import { parseSse } from '../lib/http.mjs';

// The engine's own output cap, below which a client's larger max_output_tokens is not reached.
const ENGINE_CAP = 32;
const REQUEST_TIMEOUT_MS = 10000;

// A fresh simulator per test (startSimFor checks its clean exit when the test ends).
const freshSim = (t) => startSimFor(t, {
    engines: 1,
    args: ['--seed', '11', '--time-scale', '0', '--max-tokens-cap', String(ENGINE_CAP)],
  });

const url = (sim, path) => `${sim.engines[0].url}${path}`;

function post(sim, path, body) {
  return fetch(url(sim, path), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
}

async function postJson(sim, path, body) {
  const res = await post(sim, path, body);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text);
}

async function stream(sim, path, body) {
  const res = await post(sim, path, { ...body, stream: true });
  assert.equal(res.status, 200);
  return parseSse(await res.text());
}

// Streamed chat/completions chunks gathered per choice index: its text and finish reasons.
function byChoice(events, chat) {
  const choices = new Map();
  for (const { data } of events) {
    if (data === '[DONE]') continue;
    for (const c of data.choices) {
      const entry = choices.get(c.index) ?? { text: '', finish: [] };
      entry.text += (chat ? c.delta.content : c.text) ?? '';
      if (c.finish_reason) entry.finish.push(c.finish_reason);
      choices.set(c.index, entry);
    }
  }
  return choices;
}

const CHAT = { model: 'm', messages: [{ role: 'user', content: 'pick a colour' }], max_tokens: 4 };
const COMPLETION = { model: 'm', prompt: 'once upon a time', max_tokens: 4 };

for (const [name, path, base, chat] of [
  ['chat', '/v1/chat/completions', CHAT, true],
  ['completions', '/v1/completions', COMPLETION, false],
]) {
  test(`${name}: n > 1 returns n choices, streaming and not`, async (t) => {
    const sim = await freshSim(t);
    const textOf = (choice) => (chat ? choice.message.content : choice.text);
    const one = await postJson(sim, path, base);
    const json = await postJson(sim, path, { ...base, n: 3 });
    assert.deepEqual(json.choices.map((c) => c.index), [0, 1, 2]);
    for (const c of json.choices) {
      assert.equal(textOf(c).split(' ').length, 4);
      assert.equal(c.finish_reason, 'length');
    }
    assert.equal(textOf(json.choices[0]), textOf(one.choices[0]), 'choice 0 is the n = 1 answer');
    assert.notEqual(textOf(json.choices[1]), textOf(json.choices[0]));
    assert.equal(json.usage.completion_tokens, 12);
    assert.equal(json.usage.prompt_tokens, one.usage.prompt_tokens);

    const events = await stream(sim, path, { ...base, n: 3, stream_options: { include_usage: true } });
    const choices = byChoice(events, chat);
    assert.deepEqual([...choices.keys()].sort(), [0, 1, 2]);
    for (const [index, { text, finish }] of choices) {
      assert.equal(text, textOf(json.choices[index]));
      assert.deepEqual(finish, ['length'], `choice ${index} finishes once`);
    }
    assert.equal(events.at(-2).data.usage.completion_tokens, 12);
    assert.equal(events.at(-1).data, '[DONE]');
  });
}

test('completions: a batch prompt gets n choices per prompt, indexed prompt * n + j', async (t) => {
  const sim = await freshSim(t);
  for (const [prompts, promptTokens] of [
    [['one two', 'three four five'], 5],
    [[[1, 2], [3, 4, 5]], 5],
  ]) {
    const singles = [];
    for (const p of prompts) singles.push(await postJson(sim, '/v1/completions', { ...COMPLETION, prompt: p }));
    const json = await postJson(sim, '/v1/completions', { ...COMPLETION, prompt: prompts, n: 2 });
    assert.deepEqual(json.choices.map((c) => c.index), [0, 1, 2, 3]);
    assert.equal(json.choices[0].text, singles[0].choices[0].text);
    assert.equal(json.choices[2].text, singles[1].choices[0].text);
    assert.equal(json.usage.prompt_tokens, promptTokens);
    assert.equal(json.usage.completion_tokens, 16);

    const events = await stream(sim, '/v1/completions', { ...COMPLETION, prompt: prompts, n: 2 });
    const choices = byChoice(events, false);
    assert.equal(choices.size, 4);
    for (const [index, { text, finish }] of choices) {
      assert.equal(text, json.choices[index].text);
      assert.deepEqual(finish, ['length']);
    }
  }
});

// The little-endian float32 values of a base64 embedding.
function decodeFloats(b64) {
  const bytes = Buffer.from(b64, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}

test('embeddings: encoding_format base64 is little-endian float32, float stays numbers', async (t) => {
  const sim = await freshSim(t);
  const input = ['alpha beta', 'gamma'];
  const floats = await postJson(sim, '/v1/embeddings', { model: 'e', input, encoding_format: 'float' });
  const base64 = await postJson(sim, '/v1/embeddings', { model: 'e', input, encoding_format: 'base64' });
  assert.equal(base64.data.length, 2);
  for (let i = 0; i < 2; i++) {
    assert.equal(typeof base64.data[i].embedding, 'string');
    assert.ok(Array.isArray(floats.data[i].embedding));
    assert.deepEqual(decodeFloats(base64.data[i].embedding), floats.data[i].embedding.map(Math.fround));
  }

  // The openai SDK asks for base64 by default and decodes it.
  const client = new OpenAI({
    baseURL: url(sim, '/v1'), apiKey: 'sk-sim', maxRetries: 0, timeout: REQUEST_TIMEOUT_MS,
  });
  const sdk = await client.embeddings.create({ model: 'e', input });
  assert.deepEqual(sdk.data[1].embedding, floats.data[1].embedding.map(Math.fround));
});

test('embeddings: dimensions sets the vector length; 0 or negative is a 400', async (t) => {
  const sim = await freshSim(t);
  const floats = await postJson(sim, '/v1/embeddings', { model: 'e', input: 'x y', dimensions: 8 });
  assert.equal(floats.data[0].embedding.length, 8);
  const base64 = await postJson(sim, '/v1/embeddings', {
    model: 'e', input: 'x y', dimensions: 5, encoding_format: 'base64',
  });
  assert.equal(decodeFloats(base64.data[0].embedding).length, 5);

  for (const dimensions of [0, -3]) {
    const res = await post(sim, '/v1/embeddings', { model: 'e', input: 'x', dimensions });
    assert.equal(res.status, 400);
    const { error } = await res.json();
    assert.equal(error.type, 'invalid_request_error');
    assert.match(error.message, /dimensions/);
  }
});

// Reads from `socket` until `done(received)` holds; fails at the deadline.
function readUntil(socket, state, done, what, timeoutMs = 3000) {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!done(state.received)) return false;
      cleanup();
      resolve(state.received);
      return true;
    };
    const onData = (chunk) => {
      state.received += chunk;
      check();
    };
    const onEnd = () => {
      cleanup();
      reject(new Error(`connection ended before ${what}; got ${JSON.stringify(state.received)}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no ${what} within ${timeoutMs} ms; got ${JSON.stringify(state.received)}`));
    }, timeoutMs);
    function cleanup() {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
    }
    socket.on('data', onData);
    socket.on('end', onEnd);
    check();
  });
}

test('Expect: 100-continue gets an interim 100 before the body is sent', async (t) => {
  const sim = await freshSim(t);
  const body = JSON.stringify({ ...CHAT, messages: [{ role: 'user', content: 'x '.repeat(800) }] });
  const { port } = new URL(sim.engines[0].url);
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.setEncoding('utf8');
  try {
    await new Promise((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const state = { received: '' };
    socket.write(
      'POST /v1/chat/completions HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
    );
    const interim = await readUntil(socket, state, (r) => r.includes('\r\n\r\n'), 'interim response');
    assert.match(interim, /^HTTP\/1\.1 100 Continue\r\n/);
    state.received = state.received.slice(state.received.indexOf('\r\n\r\n') + 4);
    socket.write(body);
    const final = await readUntil(socket, state, (r) => r.includes('[DONE]') || /"usage"/.test(r), 'final response');
    assert.match(final, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(final, /"chat\.completion"/);
  } finally {
    socket.destroy();
  }
});

test('responses: max_output_tokens reached is incomplete, streaming and not', async (t) => {
  const sim = await freshSim(t);
  const body = { model: 'r', input: 'write a poem', max_output_tokens: 3 };
  const json = await postJson(sim, '/v1/responses', body);
  assert.equal(json.status, 'incomplete');
  assert.deepEqual(json.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(json.usage.output_tokens, 3);

  const events = await stream(sim, '/v1/responses', body);
  const types = events.map((e) => e.event);
  assert.equal(types.at(-1), 'response.incomplete');
  assert.ok(!types.includes('response.completed'));
  const last = events.at(-1).data;
  assert.equal(last.type, 'response.incomplete');
  assert.equal(last.response.status, 'incomplete');
  assert.deepEqual(last.response.incomplete_details, { reason: 'max_output_tokens' });
  events.forEach((e, i) => assert.equal(e.data.sequence_number, i));
});

test('responses: output that ends before the cap stays completed', async (t) => {
  const sim = await freshSim(t);
  // No max_output_tokens (the default length), and one above the engine's own cap.
  for (const [body, outputTokens] of [
    [{ model: 'r', input: 'write a poem' }, 16],
    [{ model: 'r', input: 'write a poem', max_output_tokens: 100 }, ENGINE_CAP],
  ]) {
    const json = await postJson(sim, '/v1/responses', body);
    assert.equal(json.status, 'completed');
    assert.equal(json.incomplete_details, null);
    assert.equal(json.usage.output_tokens, outputTokens);
    const events = await stream(sim, '/v1/responses', body);
    assert.equal(events.at(-1).event, 'response.completed');
    assert.equal(events.at(-1).data.response.status, 'completed');
  }
});
