// Keys: who may use which routes and providers, and what /v1/models shows each of them.
// Each test starts its own rolter-sim and rolter (startFleet), so no test depends on another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startFleet, configFor } from '../lib/rolter.mjs';
import { chat, fetchWithin, settle } from '../lib/http.mjs';

const sha256hex = (text) => createHash('sha256').update(text).digest('hex');

// Two engines; `public` spans both, `private` is engine 1 only. Three keys: one for everything,
// one for the `public` route only, one for the engine-0 provider only.
function fleet(t) {
  return startFleet(t, {
    engines: 2,
    config: (engines) => configFor({
      engines,
      routes: [
        { name: 'public', targets: [{ engine: 0, model: 'a' }, { engine: 1, model: 'a' }] },
        { name: 'private', targets: [{ engine: 1, model: 'b' }] },
      ],
      keys: [
        { name: 'everything', key_env: 'KEY_ALL' },
        { name: 'public-only', key_env: 'KEY_PUBLIC', routes: ['public'] },
        { name: 'engine-0-only', key_sha256: sha256hex('sk-engine-0'), providers: ['engine-0'] },
      ],
    }),
    env: { KEY_ALL: 'sk-all', KEY_PUBLIC: 'sk-public' },
  });
}

const ask = (rolter, model, key) =>
  chat(rolter.url, model, { content: 'x', headers: key ? { authorization: `Bearer ${key}` } : {} });

async function requestsPerEngine(sim) {
  return (await sim.allStats()).map((s) => s.requests);
}

test('missing or wrong key: 401, and nothing reaches an engine', async (t) => {
  const { sim, rolter } = await fleet(t);
  const missing = await ask(rolter, 'public');
  assert.equal(missing.status, 401, missing.text);
  assert.match(missing.json.error.message, /missing API key/);
  const wrong = await ask(rolter, 'public', 'sk-nope');
  assert.equal(wrong.status, 401, wrong.text);
  assert.equal(wrong.json.error.code, 'invalid_api_key');
  assert.deepEqual(await requestsPerEngine(sim), [0, 0]);
});

test('a key outside its route allow-list: 403', async (t) => {
  const { sim, rolter } = await fleet(t);
  const allowed = await ask(rolter, 'public', 'sk-public');
  assert.equal(allowed.status, 200, allowed.text);
  const denied = await ask(rolter, 'private', 'sk-public');
  assert.equal(denied.status, 403);
  assert.equal(denied.json.error.type, 'permission_error');
  assert.match(denied.json.error.message, /public-only.*private/);
  assert.equal((await requestsPerEngine(sim)).reduce((a, b) => a + b), 1, 'the denied request reached no engine');

  const everything = await ask(rolter, 'private', 'sk-all');
  assert.equal(everything.status, 200, everything.text);
  assert.equal((await sim.stats(1)).last_model, 'b');
});

test('a key outside its provider allow-list: only allowed providers serve, else 403', async (t) => {
  const { sim, rolter } = await fleet(t);
  for (let i = 0; i < 4; i++) {
    const r = await ask(rolter, 'public', 'sk-engine-0');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.target, 'engine-0/a', 'never routed to a provider the key may not use');
    assert.equal(r.attempts, 1);
  }
  const denied = await ask(rolter, 'private', 'sk-engine-0');
  assert.equal(denied.status, 403);
  assert.equal(denied.json.error.type, 'permission_error');
  assert.deepEqual(await requestsPerEngine(sim), [4, 0]);
});

async function modelsFor(rolter, key) {
  const r = await settle(await fetchWithin(`${rolter.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } }));
  assert.equal(r.status, 200, r.text);
  return r.json.data.map((m) => m.id);
}

test('/v1/models lists what each key may use', async (t) => {
  const { rolter } = await fleet(t);
  assert.deepEqual(await modelsFor(rolter, 'sk-all'), ['public', 'private']);
  assert.deepEqual(await modelsFor(rolter, 'sk-public'), ['public']);
});

// README: `providers` allow-lists "answer 403 and narrow /v1/models": `private`, served by engine-1
// alone, is not listed for a key limited to engine-0.
test('/v1/models hides routes a key\'s provider allow-list cannot reach', async (t) => {
  const { rolter } = await fleet(t);
  assert.deepEqual(await modelsFor(rolter, 'sk-engine-0'), ['public']);
});
