// rolter driven by the official client SDKs, as users drive it: `openai` and `@anthropic-ai/sdk`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startSim } from '../lib/sim.mjs';
import { startRolter, configFor } from '../lib/rolter.mjs';

let sim;
let rolter;
let openai;
let anthropic;

before(async () => {
  sim = await startSim({ engines: 2, args: ['--ttft-ms', '5', '--token-ms', '1'] });
  rolter = await startRolter({
    config: configFor({
      engines: sim.engines,
      routes: [
        { name: 'gpt-local', strategy: 'round_robin', targets: [{ engine: 0, model: 'Qwen/Qwen3-8B' }, { engine: 1, model: 'Qwen/Qwen3-8B' }] },
        { name: 'claude-local', strategy: 'power_of_two', targets: [{ engine: 0, model: 'claude-sim' }, { engine: 1, model: 'claude-sim' }] },
      ],
    }) + '\n[[keys]]\nname = "sdk"\nkey_env = "ROLTER_SDK_KEY"\n',
    env: { ROLTER_SDK_KEY: 'sk-sdk-test' },
  });
  openai = new OpenAI({ apiKey: 'sk-sdk-test', baseURL: `${rolter.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: 'sk-sdk-test', baseURL: rolter.url, maxRetries: 0 });
});

after(async () => {
  await rolter?.stop();
  await sim?.stop();
});

test('openai: chat completion', async () => {
  const completion = await openai.chat.completions.create({
    model: 'gpt-local',
    messages: [{ role: 'user', content: 'Say hello' }],
    max_tokens: 6,
  });
  assert.equal(completion.object, 'chat.completion');
  assert.equal(completion.model, 'Qwen/Qwen3-8B');
  assert.ok(completion.choices[0].message.content.length > 0);
  assert.equal(completion.usage.completion_tokens, 6);
});

test('openai: streaming chat completion', async () => {
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

test('openai: models list', async () => {
  const ids = [];
  for await (const model of openai.models.list()) ids.push(model.id);
  assert.deepEqual(ids, ['gpt-local', 'claude-local']);
});

test('openai: an unknown model is a NotFoundError with the OpenAI error shape', async () => {
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
});

test('openai: a wrong key is an AuthenticationError', async () => {
  const bad = new OpenAI({ apiKey: 'sk-wrong', baseURL: `${rolter.url}/v1`, maxRetries: 0 });
  await assert.rejects(bad.models.list(), (err) => err instanceof OpenAI.AuthenticationError);
});

test('anthropic: messages', async () => {
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
});

test('anthropic: streaming messages', async () => {
  const stream = anthropic.messages.stream({
    model: 'claude-local',
    max_tokens: 7,
    messages: [{ role: 'user', content: 'Stream to me' }],
  });
  const deltas = [];
  stream.on('text', (t) => deltas.push(t));
  const final = await stream.finalMessage();
  assert.equal(deltas.length, 7);
  assert.equal(final.content[0].text, deltas.join(''));
  assert.equal(final.stop_reason, 'max_tokens');
});

test('anthropic: an unknown model is a NotFoundError in the Anthropic error shape', async () => {
  await assert.rejects(
    anthropic.messages.create({ model: 'nope', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] }),
    (err) => {
      assert.ok(err instanceof Anthropic.NotFoundError, err.constructor.name);
      assert.equal(err.error.type, 'error');
      assert.equal(err.error.error.type, 'not_found_error');
      return true;
    },
  );
});
