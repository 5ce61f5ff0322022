// Keys: who may use which routes and providers, and what /v1/models shows each of them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSim } from '../lib/sim.mjs';
import { startRolter, configFor } from '../lib/rolter.mjs';

let sim;
let rolter;

before(async () => {
  sim = await startSim({ engines: 2, args: ['--time-scale', '0'] });
  const config = configFor({
    engines: sim.engines,
    routes: [
      { name: 'public', targets: [{ engine: 0, model: 'a' }, { engine: 1, model: 'a' }] },
      { name: 'private', targets: [{ engine: 1, model: 'b' }] },
    ],
  }) + `
[[keys]]
name = "everything"
key_env = "KEY_ALL"

[[keys]]
name = "public-only"
key_env = "KEY_PUBLIC"
routes = ["public"]

[[keys]]
name = "engine-0-only"
key_sha256 = "${await sha256hex('sk-engine-0')}"
providers = ["engine-0"]
`;
  rolter = await startRolter({ config, env: { KEY_ALL: 'sk-all', KEY_PUBLIC: 'sk-public' } });
});

after(async () => {
  await rolter?.stop();
  await sim?.stop();
});

async function sha256hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Buffer.from(digest).toString('hex');
}

async function ask(model, key) {
  const res = await fetch(`${rolter.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }], max_tokens: 1 }),
  });
  return { status: res.status, target: res.headers.get('x-rolter-target'), body: await res.json() };
}

test('missing or wrong key: 401', async () => {
  assert.equal((await ask('public')).status, 401);
  assert.equal((await ask('public', 'sk-nope')).status, 401);
});

test('a key outside its route allow-list: 403', async () => {
  assert.equal((await ask('public', 'sk-public')).status, 200);
  const denied = await ask('private', 'sk-public');
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error.type, 'permission_error');
  assert.match(denied.body.error.message, /public-only.*private/);
  assert.equal((await ask('private', 'sk-all')).status, 200);
});

test('a key outside its provider allow-list: only allowed providers serve, else 403', async () => {
  for (let i = 0; i < 4; i++) {
    const r = await ask('public', 'sk-engine-0');
    assert.equal(r.status, 200);
    assert.equal(r.target, 'engine-0/a', 'never routed to a provider the key may not use');
  }
  const denied = await ask('private', 'sk-engine-0');
  assert.equal(denied.status, 403);
});

test('/v1/models lists what each key may use', async () => {
  const models = async (key) => {
    const res = await fetch(`${rolter.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    return (await res.json()).data.map((m) => m.id);
  };
  assert.deepEqual(await models('sk-all'), ['public', 'private']);
  assert.deepEqual(await models('sk-public'), ['public']);
});
