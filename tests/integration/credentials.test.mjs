// Provider credentials: what reaches the engine. An openai-kind provider gets
// `Authorization: Bearer <its key>` and no x-api-key; an anthropic-kind provider gets
// `x-api-key: <its key>` and no Authorization; a provider without api_key_env gets neither. The
// client's own gateway key (Authorization: Bearer or x-api-key) never reaches any engine, in any
// header, on any endpoint. Asserted from the raw headers each upstream recorded.
// Each test starts its own three upstreams and rolter (gateway), so no test depends on another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRolter } from '../lib/rolter.mjs';
import { fetchWithin, withDeadline } from '../lib/http.mjs';
import { startEchoUpstream } from '../lib/echo_upstream.mjs';

const OPENAI_KEY = 'sk-provider-openai-7f3a91c2';
const ANTHROPIC_KEY = 'sk-ant-provider-b84d06e5';
const GATEWAY_KEY = 'sk-gateway-client-1d9e44a0';

// One test's processes: an upstream per provider kind and a rolter over them, all stopped when the
// test ends (t.after, so a failing test stops them too). Resolves with
// { rolter, openaiUp, anthropicUp, keylessUp }.
async function gateway(t) {
  const g = {};
  t.after(async () => {
    await g.rolter?.stop();
    for (const up of [g.openaiUp, g.anthropicUp, g.keylessUp]) {
      if (up) await withDeadline(up.close(), 5000, 'an echo upstream to close');
    }
  });
  g.openaiUp = await startEchoUpstream();
  g.anthropicUp = await startEchoUpstream();
  g.keylessUp = await startEchoUpstream();
  const { openaiUp, anthropicUp, keylessUp } = g;
  const config = `[server]
listen = "127.0.0.1:0"
first_byte_timeout_ms = 10000

[[providers]]
name = "oai"
kind = "openai"
base_url = "${openaiUp.url}"
api_key_env = "CRED_TEST_OPENAI_KEY"

[[providers]]
name = "ant"
kind = "anthropic"
base_url = "${anthropicUp.url}"
api_key_env = "CRED_TEST_ANTHROPIC_KEY"

[[providers]]
name = "bare"
base_url = "${keylessUp.url}"

[[routes]]
name = "via-openai"
[[routes.targets]]
provider = "oai"
model = "up-openai"

[[routes]]
name = "via-anthropic"
[[routes.targets]]
provider = "ant"
model = "up-anthropic"

[[routes]]
name = "via-bare"
[[routes.targets]]
provider = "bare"
model = "up-bare"

[[keys]]
name = "client"
key_env = "CRED_TEST_GATEWAY_KEY"
`;
  g.rolter = await startRolter({
    config,
    env: {
      CRED_TEST_OPENAI_KEY: OPENAI_KEY,
      CRED_TEST_ANTHROPIC_KEY: ANTHROPIC_KEY,
      CRED_TEST_GATEWAY_KEY: GATEWAY_KEY,
    },
  });
  return g;
}

const endpoints = {
  '/v1/chat/completions': (model) => ({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 1 }),
  '/v1/completions': (model) => ({ model, prompt: 'hello', max_tokens: 1 }),
  '/v1/embeddings': (model) => ({ model, input: 'hello' }),
  '/v1/responses': (model) => ({ model, input: 'hello', max_output_tokens: 1 }),
  '/v1/messages': (model) => ({ model, max_tokens: 1, messages: [{ role: 'user', content: 'hello' }] }),
};

const clientAuth = {
  bearer: { authorization: `Bearer ${GATEWAY_KEY}` },
  'x-api-key': { 'x-api-key': GATEWAY_KEY },
};

// `paths`: the endpoints each kind serves in the client's own API, untranslated (SPEC §16); the
// translated pairs, with their credentials, are end-to-end tests of their own
// (e2e/translation.test.mjs).
const OPENAI_PATHS = ['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/v1/responses'];
const providers = [
  { route: 'via-openai', upstream: (g) => g.openaiUp, model: 'up-openai', paths: OPENAI_PATHS,
    expect: { authorization: [`Bearer ${OPENAI_KEY}`], 'x-api-key': [] } },
  { route: 'via-anthropic', upstream: (g) => g.anthropicUp, model: 'up-anthropic', paths: ['/v1/messages'],
    expect: { authorization: [], 'x-api-key': [ANTHROPIC_KEY] } },
  { route: 'via-bare', upstream: (g) => g.keylessUp, model: 'up-bare', paths: OPENAI_PATHS,
    expect: { authorization: [], 'x-api-key': [] } },
];

// Sends one request through g's rolter and returns the single request the upstream recorded for it.
async function through(g, path, provider, authHeaders, extraHeaders = {}) {
  const up = provider.upstream(g);
  const from = up.requests.length;
  const res = await fetchWithin(`${g.rolter.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...authHeaders, ...extraHeaders },
    body: JSON.stringify(endpoints[path](provider.route)),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `${path} via ${provider.route}: ${text}`);
  assert.equal(res.headers.get('x-rolter-attempts'), '1');
  const [record] = await up.waitForRequests(1, { from, timeoutMs: 5000 });
  assert.equal(up.requests.length - from, 1, 'exactly one request reached the engine');
  assert.equal(record.url, path, 'the engine got the endpoint the client called');
  assert.equal(record.json?.model, provider.model, 'the body is the one this test sent');
  return { record, text };
}

// No header name or value the engine got holds the gateway key, nor another provider's key.
function assertNoGatewayKey(record, label, provider) {
  const own = { 'via-openai': OPENAI_KEY, 'via-anthropic': ANTHROPIC_KEY }[provider.route];
  const forbidden = [GATEWAY_KEY, OPENAI_KEY, ANTHROPIC_KEY].filter((k) => k !== own);
  for (const [name, value] of record.rawHeaders) {
    for (const secret of forbidden) {
      assert.ok(!value.includes(secret) && !name.includes(secret),
        `${label}: ${secret === GATEWAY_KEY ? 'the gateway key' : 'a foreign provider key'} reached the engine in ${name}: ${value}`);
    }
  }
}

for (const provider of providers) {
  for (const path of provider.paths) {
    for (const [how, authHeaders] of Object.entries(clientAuth)) {
      test(`${path}, client key as ${how}, ${provider.route}: the engine sees its own credential only`, async (t) => {
        const g = await gateway(t);
        const label = `${path} ${how} ${provider.route}`;
        const { record } = await through(g, path, provider, authHeaders);
        assert.deepEqual(record.headerValues('authorization'), provider.expect.authorization, `${label}: Authorization`);
        assert.deepEqual(record.headerValues('x-api-key'), provider.expect['x-api-key'], `${label}: x-api-key`);
        assertNoGatewayKey(record, label, provider);
      });
    }
  }
}

test('a client sending its key in both headers, plus a stray Proxy-Authorization: nothing of it reaches any engine', async (t) => {
  const g = await gateway(t);
  for (const provider of providers) {
    for (const path of provider.paths) {
      const label = `${path} ${provider.route}`;
      const { record } = await through(g, path, provider,
        { authorization: `Bearer ${GATEWAY_KEY}`, 'x-api-key': GATEWAY_KEY },
        { 'proxy-authorization': `Bearer ${GATEWAY_KEY}` });
      assert.deepEqual(record.headerValues('authorization'), provider.expect.authorization, `${label}: Authorization`);
      assert.deepEqual(record.headerValues('x-api-key'), provider.expect['x-api-key'], `${label}: x-api-key`);
      assert.deepEqual(record.headerValues('proxy-authorization'), [], `${label}: Proxy-Authorization`);
      assertNoGatewayKey(record, label, provider);
    }
  }
});

test('the gateway key is still required: without it nothing reaches an engine', async (t) => {
  const g = await gateway(t);
  const before = providers.map((p) => p.upstream(g).requests.length);
  for (const provider of providers) {
    for (const path of Object.keys(endpoints)) {
      const res = await fetchWithin(`${g.rolter.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${OPENAI_KEY}` },
        body: JSON.stringify(endpoints[path](provider.route)),
      });
      await res.arrayBuffer();
      assert.equal(res.status, 401, `${path} ${provider.route} with a provider's key instead of a gateway key`);
    }
  }
  assert.deepEqual(providers.map((p) => p.upstream(g).requests.length), before);
});

test('a streamed chat through each OpenAI-compatible provider carries the same credential', async (t) => {
  const g = await gateway(t);
  for (const provider of providers.filter((p) => p.paths.includes('/v1/chat/completions'))) {
    const up = provider.upstream(g);
    const from = up.requests.length;
    const res = await fetchWithin(`${g.rolter.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': GATEWAY_KEY },
      body: JSON.stringify({ model: provider.route, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.match(text, /\[DONE\]/);
    const [record] = await up.waitForRequests(1, { from });
    assert.deepEqual(record.headerValues('authorization'), provider.expect.authorization);
    assert.deepEqual(record.headerValues('x-api-key'), provider.expect['x-api-key']);
    assertNoGatewayKey(record, `stream ${provider.route}`, provider);
  }
});
