// rolter driven by third-party client libraries, as users drive it: the Vercel AI SDK (`ai` with
// `@ai-sdk/openai` and `@ai-sdk/anthropic`) and LangChain JS (`@langchain/openai`). Each library
// parses the answers with its own schemas and maps errors to its own types, so these tests catch
// wire-format drift that the official SDKs tolerate.
// Each test starts its own rolter-sim and rolter (startFleet), so no test depends on another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, streamText, APICallError } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { ChatOpenAI, OpenAIClient } from '@langchain/openai';
import { startFleet, configFor } from '../lib/rolter.mjs';

const KEY = 'sk-third-party-test';
const QWEN = 'Qwen/Qwen3-8B';
const CLAUDE = 'claude-sim';
// Each test's deadline: a stream that never ends fails the test instead of hanging the run.
const DEADLINE = { timeout: 30_000 };

// A fresh 2-engine rolter-sim and a rolter over it for test t, both stopped when the test ends;
// with AI SDK providers for that rolter.
async function fleet(t) {
  const { sim, rolter } = await startFleet(t, {
    engines: 2,
    simArgs: ['--ttft-ms', '5', '--token-ms', '1'],
    config: (engines) => configFor({
      engines,
      routes: [
        { name: 'gpt-local', strategy: 'round_robin', targets: [{ engine: 0, model: QWEN }, { engine: 1, model: QWEN }] },
        { name: 'claude-local', strategy: 'power_of_two', targets: [{ engine: 0, model: CLAUDE }, { engine: 1, model: CLAUDE }] },
      ],
    }) + '\n[[keys]]\nname = "third-party"\nkey_env = "ROLTER_THIRD_PARTY_KEY"\n',
    env: { ROLTER_THIRD_PARTY_KEY: KEY },
  });
  return {
    sim,
    rolter,
    aiOpenAI: createOpenAI({ apiKey: KEY, baseURL: `${rolter.url}/v1` }),
    aiAnthropic: createAnthropic({ apiKey: KEY, baseURL: `${rolter.url}/v1` }),
  };
}

// Runs `call`, then checks that the engine named by its x-rolter-target header
// ("engine-<i>/<upstream model>") is the one whose simulator counted one more request on `path`,
// for `upstream`. `call` resolves to { headers } (a plain object or a Headers) plus anything else.
async function servedBy(sim, path, upstream, call) {
  const before = await sim.allStats();
  const result = await call();
  const headers = result.headers instanceof Headers ? Object.fromEntries(result.headers) : result.headers;
  const target = headers['x-rolter-target'];
  const m = /^engine-(\d+)\/(.+)$/.exec(target ?? '');
  assert.ok(m, `x-rolter-target: ${target}`);
  assert.equal(m[2], upstream);
  const engine = Number(m[1]);
  assert.equal(headers['x-sim-engine'], String(engine), 'the header names the engine that answered');
  const afterStats = await sim.allStats();
  const served = afterStats.map((s, i) => (s.by_path[path] ?? 0) - (before[i].by_path[path] ?? 0));
  assert.deepEqual(served, served.map((_, i) => (i === engine ? 1 : 0)), `requests on ${path} per engine`);
  assert.equal(afterStats[engine].last_model, upstream);
  return { ...result, engine, body: afterStats[engine].last_body };
}

// The AI SDK's own error type for an HTTP failure, with its status; 4xx are not retryable.
function isApiCallError(status) {
  return (err) => {
    assert.ok(APICallError.isInstance(err), `${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.statusCode, status);
    assert.equal(err.isRetryable, false);
    return true;
  };
}

// Reads a streamText result through its fullStream, where the AI SDK also puts the errors that
// its textStream drops silently (an SSE chunk its schema rejects, an HTTP error).
async function readStream(r) {
  const deltas = [];
  const errors = [];
  let finish;
  for await (const part of r.fullStream) {
    if (part.type === 'text-delta') deltas.push(part.text);
    if (part.type === 'error') errors.push(part.error);
    if (part.type === 'finish') finish = part;
  }
  const read = { deltas, errors, finishReason: finish?.finishReason, usage: finish?.totalUsage };
  // After an error the result's promises reject (NoOutputGeneratedError): the errors say it all.
  if (errors.length > 0) return read;
  return { ...read, text: await r.text, headers: (await r.response).headers };
}

// ---- Vercel AI SDK, OpenAI provider on /v1/chat/completions ------------------------------------

test('ai-sdk openai.chat: generateText', DEADLINE, async (t) => {
  const { sim, aiOpenAI } = await fleet(t);
  const { text, usage, response, finishReason } = await servedBy(sim, '/v1/chat/completions', QWEN, async () => {
    const r = await generateText({ model: aiOpenAI.chat('gpt-local'), prompt: 'Say hello', maxOutputTokens: 6, maxRetries: 0 });
    return { text: r.text, usage: r.usage, response: r.response, finishReason: r.finishReason, headers: r.response.headers };
  });
  assert.ok(text.length > 0);
  assert.equal(response.modelId, QWEN);
  assert.equal(finishReason, 'length');
  assert.equal(usage.outputTokens, 6);
  assert.equal(usage.inputTokens, 2);
  assert.equal(usage.totalTokens, 8);
});

test('ai-sdk openai.chat: streamText', DEADLINE, async (t) => {
  const { sim, aiOpenAI } = await fleet(t);
  const { deltas, errors, finishReason, text, usage, body } = await servedBy(sim, '/v1/chat/completions', QWEN, async () => {
    const r = streamText({ model: aiOpenAI.chat('gpt-local'), prompt: 'Stream a few words', maxOutputTokens: 8, maxRetries: 0 });
    return readStream(r);
  });
  assert.deepEqual(errors, []);
  assert.equal(deltas.length, 8, 'one delta per token');
  assert.equal(text, deltas.join(''));
  assert.ok(text.length > 0);
  assert.equal(body.stream, true);
  assert.deepEqual(body.stream_options, { include_usage: true });
  assert.equal(finishReason, 'length');
  assert.equal(usage.outputTokens, 8);
  assert.equal(usage.inputTokens, 4);
});

test('ai-sdk openai.chat: an unknown model is an APICallError 404 model_not_found', DEADLINE, async (t) => {
  const { aiOpenAI } = await fleet(t);
  await assert.rejects(
    generateText({ model: aiOpenAI.chat('no-such-model'), prompt: 'x', maxRetries: 0 }),
    (err) => {
      isApiCallError(404)(err);
      assert.equal(err.data?.error?.code, 'model_not_found', err.responseBody);
      assert.match(err.message, /no-such-model/);
      return true;
    },
  );
});

test('ai-sdk openai.chat: a wrong key is an APICallError 401', DEADLINE, async (t) => {
  const { rolter } = await fleet(t);
  const bad = createOpenAI({ apiKey: 'sk-wrong', baseURL: `${rolter.url}/v1` });
  await assert.rejects(generateText({ model: bad.chat('gpt-local'), prompt: 'x', maxRetries: 0 }), isApiCallError(401));
});

test('ai-sdk openai.chat: an error on a stream request reaches the stream as an APICallError', DEADLINE, async (t) => {
  const { aiOpenAI } = await fleet(t);
  const r = streamText({ model: aiOpenAI.chat('no-such-model'), prompt: 'x', maxRetries: 0, onError: () => {} });
  const { deltas, errors } = await readStream(r);
  assert.deepEqual(deltas, []);
  assert.equal(errors.length, 1);
  isApiCallError(404)(errors[0]);
});

// ---- Vercel AI SDK, OpenAI provider's default model: the Responses API --------------------------

test('ai-sdk openai(model) uses the Responses API: generateText', DEADLINE, async (t) => {
  const { sim, aiOpenAI } = await fleet(t);
  const { text, usage, response } = await servedBy(sim, '/v1/responses', QWEN, async () => {
    const r = await generateText({ model: aiOpenAI('gpt-local'), prompt: 'Say hello', maxOutputTokens: 6, maxRetries: 0 });
    return { text: r.text, usage: r.usage, response: r.response, headers: r.response.headers };
  });
  assert.ok(text.length > 0);
  assert.equal(response.modelId, QWEN);
  assert.equal(usage.outputTokens, 6);
  assert.equal(usage.inputTokens, 2);
});

test('ai-sdk openai(model) uses the Responses API: streamText', DEADLINE, async (t) => {
  const { sim, aiOpenAI } = await fleet(t);
  const { deltas, errors, finishReason, text, usage, body } = await servedBy(sim, '/v1/responses', QWEN, async () => {
    const r = streamText({ model: aiOpenAI('gpt-local'), prompt: 'Stream a few words', maxOutputTokens: 8, maxRetries: 0 });
    return readStream(r);
  });
  assert.deepEqual(errors, []);
  assert.equal(deltas.length, 8, 'one delta per token');
  assert.equal(text, deltas.join(''));
  assert.equal(body.stream, true);
  assert.equal(body.max_output_tokens, 8);
  // max_output_tokens cut the text: the response is "incomplete", which the SDK reports as 'length'.
  assert.equal(finishReason, 'length');
  assert.equal(usage.outputTokens, 8);
  assert.equal(usage.inputTokens, 4);
});

test('ai-sdk openai(model): an unknown model is an APICallError 404 on /v1/responses', DEADLINE, async (t) => {
  const { aiOpenAI } = await fleet(t);
  await assert.rejects(
    generateText({ model: aiOpenAI('no-such-model'), prompt: 'x', maxRetries: 0 }),
    (err) => {
      isApiCallError(404)(err);
      assert.match(err.url, /\/v1\/responses$/);
      assert.equal(err.data?.error?.code, 'model_not_found', err.responseBody);
      return true;
    },
  );
});

// ---- Vercel AI SDK, Anthropic provider on /v1/messages, translated for the OpenAI-compatible engines

test('ai-sdk anthropic: generateText', DEADLINE, async (t) => {
  const { sim, aiAnthropic } = await fleet(t);
  const { text, usage, response, finishReason } = await servedBy(sim, '/v1/chat/completions', CLAUDE, async () => {
    const r = await generateText({ model: aiAnthropic('claude-local'), prompt: 'Hello, Claude', maxOutputTokens: 5, maxRetries: 0 });
    return { text: r.text, usage: r.usage, response: r.response, finishReason: r.finishReason, headers: r.response.headers };
  });
  assert.ok(text.length > 0);
  assert.equal(response.modelId, CLAUDE);
  assert.equal(finishReason, 'length');
  assert.equal(usage.outputTokens, 5);
  assert.equal(usage.inputTokens, 2);
});

test('ai-sdk anthropic: streamText', DEADLINE, async (t) => {
  const { sim, aiAnthropic } = await fleet(t);
  const { deltas, errors, finishReason, text, usage, body } = await servedBy(sim, '/v1/chat/completions', CLAUDE, async () => {
    const r = streamText({ model: aiAnthropic('claude-local'), prompt: 'Stream to me', maxOutputTokens: 7, maxRetries: 0 });
    return readStream(r);
  });
  assert.deepEqual(errors, []);
  assert.equal(deltas.length, 7, 'one delta per token');
  assert.equal(text, deltas.join(''));
  assert.equal(body.stream, true);
  assert.equal(finishReason, 'length');
  assert.equal(usage.outputTokens, 7);
  assert.equal(usage.inputTokens, 3);
});

test('ai-sdk anthropic: an unknown model is an APICallError 404 in the Anthropic error shape', DEADLINE, async (t) => {
  const { aiAnthropic } = await fleet(t);
  await assert.rejects(
    generateText({ model: aiAnthropic('nope'), prompt: 'x', maxOutputTokens: 1, maxRetries: 0 }),
    (err) => {
      isApiCallError(404)(err);
      assert.equal(err.data?.error?.type, 'not_found_error', err.responseBody);
      return true;
    },
  );
});

test('ai-sdk anthropic: a wrong key is an APICallError 401', DEADLINE, async (t) => {
  const { rolter } = await fleet(t);
  const bad = createAnthropic({ apiKey: 'sk-wrong', baseURL: `${rolter.url}/v1` });
  await assert.rejects(
    generateText({ model: bad('claude-local'), prompt: 'x', maxOutputTokens: 1, maxRetries: 0 }),
    (err) => {
      isApiCallError(401)(err);
      assert.equal(err.data?.error?.type, 'authentication_error', err.responseBody);
      return true;
    },
  );
});

// ---- LangChain JS, ChatOpenAI ---------------------------------------------------------------------

// A ChatOpenAI on rolter whose fetch remembers the last response's headers (LangChain does not
// expose them), so a test can see which engine served.
function langchain(rolter, { apiKey = KEY, ...fields } = {}) {
  const seen = { headers: undefined };
  const chat = new ChatOpenAI({
    model: 'gpt-local',
    apiKey,
    maxRetries: 0,
    ...fields,
    configuration: {
      baseURL: `${rolter.url}/v1`,
      fetch: async (...args) => {
        const res = await fetch(...args);
        seen.headers = res.headers;
        return res;
      },
    },
  });
  return { chat, seen };
}

test('langchain ChatOpenAI: invoke', DEADLINE, async (t) => {
  const { sim, rolter } = await fleet(t);
  const { chat, seen } = langchain(rolter, { maxTokens: 6 });
  const { message } = await servedBy(sim, '/v1/chat/completions', QWEN, async () => {
    const message = await chat.invoke('Say hello');
    return { message, headers: seen.headers };
  });
  assert.equal(typeof message.content, 'string');
  assert.ok(message.content.length > 0);
  assert.equal(message.response_metadata.model_name, QWEN);
  assert.equal(message.response_metadata.finish_reason, 'length');
  assert.deepEqual(
    [message.usage_metadata.input_tokens, message.usage_metadata.output_tokens, message.usage_metadata.total_tokens],
    [2, 6, 8]);
});

test('langchain ChatOpenAI: stream', DEADLINE, async (t) => {
  const { sim, rolter } = await fleet(t);
  const { chat, seen } = langchain(rolter, { maxTokens: 8 });
  const { chunks, body } = await servedBy(sim, '/v1/chat/completions', QWEN, async () => {
    const chunks = [];
    for await (const chunk of await chat.stream('Stream a few words')) chunks.push(chunk);
    return { chunks, headers: seen.headers };
  });
  const deltas = chunks.map((c) => c.content).filter((c) => c.length > 0);
  assert.ok(deltas.length > 1, `got ${deltas.length} deltas`);
  const whole = chunks.reduce((a, c) => a.concat(c));
  assert.equal(whole.content, deltas.join(''));
  assert.equal(body.stream, true);
  assert.deepEqual(body.stream_options, { include_usage: true });
  assert.equal(whole.usage_metadata.output_tokens, 8);
  assert.equal(whole.usage_metadata.input_tokens, 4);
});

test('langchain ChatOpenAI useResponsesApi: invoke and stream', DEADLINE, async (t) => {
  const { sim, rolter } = await fleet(t);
  const { chat, seen } = langchain(rolter, { maxTokens: 6, useResponsesApi: true });
  const { message } = await servedBy(sim, '/v1/responses', QWEN, async () => {
    const message = await chat.invoke('Say hello');
    return { message, headers: seen.headers };
  });
  assert.ok(message.text.length > 0);
  assert.equal(message.usage_metadata.output_tokens, 6);

  const { chunks } = await servedBy(sim, '/v1/responses', QWEN, async () => {
    const chunks = [];
    for await (const chunk of await chat.stream('Stream a few words')) chunks.push(chunk);
    return { chunks, headers: seen.headers };
  });
  const deltas = chunks.map((c) => c.text).filter((t) => t.length > 0);
  assert.ok(deltas.length > 1, `got ${deltas.length} deltas`);
  const whole = chunks.reduce((a, c) => a.concat(c));
  assert.equal(whole.text, deltas.join(''));
  assert.equal(whole.usage_metadata.output_tokens, 6);
});

test('langchain ChatOpenAI: an unknown model is the openai NotFoundError with lc_error_code MODEL_NOT_FOUND', DEADLINE, async (t) => {
  const { rolter } = await fleet(t);
  const { chat } = langchain(rolter, { model: 'no-such-model' });
  await assert.rejects(chat.invoke('x'), (err) => {
    assert.ok(err instanceof OpenAIClient.NotFoundError, `${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.status, 404);
    assert.equal(err.code, 'model_not_found');
    assert.equal(err.lc_error_code, 'MODEL_NOT_FOUND');
    return true;
  });
});

test('langchain ChatOpenAI: a wrong key is the openai AuthenticationError with lc_error_code MODEL_AUTHENTICATION', DEADLINE, async (t) => {
  const { rolter } = await fleet(t);
  const { chat } = langchain(rolter, { apiKey: 'sk-wrong' });
  await assert.rejects(chat.invoke('x'), (err) => {
    assert.ok(err instanceof OpenAIClient.AuthenticationError, `${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.status, 401);
    assert.equal(err.lc_error_code, 'MODEL_AUTHENTICATION');
    return true;
  });
});
