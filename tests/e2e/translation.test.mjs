// Translation between APIs (SPEC §16), driven by the official SDKs as users drive them:
// `openai` → rolter → an Anthropic-speaking engine, `openai` → rolter → a Gemini-speaking engine,
// and `@anthropic-ai/sdk` → rolter → an OpenAI-compatible engine. rolter-sim plays each engine in
// its native API, so every byte the SDK reads was translated by rolter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startFleet } from '../lib/rolter.mjs';

const CLIENT_OPTIONS = { apiKey: 'sk-client', maxRetries: 0, timeout: 10000 };
const ANTHROPIC_KEY = 'sk-ant-upstream';
const GEMINI_KEY = 'AIza-upstream';
const VLLM_KEY = 'sk-vllm-upstream';

// Engine 0 answers as Anthropic, engine 1 as Gemini, engine 2 as an OpenAI-compatible server.
async function fleet(t) {
  const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rolter-translation-'));
  t.after(() => fs.rmSync(keyDir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(keyDir, 'gemini.key'), `${GEMINI_KEY}\n`);
  const { sim, rolter } = await startFleet(t, {
    engines: 3,
    simArgs: ['--ttft-ms', '2', '--token-ms', '1', '--seed', '7'],
    config: (engines) => `
[server]
listen = "127.0.0.1:0"
first_byte_timeout_ms = 10000
[retry]
# Two attempts at most: the "mixed" route retries a refused Anthropic target on an OpenAI one.
max_attempts = 2

[[providers]]
name = "claude"
kind = "anthropic"
base_url = "${engines[0].url}"
api_key_env = "ROLTER_TEST_ANTHROPIC_KEY"

[[providers]]
name = "gemini"
kind = "gemini"
base_url = "${engines[1].url}/v1beta"
api_key_file = "${path.join(keyDir, 'gemini.key')}"

[[providers]]
name = "vllm"
base_url = "${engines[2].url}/v1"
api_key_env = "ROLTER_TEST_VLLM_KEY"

[[routes]]
name = "claude"
[[routes.targets]]
provider = "claude"
model = "claude-sim"

[[routes]]
name = "gemini"
[[routes.targets]]
provider = "gemini"
model = "gemini-sim"

[[routes]]
name = "local"
[[routes.targets]]
provider = "vllm"
model = "qwen-sim"

[[routes]]
name = "mixed"
strategy = "round_robin"
[[routes.targets]]
provider = "claude"
model = "claude-sim"
[[routes.targets]]
provider = "vllm"
model = "qwen-sim"
`,
    env: { ROLTER_TEST_ANTHROPIC_KEY: ANTHROPIC_KEY, ROLTER_TEST_VLLM_KEY: VLLM_KEY },
  });
  return {
    sim,
    rolter,
    openai: new OpenAI({ ...CLIENT_OPTIONS, baseURL: `${rolter.url}/v1` }),
    anthropic: new Anthropic({ ...CLIENT_OPTIONS, baseURL: rolter.url }),
  };
}

const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'integer' } },
      required: ['city', 'days'],
    },
  },
};

// What each OpenAI-side target is: its route, engine index and the path and key it must receive.
const OPENAI_TARGETS = [
  { name: 'anthropic', route: 'claude', engine: 0, plainPath: '/v1/messages', streamPath: '/v1/messages',
    keyHeader: 'x-api-key', key: ANTHROPIC_KEY },
  { name: 'gemini', route: 'gemini', engine: 1, plainPath: '/v1beta/models/gemini-sim:generateContent',
    streamPath: '/v1beta/models/gemini-sim:streamGenerateContent', keyHeader: 'x-goog-api-key', key: GEMINI_KEY },
];

for (const target of OPENAI_TARGETS) {
  test(`openai SDK → ${target.name}: plain answer with a system prompt, usage and the target's own key and path`, async (t) => {
    const { sim, openai } = await fleet(t);
    const { data: completion, response } = await openai.chat.completions.create({
      model: target.route,
      messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Say hello' }],
      max_tokens: 5,
    }).withResponse();
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.choices[0].message.role, 'assistant');
    assert.equal(completion.choices[0].message.content.split(' ').length, 5, completion.choices[0].message.content);
    assert.equal(completion.choices[0].finish_reason, 'length');
    assert.equal(completion.usage.completion_tokens, 5);
    assert.ok(completion.usage.prompt_tokens > 0);
    assert.equal(completion.usage.total_tokens, completion.usage.prompt_tokens + 5);
    assert.equal(response.headers.get('x-rolter-target'), `${target.route === 'claude' ? 'claude/claude-sim' : 'gemini/gemini-sim'}`);
    const stats = await sim.stats(target.engine);
    assert.equal(stats.requests, 1);
    assert.equal(stats.last_path, target.plainPath);
    assert.equal(stats.last_headers[target.keyHeader], target.key);
    assert.equal(stats.last_headers.authorization, undefined, 'the client\'s key never reaches the provider');
    if (target.name === 'anthropic') assert.equal(stats.last_headers['anthropic-version'], '2023-06-01');
  });

  test(`openai SDK → ${target.name}: streaming, with the final usage chunk`, async (t) => {
    const { sim, openai } = await fleet(t);
    const stream = await openai.chat.completions.create({
      model: target.route,
      messages: [{ role: 'user', content: 'Stream a few words' }],
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish;
    let usage;
    let role;
    for await (const chunk of stream) {
      role ??= chunk.choices[0]?.delta?.role;
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(role, 'assistant');
    assert.equal(text.split(' ').length, 6, text);
    assert.equal(finish, 'length');
    assert.equal(usage.completion_tokens, 6);
    assert.ok(usage.prompt_tokens > 0);
    assert.ok((await sim.stats(target.engine)).last_path.startsWith(target.streamPath));

    // A client that did not ask gets no usage chunk from the translation either (SPEC §15).
    const plain = await openai.chat.completions.create({
      model: target.route, messages: [{ role: 'user', content: 'Stream a few words' }], max_tokens: 6, stream: true,
    });
    const chunks = [];
    for await (const chunk of plain) chunks.push(chunk);
    assert.ok(chunks.length > 1);
    assert.ok(chunks.every((c) => !c.usage && c.choices.length > 0), JSON.stringify(chunks.at(-1)));
  });

  test(`openai SDK → ${target.name}: a tool call, then the tool's result, round trip`, async (t) => {
    const { openai } = await fleet(t);
    const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const first = await openai.chat.completions.create({ model: target.route, messages, tools: [WEATHER_TOOL], max_tokens: 50 });
    const call = first.choices[0].message.tool_calls?.[0];
    assert.ok(call, JSON.stringify(first.choices[0].message));
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    assert.equal(call.type, 'function');
    assert.equal(call.function.name, 'get_weather');
    const args = JSON.parse(call.function.arguments);
    assert.equal(typeof args.city, 'string');
    assert.ok(args.city.length > 0);
    assert.equal(typeof args.days, 'number');
    assert.ok(first.usage.completion_tokens > 0);

    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '{"temp_c": 21}' });
    const second = await openai.chat.completions.create({ model: target.route, messages, tools: [WEATHER_TOOL], max_tokens: 4 });
    assert.equal((second.choices[0].message.tool_calls ?? []).length, 0);
    assert.equal(second.choices[0].message.content.split(' ').length, 4);
    assert.equal(second.choices[0].finish_reason, 'length');
  });

  test(`openai SDK → ${target.name}: a streamed tool call arrives whole`, async (t) => {
    const { openai } = await fleet(t);
    const stream = await openai.chat.completions.create({
      model: target.route,
      messages: [{ role: 'user', content: 'Weather in Rome?' }],
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      max_tokens: 50,
      stream: true,
    });
    const calls = new Map();
    let finish;
    for await (const chunk of stream) {
      for (const d of chunk.choices[0]?.delta?.tool_calls ?? []) {
        const c = calls.get(d.index) ?? { args: '' };
        if (d.id) c.id = d.id;
        if (d.function?.name) c.name = d.function.name;
        c.args += d.function?.arguments ?? '';
        calls.set(d.index, c);
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(calls.size, 1);
    const call = calls.get(0);
    assert.equal(call.name, 'get_weather');
    assert.ok(call.id);
    assert.deepEqual(Object.keys(JSON.parse(call.args)).sort(), ['city', 'days']);
    assert.equal(finish, 'tool_calls');
  });

  test(`openai SDK → ${target.name}: a stop sequence ends the answer before it`, async (t) => {
    const { openai } = await fleet(t);
    const completion = await openai.chat.completions.create({
      model: target.route,
      messages: [{ role: 'user', content: 'Say several words' }],
      max_tokens: 10,
      stop: [' '],
    });
    const text = completion.choices[0].message.content;
    assert.ok(text.length > 0);
    assert.ok(!text.includes(' '), text);
    assert.equal(completion.choices[0].finish_reason, 'stop');
  });

  test(`openai SDK → ${target.name}: a stream the engine drops mid-way raises the SDK's error`, async (t) => {
    const { sim, openai } = await fleet(t);
    await sim.setFault(target.engine, { drop_mid_stream_after_tokens: 2 });
    const stream = await openai.chat.completions.create({
      model: target.route,
      messages: [{ role: 'user', content: 'A long answer please' }],
      max_tokens: 20,
      stream: true,
    });
    let text = '';
    await assert.rejects(async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    }, (err) => err instanceof OpenAI.APIError);
    assert.ok(text.length > 0, 'the tokens before the drop arrived');
    assert.equal((await sim.stats(target.engine)).dropped, 1);
  });

  test(`openai SDK → ${target.name}: the engine's error comes back as the SDK's error class and status`, async (t) => {
    const { sim, openai } = await fleet(t);
    await sim.setFault(target.engine, { status_429_retry_after_s: 1 });
    await assert.rejects(
      openai.chat.completions.create({ model: target.route, messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 }),
      (err) => err instanceof OpenAI.RateLimitError && err.status === 429);
    await sim.setFault(target.engine, { max_model_len: 2 });
    await assert.rejects(
      openai.chat.completions.create({ model: target.route, messages: [{ role: 'user', content: 'a prompt longer than two tokens' }], max_tokens: 3 }),
      (err) => err instanceof OpenAI.BadRequestError && err.code === 'context_length_exceeded');
  });
}

test('openai SDK → anthropic: a field Messages cannot express is a 400 naming it, and nothing is sent', async (t) => {
  const { sim, openai } = await fleet(t);
  await assert.rejects(
    openai.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'hi' }], n: 2 }),
    (err) => err instanceof OpenAI.BadRequestError && /\bn\b/.test(err.message));
  assert.equal((await sim.stats(0)).requests, 0);
});

test('anthropic SDK → OpenAI-compatible engine: plain, system prompt, usage', async (t) => {
  const { sim, anthropic } = await fleet(t);
  const message = await anthropic.messages.create({
    model: 'local',
    system: 'You are terse.',
    max_tokens: 5,
    messages: [{ role: 'user', content: 'Say hello' }],
  });
  assert.equal(message.type, 'message');
  assert.equal(message.role, 'assistant');
  assert.equal(message.content[0].type, 'text');
  assert.equal(message.content[0].text.split(' ').length, 5);
  assert.equal(message.stop_reason, 'max_tokens');
  assert.equal(message.usage.output_tokens, 5);
  assert.ok(message.usage.input_tokens > 0);
  const stats = await sim.stats(2);
  assert.equal(stats.last_path, '/v1/chat/completions');
  assert.equal(stats.last_headers.authorization, `Bearer ${VLLM_KEY}`);
  assert.equal(stats.last_headers['x-api-key'], undefined);
});

test('anthropic SDK → OpenAI-compatible engine: streaming events and usage', async (t) => {
  const { anthropic } = await fleet(t);
  const stream = anthropic.messages.stream({
    model: 'local',
    max_tokens: 6,
    messages: [{ role: 'user', content: 'Stream a few words' }],
  });
  const types = [];
  stream.on('streamEvent', (e) => types.push(e.type));
  const message = await stream.finalMessage();
  assert.equal(message.content[0].text.split(' ').length, 6);
  assert.equal(message.stop_reason, 'max_tokens');
  assert.equal(message.usage.output_tokens, 6);
  assert.equal(types[0], 'message_start');
  assert.ok(types.includes('content_block_delta'));
  assert.equal(types.at(-1), 'message_stop');
});

test('anthropic SDK → OpenAI-compatible engine: tool use, then a tool_result, round trip', async (t) => {
  const { anthropic } = await fleet(t);
  const tools = [{
    name: 'get_weather',
    description: 'The weather in a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  }];
  const messages = [{ role: 'user', content: 'Weather in Oslo?' }];
  const first = await anthropic.messages.create({ model: 'local', max_tokens: 50, tools, messages });
  assert.equal(first.stop_reason, 'tool_use');
  const use = first.content.find((b) => b.type === 'tool_use');
  assert.ok(use, JSON.stringify(first.content));
  assert.equal(use.name, 'get_weather');
  assert.equal(typeof use.input.city, 'string');
  messages.push({ role: 'assistant', content: first.content });
  messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Sunny, 12 C' }] });
  const second = await anthropic.messages.create({ model: 'local', max_tokens: 4, tools, messages });
  assert.equal(second.content.filter((b) => b.type === 'tool_use').length, 0);
  assert.equal(second.content[0].text.split(' ').length, 4);
  assert.equal(second.stop_reason, 'max_tokens');

  const streamed = anthropic.messages.stream({ model: 'local', max_tokens: 50, tools, messages: messages.slice(0, 1) });
  const final = await streamed.finalMessage();
  const streamedUse = final.content.find((b) => b.type === 'tool_use');
  assert.equal(streamedUse.name, 'get_weather');
  assert.equal(typeof streamedUse.input.city, 'string');
  assert.equal(final.stop_reason, 'tool_use');
});

test('anthropic SDK → OpenAI-compatible engine: stop sequences, and a dropped stream raises the SDK\'s error', async (t) => {
  const { sim, anthropic } = await fleet(t);
  const stopped = await anthropic.messages.create({
    model: 'local', max_tokens: 10, stop_sequences: [' '], messages: [{ role: 'user', content: 'Say words' }],
  });
  assert.ok(!stopped.content[0].text.includes(' '));
  assert.ok(['end_turn', 'stop_sequence'].includes(stopped.stop_reason), stopped.stop_reason);

  await sim.setFault(2, { drop_mid_stream_after_tokens: 2 });
  const dropped = anthropic.messages.stream({ model: 'local', max_tokens: 20, messages: [{ role: 'user', content: 'Long answer' }] });
  await assert.rejects(dropped.finalMessage(), (err) => err instanceof Anthropic.APIError);
  assert.equal((await sim.stats(2)).dropped, 1);
});

test('a retry that crosses kinds gets a body made for the new target', async (t) => {
  const { sim, openai } = await fleet(t);
  // The Anthropic-speaking engine refuses connections; round_robin starts on it for one of two
  // requests, whichever it is, and the retry lands on the OpenAI-compatible engine.
  await sim.setFault(0, { refuse: true });
  let attempts = 0;
  for (let i = 0; i < 2; i++) {
    const { data: completion, response } = await openai.chat.completions.create({
      model: 'mixed',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 3,
    }).withResponse();
    assert.equal(completion.choices[0].message.content.split(' ').length, 3);
    assert.equal(response.headers.get('x-rolter-target'), 'vllm/qwen-sim');
    attempts += Number(response.headers.get('x-rolter-attempts'));
  }
  assert.equal(attempts, 3, 'one of the two requests was tried on the Anthropic target first');
  const stats = await sim.stats(2);
  assert.equal(stats.requests, 2);
  assert.equal(stats.last_path, '/v1/chat/completions', 'the retried body was made for chat completions');
  assert.equal(stats.last_headers.authorization, `Bearer ${VLLM_KEY}`);
  assert.equal((await sim.stats(0)).requests, 0);
});
