// A misbehaving fleet under load (notes/http-contract.md item 1, under concurrency): 5,000 requests
// at concurrency 64 through rolter (2 workers) to three raw upstreams that misbehave at random per
// response. Every request carries a unique id the upstream echoes; every client must get exactly
// its own answer, or a clean gateway error, and never someone else's answer, a relayed 1xx or 408,
// or no answer at all.
//
// The behaviour of each response is a pure function of (seed, request id, attempt number for that
// id), so a failing seed replays the same misbehaviour: ROLTER_FLEET_SEED=<seed> node --test ...
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startRawUpstream, response, chunk, LAST_CHUNK } from '../lib/raw_upstream.mjs';
import { startRolter, configFor } from '../lib/rolter.mjs';

const TOTAL = 5000;
const CONCURRENCY = 64;
const UPSTREAMS = 3;
const REQUEST_DEADLINE_MS = 8000;  // > 3 attempts x first_byte_timeout_ms: a miss is a hang
const RUN_BUDGET_MS = 40000;       // requests not started by then fail the test (file stays < 60 s)
const SEED = Number(process.env.ROLTER_FLEET_SEED ?? Math.floor(Math.random() * 2 ** 31));

// Weights of each upstream behaviour. "Complete" kinds deliver a whole answer; a gateway must then
// give the client exactly that answer.
const BEHAVIOURS = [
  ['clean', 25, true],           // Content-Length answer
  ['chunked', 10, true],         // chunked answer in two chunks
  ['extra', 15, true],           // answer + a whole fake response carrying ANOTHER client's id
  ['interim', 15, true],         // 100 and/or 103 before the answer
  ['idle408', 10, true],         // answer, then 408 + close on the idle connection a few ms later
  ['closeDelimited', 15, true],  // no Content-Length, no chunked: the body ends at close
  ['cut', 10, false],            // Content-Length larger than what is sent, then close
];
const COMPLETE = new Set(BEHAVIOURS.filter(([, , c]) => c).map(([n]) => n));
const WEIGHT_SUM = BEHAVIOURS.reduce((s, [, w]) => s + w, 0);

// A 32-bit hash of (seed, id, attempt) → [0, 1): splitmix-style mixing, deterministic per input.
function unit(seed, ...parts) {
  let h = seed >>> 0;
  for (const p of parts) {
    for (const ch of String(p)) {
      h = Math.imul(h ^ ch.charCodeAt(0), 0x9e3779b1) >>> 0;
      h ^= h >>> 15;
    }
    h = Math.imul(h ^ 0x2c1b3c6d, 0x297a2d39) >>> 0;
    h ^= h >>> 13;
  }
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  return (h >>> 0) / 2 ** 32;
}

function behaviourFor(id, attempt) {
  let x = unit(SEED, id, attempt, 'kind') * WEIGHT_SUM;
  for (const [name, weight] of BEHAVIOURS) {
    if (x < weight) return name;
    x -= weight;
  }
  return 'clean';
}

const idName = (n) => `req-${SEED}-${n}`;
// An id followed by a non-digit: a body cut in the middle of its own id is not "another id".
const ID_RE = new RegExp(`req-${SEED}-\\d+(?=\\D)`, 'g');

function answer(id) {
  return JSON.stringify({
    id: `chatcmpl-${id}`, object: 'chat.completion', created: 0, model: 'up',
    choices: [{ index: 0, message: { role: 'assistant', content: id }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  });
}
const JSON_HEAD = { 'Content-Type': 'application/json' };

// upstreamLog: id → [{ upstream, conn, behaviour }] in the order the upstreams saw the attempts.
function misbehave(upstream, upstreamLog) {
  return async (req, ctx) => {
    const id = req.json().messages[0].content;
    const seen = upstreamLog.get(id) ?? [];
    upstreamLog.set(id, seen);
    const attempt = seen.length;
    const behaviour = behaviourFor(id, attempt);
    seen.push({ upstream, conn: req.conn, behaviour });
    const r = (tag) => unit(SEED, id, attempt, tag);
    const body = answer(id);
    switch (behaviour) {
      case 'clean':
        ctx.write(response({ headers: JSON_HEAD, body }));
        break;
      case 'chunked': {
        const cut = 1 + Math.floor(r('split') * (body.length - 1));
        ctx.write(Buffer.concat([response({ headers: { ...JSON_HEAD, 'Transfer-Encoding': 'chunked' }, framing: 'none' }),
          chunk(body.slice(0, cut)), chunk(body.slice(cut)), LAST_CHUNK]));
        break;
      }
      case 'extra': {
        // A plausible answer with an id no client uses: a gateway that reads it as the next answer
        // on the connection hands some other client a well-formed, wrong response.
        const ghost = response({ headers: JSON_HEAD, body: answer(idName(`${id.split('-').at(-1)}000000`)) });
        ctx.write(Buffer.concat([response({ headers: JSON_HEAD, body }), ghost]));
        break;
      }
      case 'interim': {
        const kinds = ['HTTP/1.1 100 Continue\r\n\r\n', 'HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n',
          'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n'];
        ctx.write(kinds[Math.floor(r('interim') * kinds.length)]);
        if (r('pause') < 0.5) await ctx.sleep(1 + Math.floor(r('ms') * 5));
        ctx.write(response({ headers: JSON_HEAD, body }));
        break;
      }
      case 'idle408':
        ctx.write(response({ headers: JSON_HEAD, body }));
        ctx.onIdle(2 + Math.floor(r('ms') * 30), () =>
          ctx.end(response({ status: 408, reason: 'Request Timeout', headers: { Connection: 'close' } }), { destroy: true }));
        break;
      case 'closeDelimited': {
        const headers = r('conn') < 0.5 ? { ...JSON_HEAD, Connection: 'close' } : JSON_HEAD;
        ctx.end(response({ headers, body, framing: 'close' }));
        break;
      }
      case 'cut': {
        const sent = 10 + Math.floor(r('cut') * (body.length - 20));
        ctx.write(Buffer.concat([
          response({ headers: { ...JSON_HEAD, 'Content-Length': String(body.length + 100) }, framing: 'none' }),
          Buffer.from(body.slice(0, sent)),
        ]));
        await ctx.sleep(1 + Math.floor(r('ms') * 5));
        ctx.destroy();
        break;
      }
      default:
        throw new Error(`unknown behaviour ${behaviour}`);
    }
  };
}

// One client request with a hard deadline. Resolves { status, headers, body, complete, info, error,
// timedOut } and never rejects.
function send(agent, port, id) {
  const payload = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: id }] });
  return new Promise((resolve) => {
    const out = { status: 0, headers: {}, body: '', complete: false, info: [], error: null, timedOut: false };
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(out);
    };
    const req = http.request({
      agent, host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    });
    const timer = setTimeout(() => { out.timedOut = true; req.destroy(); finish(); }, REQUEST_DEADLINE_MS);
    req.on('information', (info) => out.info.push(info.statusCode));
    req.on('error', (err) => { out.error ??= err.code ?? err.message; finish(); });
    req.on('response', (res) => {
      out.status = res.statusCode;
      out.headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (d) => { out.body += d; });
      res.on('end', () => { out.complete = res.complete; finish(); });
      res.on('aborted', () => { out.error ??= 'aborted'; });
      res.on('error', (err) => { out.error ??= err.code ?? err.message; finish(); });
      res.on('close', finish);
    });
    req.end(payload);
  });
}

// What the client got, judged against what the upstreams did for that id.
function classify(id, r, seen) {
  const others = [...new Set(r.body.match(ID_RE) ?? [])].filter((x) => x !== id);
  if (others.length) return { outcome: 'misattributed', why: `got ${others.join(',')}` };
  if (r.timedOut) return { outcome: 'hang', why: `no complete answer within ${REQUEST_DEADLINE_MS} ms (status ${r.status})` };
  if (r.info.length) return { outcome: 'relayed_1xx', why: `interim ${r.info.join(',')} relayed` };
  if (r.status === 0) return { outcome: 'no_response', why: `client error ${r.error}` };
  const last = seen?.at(-1);
  if (r.status === 200 && r.complete && !r.error) {
    if (r.body !== answer(id)) return { outcome: 'bad_body', why: r.body.slice(0, 200) };
    if (!last) return { outcome: 'phantom', why: 'a 200 for an id no upstream saw' };
    const attempts = Number(r.headers['x-rolter-attempts']);
    if (!(attempts >= 1 && attempts <= 3)) return { outcome: 'bad_headers', why: `x-rolter-attempts ${r.headers['x-rolter-attempts']}` };
    if (r.headers['x-rolter-target'] !== `engine-${last.upstream}/up`) {
      return { outcome: 'bad_headers', why: `x-rolter-target ${r.headers['x-rolter-target']} but the answer came from engine-${last.upstream}` };
    }
    return { outcome: 'ok' };
  }
  if (r.status === 200) {
    // Head relayed, body cut short: acceptable only when the upstream cut it, and only as an
    // honest prefix of this client's own answer (the client can tell it is incomplete).
    if (last?.behaviour === 'cut' && answer(id).startsWith(r.body)) return { outcome: 'truncated' };
    return { outcome: 'bad_truncation', why: `incomplete 200 (${r.error}) after ${last?.behaviour}: ${r.body.slice(0, 120)}` };
  }
  if ([502, 503, 504].includes(r.status) && r.complete) {
    try {
      const error = JSON.parse(r.body).error;
      if (typeof error?.message === 'string' && typeof error?.type === 'string') return { outcome: 'gateway_error', why: error.message };
    } catch { /* falls through */ }
    return { outcome: 'bad_error_body', why: `${r.status} ${r.body.slice(0, 200)}` };
  }
  if (r.status === 408) return { outcome: 'relayed_408', why: 'an unsolicited 408 reached the client' };
  return { outcome: 'other', why: `status ${r.status} complete=${r.complete} error=${r.error} ${r.body.slice(0, 120)}` };
}

test(`misbehaving fleet: ${TOTAL} requests at concurrency ${CONCURRENCY}, every client gets its own answer or a clean error`, async (t) => {
  t.diagnostic(`seed ${SEED} (replay with ROLTER_FLEET_SEED=${SEED})`);
  console.log(`misbehaving fleet: seed ${SEED}`);
  const upstreamLog = new Map();
  const ups = [];
  let rolter;
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    for (let i = 0; i < UPSTREAMS; i++) ups.push(await startRawUpstream({ respond: misbehave(i, upstreamLog) }));
    // The breaker is out of the way: this test is about framing and attribution, not about
    // taking misbehaving engines out of rotation (cuts count as failures).
    const config = configFor({
      engines: ups,
      routes: [{ name: 'm', strategy: 'round_robin', targets: ups.map((_, i) => ({ engine: i, model: 'up' })) }],
      extra: '\n[breaker]\nfailure_threshold = 1000000\n',
    }).replace('first_byte_timeout_ms = 10000', 'first_byte_timeout_ms = 1500\nupstream_timeout_ms = 6000');
    rolter = await startRolter({ config, workers: 2 });

    const results = new Array(TOTAL);
    let next = 0;
    const budgetEnd = Date.now() + RUN_BUDGET_MS;
    const started = Date.now();
    const worker = async () => {
      while (next < TOTAL && Date.now() < budgetEnd) {
        const n = next++;
        const id = idName(n);
        results[n] = { id, ...(await send(agent, rolter.port, id)) };
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const elapsed = Date.now() - started;

    // Tally: outcome by the last behaviour the upstreams applied to that id.
    const counts = {};
    const table = {};
    const violations = [];
    const incompleteAnswers = [];
    let notStarted = 0;
    for (let n = 0; n < TOTAL; n++) {
      const r = results[n];
      if (!r) { notStarted++; continue; }
      const seen = upstreamLog.get(r.id);
      const { outcome, why } = classify(r.id, r, seen);
      counts[outcome] = (counts[outcome] ?? 0) + 1;
      const last = seen?.at(-1)?.behaviour ?? '(none)';
      table[last] ??= {};
      table[last][outcome] = (table[last][outcome] ?? 0) + 1;
      if (!['ok', 'truncated', 'gateway_error'].includes(outcome)) {
        violations.push(`${r.id} [${(seen ?? []).map((s) => `${s.behaviour}@${s.upstream}#${s.conn}`).join(' ')}]: ${outcome}: ${why}`);
      } else if (COMPLETE.has(last) && outcome !== 'ok') {
        // The upstream's last word was a whole answer, yet the client did not get it.
        incompleteAnswers.push(`${r.id} [${seen.map((s) => `${s.behaviour}@${s.upstream}#${s.conn}`).join(' ')}]: ${outcome}: ${why ?? ''}`);
      }
    }

    const report = [
      `seed ${SEED}: ${TOTAL - notStarted} requests in ${elapsed} ms; ${notStarted} not started within the ${RUN_BUDGET_MS} ms budget`,
      `outcomes: ${JSON.stringify(counts)}`,
      'outcome by the last upstream behaviour:',
      ...Object.entries(table).sort().map(([b, o]) => `  ${b.padEnd(15)} ${JSON.stringify(o)}`),
      `upstream requests: ${ups.map((u) => u.requests.length).join(', ')}; upstream connections: ${ups.map((u) => u.accepted).join(', ')}`,
    ].join('\n');
    console.log(report);
    t.diagnostic(report);

    const show = (list) => `${list.length}, e.g.:\n${list.slice(0, 10).join('\n')}`;
    assert.equal(counts.misattributed ?? 0, 0, `responses carrying someone else's id: ${show(violations.filter((v) => v.includes(': misattributed:')))}`);
    assert.equal(counts.hang ?? 0, 0, `hangs: ${show(violations.filter((v) => v.includes(': hang:')))}`);
    assert.deepEqual(violations, [], `violations: ${show(violations)}`);
    assert.equal(notStarted, 0, `the run did not finish within ${RUN_BUDGET_MS} ms`);
    assert.deepEqual(incompleteAnswers, [], `complete upstream answers the client did not get: ${show(incompleteAnswers)}`);
    // The mix really happened: each kind that ends in a whole answer produced some 200s.
    for (const kind of COMPLETE) {
      assert.ok((table[kind]?.ok ?? 0) > 0, `no 200 after a "${kind}" answer: ${JSON.stringify(table[kind])}`);
    }
    assert.ok((table.cut ? Object.values(table.cut).reduce((a, b) => a + b, 0) : 0) > 0, 'some answers were cut');
    assert.equal((counts.ok ?? 0) + (counts.truncated ?? 0) + (counts.gateway_error ?? 0), TOTAL);
    // Misbehaving connections are not reused, so the upstreams accepted many connections; and
    // every id that got a 200 was answered by some upstream.
    assert.ok(ups.reduce((s, u) => s + u.accepted, 0) > UPSTREAMS);

    // rolter is still serving: one more request with a clean behaviour somewhere in its attempts.
    let extraOk = false;
    for (let k = 0; k < 20 && !extraOk; k++) {
      const id = idName(TOTAL + k);
      const r = await send(agent, rolter.port, id);
      extraOk = classify(id, r, upstreamLog.get(id)).outcome === 'ok';
    }
    assert.ok(extraOk, 'rolter still answers after the run');
  } finally {
    agent.destroy();
    await rolter?.stop();
    for (const u of ups) await u.close();
  }
});
