// rolter-sim as each provider a gateway may translate to: tool calls and stop sequences on OpenAI
// chat completions, Anthropic messages (driven by the official @anthropic-ai/sdk) and Gemini's
// native API (fetch), Gemini's embeddings, the context-length fault, error shapes of the faults
// and the headers recorded per engine.
//   ROLTER_BIN_DIR=build/bin node --test tests/sim/providers.test.mjs
// Each test starts its own simulator on ephemeral ports; every request has a deadline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startSimFor } from '../lib/sim.mjs';
import { fetchWithin, parseSse } from '../lib/http.mjs';

const kDeadlineMs = 10000;

const freshSim = (t, args = []) => startSimFor(t, {
  engines: 2,
  args: ['--seed', '7', '--ttft-ms', '1', '--token-ms', '1', '--block-size', '4', ...args],
});

function post(sim, i, path, body, headers = {}) {
  return fetchWithin(`${sim.engines[i].url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

const anthropicFor = (sim, i = 0) => new Anthropic({
  apiKey: 'sk-ant-test', baseURL: sim.engines[i].url, maxRetries: 0, timeout: kDeadlineMs,
});

// A schema with every kind of property the argument rule knows.
const weatherSchema = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    days: { type: 'integer' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    hourly: { type: 'boolean' },
    where: { type: 'object', properties: { lat: { type: 'number' } } },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['city'],
};

function assertWeatherArgs(args) {
  assert.equal(typeof args.city, 'string');
  assert.match(args.city, /^[a-z]+$/);
  assert.ok(Number.isInteger(args.days) && args.days >= 1 && args.days <= 9, `days ${args.days}`);
  assert.equal(args.unit, 'celsius');
  assert.equal(args.hourly, true);
  assert.equal(typeof args.where.lat, 'number');
  assert.equal(args.tags.length, 1);
  assert.equal(typeof args.tags[0], 'string');
}

// Gemini frames events with \r\n\r\n; returns the parsed `data:` payloads.
async function geminiEvents(res) {
  const text = await res.text();
  assert.ok(text.endsWith('\r\n\r\n'), 'Gemini events end in CRLF CRLF');
  return text.split('\r\n\r\n').filter((b) => b.trim()).map((b) => {
    assert.ok(b.startsWith('data: '), b);
    return JSON.parse(b.slice(6));
  });
}

// ---- Anthropic messages, through the official SDK -----------------------------------------------

test('anthropic SDK: tool_use, then a tool_result round trip answered with text', async (t) => {
  const sim = await freshSim(t);
  const client = anthropicFor(sim);
  const tools = [{ name: 'get_weather', description: 'weather', input_schema: weatherSchema },
    { name: 'get_time', input_schema: { type: 'object', properties: {} } }];
  const first = await client.messages.create({
    model: 'claude-sim', max_tokens: 200, system: [{ type: 'text', text: 'be helpful' }],
    tools,
    messages: [{ role: 'user', content: [
      { type: 'text', text: 'weather in paris' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    ] }],
  });
  assert.equal(first.stop_reason, 'tool_use');
  assert.equal(first.content.length, 1);
  const call = first.content[0];
  assert.equal(call.type, 'tool_use');
  assert.equal(call.name, 'get_weather');
  assert.match(call.id, /^toolu_/);
  assertWeatherArgs(call.input);
  assert.equal(first.usage.input_tokens, 5);  // "be helpful" + "weather in paris"
  assert.equal(first.usage.output_tokens, Math.ceil(JSON.stringify(call.input).length / 8));

  // Named tool choice.
  const named = await client.messages.create({
    model: 'claude-sim', max_tokens: 50, tools, tool_choice: { type: 'tool', name: 'get_time' },
    messages: [{ role: 'user', content: 'time?' }],
  });
  assert.equal(named.content[0].name, 'get_time');
  assert.deepEqual(named.content[0].input, {});

  const second = await client.messages.create({
    model: 'claude-sim', max_tokens: 4, tools,
    messages: [
      { role: 'user', content: 'weather in paris' },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'sunny and warm' }] },
    ],
  });
  assert.equal(second.stop_reason, 'max_tokens');
  assert.equal(second.content[0].type, 'text');
  assert.equal(second.content[0].text.split(' ').length, 4);
  assert.equal(second.usage.input_tokens, 6);  // the tool result's text counts as prompt
  assert.equal(second.usage.output_tokens, 4);

  const none = await client.messages.create({
    model: 'claude-sim', max_tokens: 2, tools, tool_choice: { type: 'none' },
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(none.content[0].type, 'text');
  assert.equal(none.stop_reason, 'max_tokens');

  const stats = await sim.stats(0);
  assert.equal(stats.last_path, '/v1/messages');
  assert.equal(stats.last_headers['x-api-key'], 'sk-ant-test');
  assert.ok(stats.last_headers['anthropic-version'], 'the SDK sends anthropic-version');
});

test('anthropic SDK: streamed tool_use arrives as input_json_delta fragments', async (t) => {
  const sim = await freshSim(t);
  const client = anthropicFor(sim);
  const params = {
    model: 'claude-sim', max_tokens: 100,
    tools: [{ name: 'get_weather', input_schema: weatherSchema }],
    messages: [{ role: 'user', content: 'weather in paris' }],
  };
  const events = [];
  for await (const event of await client.messages.create({ ...params, stream: true })) events.push(event);
  assert.deepEqual([...new Set(events.map((e) => e.type))],
    ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop',
      'message_delta', 'message_stop']);
  const start = events.find((e) => e.type === 'content_block_start');
  assert.equal(start.content_block.type, 'tool_use');
  assert.equal(start.content_block.name, 'get_weather');
  assert.deepEqual(start.content_block.input, {});
  const deltas = events.filter((e) => e.type === 'content_block_delta');
  assert.ok(deltas.length > 1, 'more than one fragment');
  assert.ok(deltas.every((e) => e.delta.type === 'input_json_delta'));
  const args = JSON.parse(deltas.map((e) => e.delta.partial_json).join(''));
  assertWeatherArgs(args);
  const end = events.find((e) => e.type === 'message_delta');
  assert.equal(end.delta.stop_reason, 'tool_use');
  assert.equal(end.usage.output_tokens, deltas.length);

  // The SDK's own accumulation gives the same call.
  const final = await client.messages.stream(params).finalMessage();
  assert.equal(final.stop_reason, 'tool_use');
  assert.deepEqual(final.content[0].input, args);
});

test('anthropic SDK: stop_sequences, cache reads in usage, and a dropped stream', async (t) => {
  const sim = await freshSim(t);
  const client = anthropicFor(sim);
  const stopped = await client.messages.create({
    model: 'claude-sim', max_tokens: 10, stop_sequences: ['###', ' '],
    messages: [{ role: 'user', content: 'say several words' }],
  });
  assert.equal(stopped.stop_reason, 'stop_sequence');
  assert.equal(stopped.stop_sequence, ' ');
  assert.match(stopped.content[0].text, /^[a-z]+$/);
  assert.equal(stopped.usage.output_tokens, 1);

  const streamed = await client.messages.stream({
    model: 'claude-sim', max_tokens: 10, stop_sequences: [' '],
    messages: [{ role: 'user', content: 'say several words' }],
  }).finalMessage();
  assert.equal(streamed.stop_reason, 'stop_sequence');
  assert.equal(streamed.stop_sequence, ' ');
  assert.equal(streamed.content[0].text, stopped.content[0].text);

  // The same 12-word prompt twice: the second reads its full blocks (4 tokens each) from cache.
  const long = { model: 'claude-sim', max_tokens: 1,
    messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten eleven twelve' }] };
  const cold = await client.messages.create(long);
  assert.equal(cold.usage.input_tokens, 12);
  assert.equal(cold.usage.cache_read_input_tokens, 0);
  const warm = await client.messages.create(long);
  assert.ok(warm.usage.cache_read_input_tokens >= 8, JSON.stringify(warm.usage));
  assert.equal(warm.usage.input_tokens + warm.usage.cache_read_input_tokens, 12);
  assert.equal(warm.usage.cache_creation_input_tokens, 0);

  await sim.setFault(1, { drop_mid_stream_after_tokens: 2 });
  const dropped = anthropicFor(sim, 1).messages.stream({
    model: 'claude-sim', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }],
  });
  await assert.rejects(dropped.finalMessage());
  assert.equal((await sim.stats(1)).dropped, 1);
});

// ---- OpenAI chat completions -----------------------------------------------------------------

test('openai chat: tool call whole and streamed, then text after the tool result', async (t) => {
  const sim = await freshSim(t);
  const body = {
    model: 'gpt-sim',
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: weatherSchema } }],
    messages: [{ role: 'user', content: 'weather in paris' }],
  };
  const whole = await (await post(sim, 0, '/v1/chat/completions', body, { authorization: 'Bearer sk-oai' })).json();
  const choice = whole.choices[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.equal(choice.message.content, null);
  const [call] = choice.message.tool_calls;
  assert.match(call.id, /^call_/);
  assert.equal(call.type, 'function');
  assert.equal(call.function.name, 'get_weather');
  const args = JSON.parse(call.function.arguments);
  assertWeatherArgs(args);
  assert.equal(whole.usage.prompt_tokens, 3);
  assert.equal(whole.usage.completion_tokens, Math.ceil(call.function.arguments.length / 8));
  assert.equal((await sim.stats(0)).last_headers.authorization, 'Bearer sk-oai');

  const res = await post(sim, 0, '/v1/chat/completions',
    { ...body, stream: true, stream_options: { include_usage: true } });
  const chunks = parseSse(await res.text()).map((e) => e.data).filter((d) => d !== '[DONE]');
  const deltas = chunks.filter((c) => c.choices.length).map((c) => c.choices[0]);
  const first = deltas[0].delta.tool_calls[0];
  assert.deepEqual(first, { index: 0, id: first.id, type: 'function',
    function: { name: 'get_weather', arguments: '' } });
  assert.equal(deltas[0].delta.role, 'assistant');
  const fragments = deltas.slice(1, -1).map((d) => d.delta.tool_calls[0].function.arguments);
  assert.equal(fragments.join(''), call.function.arguments);
  assert.equal(deltas.at(-1).finish_reason, 'tool_calls');
  assert.equal(chunks.at(-1).usage.completion_tokens, fragments.length);

  const after = await (await post(sim, 0, '/v1/chat/completions', {
    ...body, max_tokens: 3,
    messages: [...body.messages, { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: 'sunny' }],
  })).json();
  assert.equal(after.choices[0].finish_reason, 'length');
  assert.equal(after.choices[0].message.content.split(' ').length, 3);
  assert.equal(after.choices[0].message.tool_calls, undefined);

  const none = await (await post(sim, 0, '/v1/chat/completions',
    { ...body, tool_choice: 'none', max_tokens: 2 })).json();
  assert.equal(none.choices[0].finish_reason, 'length');

  const unknown = await post(sim, 0, '/v1/chat/completions',
    { ...body, tool_choice: { type: 'function', function: { name: 'nope' } } });
  assert.equal(unknown.status, 400);
  assert.equal((await unknown.json()).error.type, 'invalid_request_error');
});

test('openai chat: a stop sequence cuts the text, streamed or not', async (t) => {
  const sim = await freshSim(t);
  const body = { model: 'gpt-sim', max_tokens: 10, messages: [{ role: 'user', content: 'hello' }] };
  const full = await (await post(sim, 0, '/v1/chat/completions', body)).json();
  const text = full.choices[0].message.content;
  assert.equal(full.choices[0].finish_reason, 'length');
  const letter = text.replace(/ /g, '')[2];  // a letter that occurs in the text
  const cut = await (await post(sim, 0, '/v1/chat/completions', { ...body, stop: [letter] })).json();
  assert.equal(cut.choices[0].message.content, text.slice(0, text.indexOf(letter)));
  assert.equal(cut.choices[0].finish_reason, 'stop');

  const res = await post(sim, 0, '/v1/chat/completions', { ...body, stop: ' ', stream: true });
  const chunks = parseSse(await res.text()).map((e) => e.data).filter((d) => d !== '[DONE]');
  const content = chunks.map((c) => c.choices[0].delta.content ?? '').join('');
  assert.equal(content, text.split(' ')[0]);
  assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
});

// ---- Gemini ----------------------------------------------------------------------------------

const geminiPath = (model, method) => `/v1beta/models/${model}:${method}`;
const geminiBody = (extra = {}) => ({
  systemInstruction: { parts: [{ text: 'be brief' }] },
  contents: [{ role: 'user', parts: [{ text: 'hello there' },
    { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] }],
  generationConfig: { maxOutputTokens: 5, temperature: 0.3, topP: 0.9 },
  ...extra,
});

test('gemini: generateContent and its SSE stream agree, with usageMetadata', async (t) => {
  const sim = await freshSim(t);
  const key = { 'x-goog-api-key': 'AIza-test' };
  const res = await post(sim, 0, geminiPath('gemini-sim', 'generateContent'), geminiBody(), key);
  assert.equal(res.status, 200);
  const whole = await res.json();
  const [cand] = whole.candidates;
  assert.equal(cand.content.role, 'model');
  assert.equal(cand.finishReason, 'MAX_TOKENS');
  const text = cand.content.parts[0].text;
  assert.equal(text.split(' ').length, 5);
  assert.deepEqual(whole.usageMetadata, { promptTokenCount: 4, candidatesTokenCount: 5, totalTokenCount: 9 });
  assert.equal(whole.modelVersion, 'gemini-sim');
  const stats = await sim.stats(0);
  assert.equal(stats.last_path, '/v1beta/models/gemini-sim:generateContent');
  assert.equal(stats.last_headers['x-goog-api-key'], 'AIza-test');
  assert.equal(stats.last_model, 'gemini-sim');

  const streamed = await post(sim, 0, `${geminiPath('gemini-sim', 'streamGenerateContent')}?alt=sse`, geminiBody(), key);
  assert.equal(streamed.status, 200);
  assert.match(streamed.headers.get('content-type'), /text\/event-stream/);
  const events = await geminiEvents(streamed);
  assert.equal(events.length, 6);  // five tokens, then the finish
  assert.equal(events.map((e) => e.candidates[0].content.parts[0].text).join(''), text);
  assert.ok(events.slice(0, -1).every((e) => !e.candidates[0].finishReason && !e.usageMetadata));
  const last = events.at(-1);
  assert.equal(last.candidates[0].finishReason, 'MAX_TOKENS');
  // The same prompt again: its full blocks are now cached.
  assert.equal(last.usageMetadata.promptTokenCount, 4);
  assert.equal(last.usageMetadata.cachedContentTokenCount, 4);
  assert.equal(last.usageMetadata.totalTokenCount, 9);

  const stopped = await (await post(sim, 0, geminiPath('gemini-sim', 'generateContent'),
    geminiBody({ generationConfig: { maxOutputTokens: 5, stopSequences: [' '] } }))).json();
  assert.equal(stopped.candidates[0].content.parts[0].text, text.split(' ')[0]);
  assert.equal(stopped.candidates[0].finishReason, 'STOP');
  assert.equal(stopped.usageMetadata.candidatesTokenCount, 1);

  const two = await (await post(sim, 0, geminiPath('gemini-sim', 'generateContent'),
    geminiBody({ generationConfig: { maxOutputTokens: 2, candidateCount: 2 } }))).json();
  assert.deepEqual(two.candidates.map((c) => c.index), [0, 1]);
  assert.equal(two.usageMetadata.candidatesTokenCount, 4);
});

test('gemini: functionCall, then text after the functionResponse', async (t) => {
  const sim = await freshSim(t);
  const tools = [{ functionDeclarations: [{ name: 'get_weather', parameters: {
    type: 'OBJECT', properties: { city: { type: 'STRING' }, days: { type: 'INTEGER' } } } }] }];
  const body = { contents: [{ role: 'user', parts: [{ text: 'weather in paris' }] }], tools };
  const whole = await (await post(sim, 0, geminiPath('g', 'generateContent'), body)).json();
  const part = whole.candidates[0].content.parts[0];
  assert.equal(part.functionCall.name, 'get_weather');
  assert.equal(typeof part.functionCall.args.city, 'string');
  assert.ok(Number.isInteger(part.functionCall.args.days));
  assert.equal(whole.candidates[0].finishReason, 'STOP');

  const events = await geminiEvents(await post(sim, 0, `${geminiPath('g', 'streamGenerateContent')}?alt=sse`, body));
  assert.equal(events.length, 1, 'the call comes whole, with the finish');
  assert.deepEqual(events[0].candidates[0].content.parts[0], part);
  assert.equal(events[0].candidates[0].finishReason, 'STOP');
  assert.equal(events[0].usageMetadata.candidatesTokenCount, whole.usageMetadata.candidatesTokenCount);

  const after = await (await post(sim, 0, geminiPath('g', 'generateContent'), {
    ...body, generationConfig: { maxOutputTokens: 3 },
    contents: [...body.contents, { role: 'model', parts: [part] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 20 } } }] }],
  })).json();
  assert.equal(typeof after.candidates[0].content.parts[0].text, 'string');
  assert.equal(after.candidates[0].finishReason, 'MAX_TOKENS');

  const none = await (await post(sim, 0, geminiPath('g', 'generateContent'),
    { ...body, toolConfig: { functionCallingConfig: { mode: 'NONE' } } })).json();
  assert.equal(typeof none.candidates[0].content.parts[0].text, 'string');
});

test('gemini: embedContent and batchEmbedContents', async (t) => {
  const sim = await freshSim(t);
  const one = await (await post(sim, 0, geminiPath('text-embedding-sim', 'embedContent'),
    { model: 'models/text-embedding-sim', content: { parts: [{ text: 'a b c' }] }, outputDimensionality: 8 })).json();
  assert.equal(one.embedding.values.length, 8);
  const batch = await (await post(sim, 0, geminiPath('text-embedding-sim', 'batchEmbedContents'), {
    requests: [{ model: 'models/text-embedding-sim', content: { parts: [{ text: 'a b c' }] }, outputDimensionality: 8 },
      { model: 'models/text-embedding-sim', content: { parts: [{ text: 'other' }] }, outputDimensionality: 8 }],
  })).json();
  assert.equal(batch.embeddings.length, 2);
  assert.deepEqual(batch.embeddings[0].values, one.embedding.values);
  assert.notDeepEqual(batch.embeddings[1].values, one.embedding.values);
});

test('gemini: faults answer in Gemini\'s error shape, and a stream can be dropped', async (t) => {
  const sim = await freshSim(t);
  const path = geminiPath('g', 'generateContent');
  const bad = await post(sim, 0, path, { contents: [] });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.status, 'INVALID_ARGUMENT');

  await sim.setFault(1, { status_429_retry_after_s: 2 });
  const limited = await post(sim, 1, path, geminiBody());
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get('retry-after'), '2');
  assert.deepEqual(await limited.json(),
    { error: { code: 429, message: 'simulated rate limit', status: 'RESOURCE_EXHAUSTED' } });

  await sim.setFault(1, { error_rate: 1, error_status: 503 });
  const down = await post(sim, 1, path, geminiBody());
  assert.equal(down.status, 503);
  assert.equal((await down.json()).error.status, 'UNAVAILABLE');

  await sim.setFault(1, { drop_mid_stream_after_tokens: 2 });
  const res = await post(sim, 1, `${geminiPath('g', 'streamGenerateContent')}?alt=sse`, geminiBody());
  await assert.rejects(res.text());
  assert.equal((await sim.stats(1)).dropped, 1);
});

// ---- context length --------------------------------------------------------------------------

test('max model len: each API\'s real context-length error, per engine', async (t) => {
  const sim = await freshSim(t, ['--max-model-len', '6', '--fault', 'engine=1,max_model_len=0']);
  const long = 'one two three four five six seven';
  const chat = await post(sim, 0, '/v1/chat/completions', { messages: [{ role: 'user', content: long }] });
  assert.equal(chat.status, 400);
  assert.deepEqual(await chat.json(), {
    object: 'error',
    message: "This model's maximum context length is 6 tokens. However, you requested 7 tokens in the messages, Please reduce the length of the messages.",
    type: 'BadRequestError', param: null, code: 400,
  });
  const messages = await post(sim, 0, '/v1/messages', { max_tokens: 5, messages: [{ role: 'user', content: long }] });
  assert.equal(messages.status, 400);
  assert.deepEqual(await messages.json(), { type: 'error',
    error: { type: 'invalid_request_error', message: 'prompt is too long: 7 tokens > 6 maximum' } });
  const gemini = await post(sim, 0, geminiPath('g', 'generateContent'), { contents: [{ parts: [{ text: long }] }] });
  assert.equal(gemini.status, 400);
  assert.deepEqual(await gemini.json(), { error: { code: 400, status: 'INVALID_ARGUMENT',
    message: 'The input token count (7) exceeds the maximum number of tokens allowed (6).' } });
  assert.equal((await sim.stats(0)).rejected, 3);

  // Short enough, or on the engine without a limit: served.
  const short = await post(sim, 0, '/v1/chat/completions', { messages: [{ role: 'user', content: 'one two' }] });
  assert.equal(short.status, 200);
  const other = await post(sim, 1, '/v1/chat/completions', { messages: [{ role: 'user', content: long }] });
  assert.equal(other.status, 200);
  const models = await (await fetchWithin(`${sim.engines[0].url}/v1/models`)).json();
  assert.equal(models.data[0].max_model_len, 6);

  // Through the control API, as the other faults.
  const faults = await sim.setFault(1, { max_model_len: 3 });
  assert.equal(faults.max_model_len, 3);
  const now = await post(sim, 1, '/v1/chat/completions', { messages: [{ role: 'user', content: long }] });
  assert.equal(now.status, 400);
  assert.match((await now.json()).message, /maximum context length is 3 tokens/);
});
