// Several gateway nodes route as one (SPEC §6.17): with [shared_state], what one node's
// cache_aware tree learns reaches the others through a real Redis stream, so a conversation whose
// turns alternate between two `rolter serve` nodes stays on one engine; a node started later
// reads the fleet's recent prefixes back from the stream; and Redis going away costs the sharing,
// never a request.
//
// Every wait is on what the nodes report (rolter_shared_prefix_entries_total, _up), never on time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRolter } from '../lib/rolter.mjs';
import { startSimFor } from '../lib/sim.mjs';
import { chat, waitUntil } from '../lib/http.mjs';
import { scrapeMetrics } from '../lib/metrics.mjs';
import { startRedis } from '../lib/redis.mjs';

const kEngines = 4;
const kConversations = 6;
const kTurns = 3;

function sharedConfig(engines, redisUrl) {
  let toml = '[server]\nlisten = "127.0.0.1:0"\n';
  engines.forEach((e, i) => { toml += `[[providers]]\nname = "engine-${i}"\nbase_url = "${e.url}"\n`; });
  toml += '[[routes]]\nname = "m"\nstrategy = "cache_aware"\n';
  engines.forEach((_, i) => { toml += `[[routes.targets]]\nprovider = "engine-${i}"\nmodel = "sim-model"\n`; });
  if (redisUrl) toml += `[shared_state]\nredis_url = "${redisUrl}"\nkey = "test:prefixes"\n`;
  return toml;
}

// A conversation's messages up to turn `turn`: a long opening of its own, then short turns, so
// each turn's prompt begins with the whole of the previous one.
function messages(conversation, turn) {
  const opening = `Conversation ${conversation}. ` + `Background ${conversation} `.repeat(150);
  const out = [{ role: 'user', content: opening }];
  for (let k = 1; k <= turn; ++k) {
    out.push({ role: 'assistant', content: `answer ${conversation}.${k - 1}` });
    out.push({ role: 'user', content: `follow-up ${conversation}.${k}` });
  }
  return out;
}

async function counter(node, direction) {
  const m = (await scrapeMetrics(node)).match(
    new RegExp(`^rolter_shared_prefix_entries_total\\{direction="${direction}"\\} (\\S+)$`, 'm'));
  return m ? Number(m[1]) : 0;
}

async function gauge(node, name) {
  const m = (await scrapeMetrics(node)).match(new RegExp(`^${name} (\\S+)$`, 'm'));
  return m ? Number(m[1]) : undefined;
}

async function send(node, conversation, turn) {
  const r = await chat(node.url, 'm', { body: { messages: messages(conversation, turn) } });
  assert.equal(r.status, 200, r.text);
  assert.equal(typeof r.engine, 'number', 'the sim names the engine that answered');
  return r.engine;
}

async function startNodes(t, count, redis) {
  const sim = await startSimFor(t, { engines: kEngines, args: ['--time-scale', '0'] });
  const nodes = [];
  t.after(async () => { for (const n of nodes) await n.stop(); });
  for (let i = 0; i < count; ++i) {
    nodes.push(await startRolter({ config: sharedConfig(sim.engines, redis?.url) }));
  }
  return { sim, nodes };
}

// Sends every conversation's turns, turn t of conversation c to nodes[(c + t) % 2], waiting after
// each until the other node has received the insertion. Returns each conversation's engines.
async function alternate(nodes, { firstTurn = 0, turns = kTurns } = {}) {
  const engines = Array.from({ length: kConversations }, () => []);
  for (let turn = firstTurn; turn < firstTurn + turns; ++turn) {
    for (let c = 0; c < kConversations; ++c) {
      const node = nodes[(c + turn) % 2];
      const other = nodes[(c + turn + 1) % 2];
      const before = await counter(other, 'received');
      engines[c].push(await send(node, c, turn));
      await waitUntil(async () => (await counter(other, 'received')) > before,
        { timeoutMs: 10000, what: `the other node to receive conversation ${c}, turn ${turn}` });
    }
  }
  return engines;
}

test('one conversation sent turn by turn alternately to two nodes stays on one engine', async (t) => {
  const redis = await startRedis();
  t.after(() => redis.stop());
  const { nodes } = await startNodes(t, 2, redis);
  await waitUntil(async () => (await gauge(nodes[0], 'rolter_shared_state_up')) === 1 &&
    (await gauge(nodes[1], 'rolter_shared_state_up')) === 1, { timeoutMs: 10000, what: 'both nodes to reach Redis' });

  const engines = await alternate(nodes);
  for (let c = 0; c < kConversations; ++c) {
    assert.equal(new Set(engines[c]).size, 1, `conversation ${c} moved between engines: ${engines[c]}`);
  }
  // Affinity, not one engine for everything: new conversations still spread by load.
  const firsts = new Set(engines.map((e) => e[0]));
  assert.ok(firsts.size >= 3, `conversations spread over ${firsts.size} engine(s)`);
  // Each node sent what it learned, and each received the other's: half the turns each way.
  const expected = (kConversations * kTurns) / 2;
  for (const node of nodes) {
    assert.equal(await counter(node, 'sent'), expected);
    assert.equal(await counter(node, 'received'), expected);
  }
});

test('a node started later reads the recent prefixes back from the stream', async (t) => {
  const redis = await startRedis();
  t.after(() => redis.stop());
  const { sim, nodes } = await startNodes(t, 2, redis);
  const engines = await alternate(nodes, { turns: 1 });

  const late = await startRolter({ config: sharedConfig(sim.engines, redis.url) });
  t.after(() => late.stop());
  await waitUntil(async () => (await counter(late, 'received')) >= kConversations,
    { timeoutMs: 10000, what: 'the new node to replay the stream' });
  for (let c = 0; c < kConversations; ++c) {
    assert.equal(await send(late, c, 1), engines[c][0], `conversation ${c} on the new node`);
  }
});

test('Redis going away costs the sharing, never a request', async (t) => {
  const redis = await startRedis();
  t.after(() => redis.stop());  // stopped below; again here should the test fail first
  const { nodes } = await startNodes(t, 2, redis);
  await waitUntil(async () => (await gauge(nodes[0], 'rolter_shared_state_up')) === 1,
    { timeoutMs: 10000, what: 'the node to reach Redis' });
  await redis.stop();
  for (let i = 0; i < 12; ++i) await send(nodes[i % 2], i, 0);
  await waitUntil(async () => (await gauge(nodes[0], 'rolter_shared_state_up')) === 0 &&
    (await gauge(nodes[1], 'rolter_shared_state_up')) === 0, { timeoutMs: 10000, what: 'both nodes to see Redis down' });
  // A node keeps its own affinity meanwhile: a second turn on the node that saw the first.
  for (let i = 0; i < 4; ++i) {
    const first = await send(nodes[0], 100 + i, 0);
    assert.equal(await send(nodes[0], 100 + i, 1), first);
  }
  for (const node of nodes) assert.ok(node.running(), 'the node is still up');
});
