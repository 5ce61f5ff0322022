// Usage from streams (SPEC §15), driven by the official SDKs: rolter asks an OpenAI-compatible
// upstream for the usage chunk of every chat stream, hands it on only to clients that asked for
// it, and records the usage either way; the Anthropic path reads it from its own events. A raw
// upstream shows the client's bytes are the upstream's, less exactly the usage event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startFleet, startRolter, configFor } from '../lib/rolter.mjs';
import { startRawUpstream, sseHead, chunk, sse, LAST_CHUNK } from '../lib/raw_upstream.mjs';
import { adminClient } from '../lib/cluster.mjs';
import { postJson, waitUntil } from '../lib/http.mjs';

const ADMIN = 'usage-admin-token-0123456789';
const CLIENT_OPTIONS = { maxRetries: 0, timeout: 10000 };

async function usageFleet(t) {
  const { sim, rolter } = await startFleet(t, {
    simArgs: ['--ttft-ms', '2', '--token-ms', '1', '--seed', '3'],
    config: (engines) => `
[server]
listen = "127.0.0.1:0"
[usage]
flush_secs = 1
[[providers]]
name = "vllm"
base_url = "${engines[0].url}/v1"
[[routes]]
name = "m"
[[routes.targets]]
provider = "vllm"
model = "sim-model"
[[keys]]
name = "sdk"
key_env = "K_SDK"
[[keys]]
name = "claude-client"
key_env = "K_CLAUDE"
`,
    env: { K_SDK: 'sk-sdk', K_CLAUDE: 'sk-claude', ROLTER_ADMIN_TOKEN: ADMIN },
  });
  return { sim, rolter, api: adminClient(rolter.url, ADMIN) };
}

async function recorded(api, key, requests) {
  return waitUntil(async () => {
    const r = await api.get(`/usage?key=${key}`);
    return r.status === 200 && r.body.totals.requests === requests ? r.body.totals : null;
  }, { timeoutMs: 10000, intervalMs: 200, what: `${requests} usage records of key ${key}` });
}

test('openai SDK: a stream without include_usage gets no usage chunk, and its usage is recorded', async (t) => {
  const { sim, rolter, api } = await usageFleet(t);
  const client = new OpenAI({ ...CLIENT_OPTIONS, apiKey: 'sk-sdk', baseURL: `${rolter.url}/v1` });

  const plain = await client.chat.completions.create({
    model: 'm', stream: true, max_tokens: 6, messages: [{ role: 'user', content: 'count to six' }],
  });
  const chunks = [];
  for await (const c of plain) chunks.push(c);
  assert.ok(chunks.length > 1);
  assert.ok(chunks.every((c) => c.choices.length > 0), 'a chunk with no choices reached the client');
  assert.ok(chunks.every((c) => !c.usage), 'usage reached a client that did not ask');
  // The engine was asked for it.
  const stats = await sim.stats(0);
  assert.deepEqual(stats.last_body.stream_options, { include_usage: true });

  const asked = await client.chat.completions.create({
    model: 'm', stream: true, max_tokens: 6, stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'count to six' }],
  });
  let usage;
  for await (const c of asked) if (c.usage) usage = c.usage;
  assert.ok(usage, 'a client that asked got no usage');
  assert.equal(usage.completion_tokens, 6);

  const totals = await recorded(api, 'sdk', 2);
  assert.equal(totals.output_tokens, 12);
  assert.equal(totals.input_tokens, 2 * usage.prompt_tokens);
  assert.equal(totals.estimated, 0);
});

test('openai SDK: a Responses stream\'s usage is read from its final event and recorded', async (t) => {
  const { rolter, api } = await usageFleet(t);
  const client = new OpenAI({ ...CLIENT_OPTIONS, apiKey: 'sk-sdk', baseURL: `${rolter.url}/v1` });
  const stream = await client.responses.create({ model: 'm', input: 'four words, please', max_output_tokens: 4, stream: true });
  let usage;
  // response.completed, or response.incomplete when max_output_tokens cut the answer.
  for await (const event of stream) {
    if (event.type === 'response.completed' || event.type === 'response.incomplete') usage = event.response.usage;
  }
  assert.ok(usage, 'no final event with usage');
  const totals = await recorded(api, 'sdk', 1);
  assert.equal(totals.output_tokens, usage.output_tokens);
  assert.equal(totals.input_tokens, usage.input_tokens);
  assert.equal(totals.estimated, 0);
});

test('@anthropic-ai/sdk: a translated stream\'s usage is read from its events and recorded', async (t) => {
  const { rolter, api } = await usageFleet(t);
  const client = new Anthropic({ ...CLIENT_OPTIONS, apiKey: 'sk-claude', baseURL: rolter.url });
  const stream = client.messages.stream({
    model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'five words please' }],
  });
  const final = await stream.finalMessage();
  assert.equal(final.usage.output_tokens, 5);
  const totals = await recorded(api, 'claude-client', 1);
  assert.equal(totals.output_tokens, 5);
  assert.equal(totals.input_tokens, final.usage.input_tokens);
  assert.equal(totals.estimated, 0);
});

test('the client\'s stream is the upstream\'s bytes less exactly the usage event', async (t) => {
  const content = sse({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'a "choices":[]' } }] });
  const finish = sse({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  const usage = sse({ id: 'c1', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } });
  const done = 'data: [DONE]\n\n';
  const up = await startRawUpstream({
    respond(req, ctx) {
      // The usage event arrives split over two chunks, as a network may deliver it.
      ctx.write(Buffer.concat([sseHead(), chunk(content + finish + usage.slice(0, 20)), chunk(usage.slice(20) + done), LAST_CHUNK]));
    },
  });
  t.after(() => up.close());
  const rolter = await startRolter({
    config: configFor({ engines: [up], routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }] }] }),
  });
  t.after(() => rolter.stop());
  const body = { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: false } };
  const res = await postJson(`${rolter.url}/v1/chat/completions`, body);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), content + finish + done);
  // Upstream, include_usage is true: the last `stream_options` of the object wins.
  const forwarded = up.requests[0].body.toString();
  assert.ok(forwarded.endsWith(',"stream_options":{"include_usage":true}}'), forwarded);
  assert.deepEqual(JSON.parse(forwarded).stream_options, { include_usage: true });

  // A client that asked gets every byte.
  const askedBody = { ...body, stream_options: { include_usage: true } };
  const asked = await postJson(`${rolter.url}/v1/chat/completions`, askedBody);
  assert.equal(await asked.text(), content + finish + usage + done);
  assert.equal(up.requests[1].body.toString(), JSON.stringify({ ...askedBody, model: 'up' }));
});

test('a stream that ends without usage is charged its reservation and flagged usage_estimated', async (t) => {
  const finish = sse({ id: 'c2', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'no usage here' }, finish_reason: 'stop' }] });
  // An upstream that ignores include_usage.
  const up = await startRawUpstream({
    respond(req, ctx) { ctx.write(Buffer.concat([sseHead(), chunk(finish + 'data: [DONE]\n\n'), LAST_CHUNK])); },
  });
  t.after(() => up.close());
  const rolter = await startRolter({
    config: `${configFor({ engines: [up], routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }] }] })}
[usage]
flush_secs = 1
[[keys]]
name = "metered"
key_env = "K_METERED"
tpm = 100000
`,
    env: { K_METERED: 'sk-metered', ROLTER_ADMIN_TOKEN: ADMIN },
  });
  t.after(() => rolter.stop());
  const body = { model: 'm', stream: true, max_tokens: 30, messages: [{ role: 'user', content: 'hi' }] };
  const res = await postJson(`${rolter.url}/v1/chat/completions`, body, { headers: { authorization: 'Bearer sk-metered' } });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), finish + 'data: [DONE]\n\n');
  // The reservation (ceil(body bytes / 4) + max_tokens) stands as the charge, in the next answer's
  // remaining tokens and in the usage records.
  const estimate = Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 4) + 30;
  const next = await postJson(`${rolter.url}/v1/chat/completions`, { ...body, stream: false }, { headers: { authorization: 'Bearer sk-metered' } });
  await next.text();
  assert.equal(Number(next.headers.get('x-ratelimit-remaining-tokens')),
    100000 - estimate - (Math.ceil(Buffer.byteLength(JSON.stringify({ ...body, stream: false })) / 4) + 30));
  const api = adminClient(rolter.url, ADMIN);
  const totals = await recorded(api, 'metered', 2);
  assert.equal(totals.estimated, 2);
  assert.equal(totals.output_tokens, 60);
  await waitUntil(() => /"key":"metered".*"usage_estimated":true/.test(rolter.log.text),
    { timeoutMs: 5000, what: 'the access log to flag the estimate' });
});
