// Policy mode end to end (SPEC §7): a route over rolter-sim engines serving two models, with a
// decision service that picks the model, least_inflight spreading within the model, and a session
// that stays on its instance until the flip threshold `rolter policy-thresholds` computes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { binDir, startRolter, stopSim } from '../lib/rolter.mjs';
import { startSim } from '../lib/sim.mjs';
import { chat, withDeadline } from '../lib/http.mjs';

const kGreeting = 'Hi there!';
const kHard = 'Prove that there are infinitely many primes, then write code in C++ that implements ' +
  'a sieve and explain the algorithm step by step.';

// Engines: 0 serves the small model, 1 and 2 are the two instances of the large one, 3 answers as
// the decision service. `chat-pair` has no decision plugin: only least_inflight and the session.
function policyConfig(engines, { sessionWeight = 1.2 } = {}) {
  return `[server]
listen = "127.0.0.1:0"
first_byte_timeout_ms = 10000

[[providers]]
name = "small"
base_url = "${engines[0].url}"

[[providers]]
name = "large"
[[providers.instances]]
base_url = "${engines[1].url}"
[[providers.instances]]
base_url = "${engines[2].url}"

[[providers]]
name = "decider"
kind = "decision_service"
base_url = "${engines[3].url}"

[[routes]]
name = "assistant"
strategy = "policy"
[[routes.targets]]
provider = "small"
model = "qwen3-0.6b"
[[routes.targets]]
provider = "large"
model = "qwen3-32b"
[routes.policy.least_inflight]
weight = 1
[routes.policy.session_affinity]
weight = 1
[routes.policy.decision_service]
weight = 10
provider = "decider"
model = "sim-decider"
instructions = "Pick the smallest model that can handle the request well."
criteria = { "qwen3-0.6b" = "fast, simple requests", "qwen3-32b" = "reasoning, math, code" }

[[routes]]
name = "chat-pair"
strategy = "policy"
[[routes.targets]]
provider = "large"
model = "qwen3-32b"
[routes.policy.least_inflight]
weight = 1
[routes.policy.session_affinity]
weight = ${sessionWeight}
`;
}

// Opens a streamed chat completion and resolves once its headers arrived, leaving the stream
// open (the request stays in flight on its engine) until abort() is called.
async function openStream(url, model, { content, headers = {} }) {
  const controller = new AbortController();
  const res = await withDeadline(fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, stream: true, max_tokens: 2000, messages: [{ role: 'user', content }] }),
    signal: controller.signal,
  }), 10000, 'a streamed response to start');
  assert.equal(res.status, 200);
  return {
    engine: Number(res.headers.get('x-sim-engine')),
    target: res.headers.get('x-rolter-target'),
    abort: () => { controller.abort(); res.body?.cancel().catch(() => {}); },
  };
}

function thresholds(args) {
  return new Promise((resolve, reject) => {
    execFile(path.join(binDir, 'rolter'), ['policy-thresholds', ...args, '--json'], { timeout: 10000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`))
        : resolve(JSON.parse(stdout))));
  });
}

async function startFleet(t) {
  // Streams pace one token per 50 ms, so a stream held open stays in flight for the whole test.
  const sim = await startSim({ engines: 4, args: ['--time-scale', '1', '--token-ms', '50'] });
  let rolter;
  t.after(async () => {
    await rolter?.stop();
    await stopSim(sim);
  });
  rolter = await startRolter({ config: policyConfig(sim.engines) });
  return { sim, rolter };
}

test('the decision service sends a greeting to the small model and proof plus code to the large one',
  async (t) => {
    const { rolter } = await startFleet(t);
    for (let i = 0; i < 3; ++i) {
      const easy = await chat(rolter.url, 'assistant', { content: kGreeting });
      assert.equal(easy.status, 200, easy.text);
      assert.equal(easy.target, 'small/qwen3-0.6b');
      assert.equal(easy.engine, 0);
      const hard = await chat(rolter.url, 'assistant', { content: kHard });
      assert.equal(hard.status, 200, hard.text);
      assert.equal(hard.target, 'large/qwen3-32b');
      assert.ok(hard.engine === 1 || hard.engine === 2, `engine ${hard.engine}`);
    }
  });

test('within the chosen model, least_inflight spreads requests across its instances', async (t) => {
  const { rolter } = await startFleet(t);
  const open = [];
  try {
    // Each hard request finds the large instances' in-flight counts from the ones still open.
    for (let i = 0; i < 4; ++i) open.push(await openStream(rolter.url, 'assistant', { content: kHard }));
    for (const s of open) assert.equal(s.target, 'large/qwen3-32b');
    const perEngine = [1, 2].map((e) => open.filter((s) => s.engine === e).length);
    assert.deepEqual(perEngine, [2, 2], `engines of the open streams: ${open.map((s) => s.engine)}`);
  } finally {
    for (const s of open) s.abort();
  }
});

test('a session stays on its instance until the flip threshold of rolter policy-thresholds',
  async (t) => {
    // least_inflight 1 : session_affinity 1.2 over 2 instances; by SPEC §7 the owner keeps the
    // session while 2/3·1.2 + 1/(2+k) > 1/3·1.2 + (1+k)/(2+k), i.e. for k < 4/3 in flight.
    const table = await thresholds(['--targets', '2..2', '--ratios', '1:1.2']);
    const cell = table.find((c) => c.targets === 2 && c.ratio === '1:1.2');
    assert.equal(cell.flip, 2, JSON.stringify(table));
    assert.equal(cell.tie_at ?? null, null, JSON.stringify(table));

    const { rolter } = await startFleet(t);
    const open = [];
    try {
      const session = { 'session-id': 'conversation-42' };
      for (let k = 0; k < cell.flip; ++k) {
        open.push(await openStream(rolter.url, 'chat-pair', { content: `turn ${k}`, headers: session }));
      }
      const owner = open[0].engine;
      assert.ok(owner === 1 || owner === 2);
      for (const s of open) assert.equal(s.engine, owner, 'below the threshold the session stays');
      // The owner now has `flip` requests in flight and the other instance none: it moves.
      open.push(await openStream(rolter.url, 'chat-pair', { content: 'turn moved', headers: session }));
      assert.equal(open.at(-1).engine, 3 - owner, 'at the threshold the session moves');
    } finally {
      for (const s of open) s.abort();
    }
  });

test('a session keeps its instance while loads are equal, and every node agrees on the owner',
  async (t) => {
    const { sim, rolter } = await startFleet(t);
    // A second gateway with the same config: rendezvous hashing needs no shared state.
    const second = await startRolter({ config: policyConfig(sim.engines) });
    t.after(() => second.stop());
    for (let s = 0; s < 8; ++s) {
      const headers = { 'session-id': `user-${s}` };
      const first = await chat(rolter.url, 'chat-pair', { content: 'a', headers });
      assert.equal(first.status, 200, first.text);
      for (let i = 0; i < 3; ++i) {
        const again = await chat(rolter.url, 'chat-pair', { content: `a ${i}`, headers });
        assert.equal(again.engine, first.engine, `session user-${s} moved on one node`);
        const elsewhere = await chat(second.url, 'chat-pair', { content: `b ${i}`, headers });
        assert.equal(elsewhere.engine, first.engine, `session user-${s} differs between nodes`);
      }
    }
  });
