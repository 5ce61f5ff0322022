// rolter driven by the official client SDKs, as users drive it: `openai` and `@anthropic-ai/sdk`.
// Each test starts its own rolter-sim and rolter, and its own SDK clients.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startFleet, configFor } from '../lib/rolter.mjs';

const KEY = 'sk-sdk-test';
// Every SDK call has a deadline; the SDKs' own retries are off so each call is one request.
const CLIENT_OPTIONS = { apiKey: KEY, maxRetries: 0, timeout: 10000 };

async function fleet(t) {
  const { sim, rolter } = await startFleet(t, {
    engines: 2,
    simArgs: ['--ttft-ms', '5', '--token-ms', '1'],
    config: (engines) => configFor({
      engines,
      routes: [
        { name: 'gpt-local', strategy: 'round_robin', targets: [{ engine: 0, model: 'Qwen/Qwen3-8B' }, { engine: 1, model: 'Qwen/Qwen3-8B' }] },
        { name: 'claude-local', strategy: 'power_of_two', targets: [{ engine: 0, model: 'claude-sim' }, { engine: 1, model: 'claude-sim' }] },
      ],
      keys: [{ name: 'sdk', key_env: 'ROLTER_SDK_KEY' }],
    }),
    env: { ROLTER_SDK_KEY: KEY },
  });
  return {
    sim,
    rolter,
    openai: new OpenAI({ ...CLIENT_OPTIONS, baseURL: `${rolter.url}/v1` }),
    anthropic: new Anthropic({ ...CLIENT_OPTIONS, baseURL: rolter.url }),
  };
}

async function upstreamRequests(sim) {
  return (await sim.allStats()).reduce((sum, s) => sum + s.requests, 0);
}

test('openai: chat completion', async (t) => {
  const { sim, openai } = await fleet(t);
  const { data: completion, response } = await openai.chat.completions.create({
    model: 'gpt-local',
    messages: [{ role: 'user', content: 'Say hello' }],
    max_tokens: 6,
  }).withResponse();
  assert.equal(completion.object, 'chat.completion');
  assert.equal(completion.model, 'Qwen/Qwen3-8B');
  assert.ok(completion.choices[0].message.content.length > 0);
  assert.equal(completion.usage.completion_tokens, 6);
  assert.equal(response.headers.get('x-rolter-attempts'), '1');
  assert.equal(await upstreamRequests(sim), 1);
});

test('openai: streaming chat completion', async (t) => {
  const { openai } = await fleet(t);
  const stream = await openai.chat.completions.create({
    model: 'gpt-local',
    messages: [{ role: 'user', content: 'Stream a few words' }],
    max_tokens: 8,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let chunks = 0;
  let usage;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  assert.ok(chunks >= 8, `got ${chunks} chunks`);
  assert.ok(text.split(' ').length >= 8, text);
  assert.equal(usage.completion_tokens, 8);
});

test('openai: models list', async (t) => {
  const { openai } = await fleet(t);
  const ids = [];
  for await (const model of openai.models.list()) ids.push(model.id);
  assert.deepEqual(ids, ['gpt-local', 'claude-local']);
});

test('openai: an unknown model is a NotFoundError with the OpenAI error shape', async (t) => {
  const { sim, openai } = await fleet(t);
  await assert.rejects(
    openai.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
    (err) => {
      assert.ok(err instanceof OpenAI.NotFoundError, err.constructor.name);
      assert.equal(err.status, 404);
      assert.equal(err.code, 'model_not_found');
      assert.match(err.message, /no-such-model/);
      return true;
    },
  );
  assert.equal(await upstreamRequests(sim), 0);
});

test('openai: a wrong key is an AuthenticationError', async (t) => {
  const { rolter } = await fleet(t);
  const bad = new OpenAI({ ...CLIENT_OPTIONS, apiKey: 'sk-wrong', baseURL: `${rolter.url}/v1` });
  await assert.rejects(bad.models.list(), (err) => {
    assert.ok(err instanceof OpenAI.AuthenticationError, err.constructor.name);
    assert.equal(err.status, 401);
    return true;
  });
});

test('anthropic: messages', async (t) => {
  const { sim, anthropic } = await fleet(t);
  const message = await anthropic.messages.create({
    model: 'claude-local',
    max_tokens: 5,
    messages: [{ role: 'user', content: 'Hello, Claude' }],
  });
  assert.equal(message.type, 'message');
  assert.equal(message.role, 'assistant');
  assert.equal(message.model, 'claude-sim');
  assert.ok(message.content[0].text.length > 0);
  assert.equal(message.usage.output_tokens, 5);
  assert.equal(await upstreamRequests(sim), 1);
});

test('anthropic: streaming messages', async (t) => {
  const { anthropic } = await fleet(t);
  const stream = anthropic.messages.stream({
    model: 'claude-local',
    max_tokens: 7,
    messages: [{ role: 'user', content: 'Stream to me' }],
  });
  const deltas = [];
  stream.on('text', (text) => deltas.push(text));
  const final = await stream.finalMessage();
  assert.equal(deltas.length, 7);
  assert.equal(final.content[0].text, deltas.join(''));
  assert.equal(final.stop_reason, 'max_tokens');
});

test('anthropic: an unknown model is a NotFoundError in the Anthropic error shape', async (t) => {
  const { anthropic } = await fleet(t);
  await assert.rejects(
    anthropic.messages.create({ model: 'nope', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] }),
    (err) => {
      assert.ok(err instanceof Anthropic.NotFoundError, err.constructor.name);
      assert.equal(err.status, 404);
      assert.equal(err.error.type, 'error');
      assert.equal(err.error.error.type, 'not_found_error');
      return true;
    },
  );
});
