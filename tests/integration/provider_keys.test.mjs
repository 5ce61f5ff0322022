// A provider's base URL and key as users write them (SPEC §16): both spellings of a base URL reach
// the same upstream path, a key kept in a file rotates on reload with nothing dropped in flight,
// and `rolter check` refuses a key that is missing or empty, naming the file and line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFleet, binDir } from '../lib/rolter.mjs';

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rolter-keys-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function chat(rolter, model, extra = {}) {
  const res = await fetch(`${rolter.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-client' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 3, ...extra }),
    signal: AbortSignal.timeout(10000),
  });
  return { res, body: await res.text() };
}

test('a base_url with or without /v1, and with a version but another path, sends the path users expect', async (t) => {
  const { sim, rolter } = await startFleet(t, {
    engines: 3,
    config: (e) => `
[[providers]]
name = "bare"
base_url = "${e[0].url}"
[[providers]]
name = "versioned"
base_url = "${e[1].url}/v1"
[[providers]]
name = "trailing-slash"
base_url = "${e[2].url}/v1/"
[[routes]]
name = "bare"
targets = [{ provider = "bare", model = "m" }]
[[routes]]
name = "versioned"
targets = [{ provider = "versioned", model = "m" }]
[[routes]]
name = "trailing-slash"
targets = [{ provider = "trailing-slash", model = "m" }]
`,
  });
  for (const [i, route] of ['bare', 'versioned', 'trailing-slash'].entries()) {
    const { res, body } = await chat(rolter, route);
    assert.equal(res.status, 200, body);
    const stats = await sim.stats(i);
    assert.equal(stats.requests, 1, route);
    assert.equal(stats.last_path, '/v1/chat/completions', route);
  }
});

test('a key file rotates on reload: the next request carries the new key and a stream in flight finishes', async (t) => {
  const dir = tempDir(t);
  const keyFile = path.join(dir, 'key');
  fs.writeFileSync(keyFile, 'sk-first\n');
  const { sim, rolter } = await startFleet(t, {
    engines: 1,
    simArgs: ['--ttft-ms', '5', '--token-ms', '40'],
    config: (e) => `
[[providers]]
name = "p"
base_url = "${e[0].url}/v1"
api_key_file = "${keyFile}"
[[routes]]
name = "m"
targets = [{ provider = "p", model = "m" }]
`,
  });
  const first = await chat(rolter, 'm');
  assert.equal(first.res.status, 200, first.body);
  assert.equal((await sim.stats(0)).last_headers.authorization, 'Bearer sk-first');

  // A stream of 25 tokens at 40 ms each is in flight while the key changes.
  const inFlight = fetch(`${rolter.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'long' }], max_tokens: 25, stream: true }),
    signal: AbortSignal.timeout(15000),
  }).then(async (res) => ({ status: res.status, text: await res.text() }));

  fs.writeFileSync(keyFile, 'sk-second\n');
  const mark = rolter.log.text.length;
  rolter.signal('SIGHUP');
  // The text is unchanged, so the version is too; the snapshot is rebuilt all the same.
  await rolter.log.waitFor(/config reloaded \(SIGHUP\)/, { from: mark, timeoutMs: 5000 });

  const second = await chat(rolter, 'm');
  assert.equal(second.res.status, 200, second.body);
  assert.equal((await sim.stats(0)).last_headers.authorization, 'Bearer sk-second');

  const streamed = await inFlight;
  assert.equal(streamed.status, 200);
  assert.match(streamed.text, /data: \[DONE\]/);
  assert.doesNotMatch(streamed.text, /"error"/);
  assert.equal((await sim.stats(0)).requests, 3);

  // An emptied key file fails the reload and keeps serving the last good key.
  fs.writeFileSync(keyFile, '\n');
  const mark2 = rolter.log.text.length;
  rolter.signal('SIGHUP');
  await rolter.log.waitFor(/config reload failed \(SIGHUP\)/, { from: mark2, timeoutMs: 5000 });
  assert.match(rolter.log.text.slice(mark2), /api_key_file: ".*key" is empty/);
  const third = await chat(rolter, 'm');
  assert.equal(third.res.status, 200, third.body);
  assert.equal((await sim.stats(0)).last_headers.authorization, 'Bearer sk-second');
});

test('rolter check refuses a missing or empty key, with file and line, and accepts a present one', (t) => {
  const dir = tempDir(t);
  const config = path.join(dir, 'rolter.toml');
  const check = (text, env = {}) => {
    fs.writeFileSync(config, text);
    return spawnSync(path.join(binDir, 'rolter'), ['check', '--config', config],
      { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 10000 });
  };
  const provider = (line) => `[[providers]]\nname = "p"\nbase_url = "http://127.0.0.1:1"\n${line}\n` +
    '[[routes]]\nname = "m"\ntargets = [{ provider = "p", model = "m" }]\n';

  const missingFile = check(provider('api_key_file = "absent.key"'));
  assert.equal(missingFile.status, 1);
  assert.match(missingFile.stderr, new RegExp(`${config.replaceAll('.', '\\.')}:4:\\d+: providers\\[0\\]\\.api_key_file: cannot read ".*absent\\.key": No such file`));

  fs.writeFileSync(path.join(dir, 'empty.key'), '');
  const emptyFile = check(provider('api_key_file = "empty.key"'));
  assert.equal(emptyFile.status, 1);
  assert.match(emptyFile.stderr, /:4:\d+: providers\[0\]\.api_key_file: ".*empty\.key" is empty/);

  const unsetEnv = check(provider('api_key_env = "ROLTER_TEST_UNSET_KEY"'), { ROLTER_TEST_UNSET_KEY: '' });
  assert.equal(unsetEnv.status, 1);
  assert.match(unsetEnv.stderr, /:4:\d+: providers\[0\]\.api_key_env: environment variable ROLTER_TEST_UNSET_KEY is not set or empty/);

  fs.writeFileSync(path.join(dir, 'good.key'), 'sk-good\n');
  const good = check(provider('api_key_file = "good.key"'));
  assert.equal(good.status, 0, good.stderr);
  assert.match(good.stdout, /OK/);
  assert.doesNotMatch(good.stdout + good.stderr, /sk-good/, 'the key is never printed');
});
