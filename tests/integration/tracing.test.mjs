// Request ids and traces (SPEC §17), end to end: a real rolter in front of recording upstreams,
// exporting to an OTLP receiver started here, whose requests are decoded with the OpenTelemetry
// project's own OTLP definitions (@opentelemetry/otlp-transformer's generated protobufjs code).
//
// What is asserted is what a client, an engine and a collector each see: the x-request-id of
// every answer (and error.request_id in error bodies), the traceparent and x-request-id every
// upstream attempt receives, and the spans: their parent/child structure, their trace id (the
// client's), their GenAI attributes, and the sampling decision (ratio, parent-based).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { createRequire } from 'node:module';
import { startRolter } from '../lib/rolter.mjs';
import { startEchoUpstream } from '../lib/echo_upstream.mjs';
import { postJson, settle, waitUntil, sleep, fetchWithin } from '../lib/http.mjs';
import { scrapeMetrics } from '../lib/metrics.mjs';

const require = createRequire(import.meta.url);
const { opentelemetry } = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const { ExportTraceServiceRequest, ExportTraceServiceResponse } = opentelemetry.proto.collector.trace.v1;
const { SpanKind } = opentelemetry.proto.trace.v1.Span;

const kUuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const kTraceparent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;
const kKey = 'sk-tracing-test';
const kLimitedKey = 'sk-tracing-limited';

// ---------------------------------------------------------------------------------------------
// An OTLP/HTTP receiver: every POST body decoded; spans flattened with hex ids and plain attributes.

const hex = (bytes) => Buffer.from(bytes ?? []).toString('hex');

function plain(anyValue) {
  if (anyValue == null) return undefined;
  if (anyValue.stringValue != null) return anyValue.stringValue;
  if (anyValue.boolValue != null) return anyValue.boolValue;
  if (anyValue.doubleValue != null) return anyValue.doubleValue;
  if (anyValue.intValue != null) {
    const v = anyValue.intValue;
    return typeof v === 'object' ? Number(BigInt.asIntN(64, (BigInt(v.high) << 32n) | BigInt(v.low >>> 0))) : Number(v);
  }
  return undefined;
}

const attributesOf = (list) => Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));

async function startOtlpReceiver() {
  const posts = [];
  const spans = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const decoded = ExportTraceServiceRequest.decode(body);
      posts.push({ path: req.url, contentType: req.headers['content-type'], decoded });
      for (const rs of decoded.resourceSpans) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({
              traceId: hex(s.traceId),
              spanId: hex(s.spanId),
              parentSpanId: hex(s.parentSpanId),
              name: s.name,
              kind: s.kind,
              traceState: s.traceState,
              status: s.status ?? {},
              start: BigInt(s.startTimeUnixNano.toString()),
              end: BigInt(s.endTimeUnixNano.toString()),
              attributes: attributesOf(s.attributes),
              scope: ss.scope?.name,
              resource,
            });
          }
        }
      }
      const answer = ExportTraceServiceResponse.encode({}).finish();
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': answer.length });
      res.end(Buffer.from(answer));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1/traces`,
    posts,
    spans,
    of: (traceId) => spans.filter((s) => s.traceId === traceId),
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}

// A port nothing listens on.
async function closedPort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// ---------------------------------------------------------------------------------------------
// The fleet: two echo upstreams behind route "m"; keys, one of them limited to 1 request a minute.

// `deadUrl`: where nothing listens, the only target of route "dead" (every attempt refused: 502).
function configOver(urls, { tracing, keys = true, deadUrl, extra = '' }) {
  let toml = '[server]\nlisten = "127.0.0.1:0"\nfirst_byte_timeout_ms = 10000\n\n';
  toml += '[retry]\nmax_attempts = 3\non_status = [503]\n\n';
  toml += '[tracing]\n';
  for (const [k, v] of Object.entries(tracing)) toml += `${k} = ${JSON.stringify(v)}\n`;
  toml += '\n';
  urls.forEach((url, i) => { toml += `[[providers]]\nname = "engine-${i}"\nbase_url = "${url}"\n\n`; });
  toml += '[[routes]]\nname = "m"\nstrategy = "round_robin"\n';
  urls.forEach((_, i) => { toml += `[[routes.targets]]\nprovider = "engine-${i}"\nmodel = "up"\n`; });
  if (deadUrl) {
    toml += `\n[[providers]]\nname = "dead"\nbase_url = "${deadUrl}"\n`;
    toml += '\n[[routes]]\nname = "dead"\n[[routes.targets]]\nprovider = "dead"\nmodel = "up"\n';
  }
  if (keys) {
    toml += '\n[[keys]]\nname = "tracing"\nkey_env = "TRACING_KEY"\n';
    toml += '\n[[keys]]\nname = "limited"\nkey_env = "TRACING_LIMITED_KEY"\nrpm = 1\nburst = 1\n';
  }
  return `${toml}\n${extra}`;
}

const keyEnv = { TRACING_KEY: kKey, TRACING_LIMITED_KEY: kLimitedKey };

// Requests whose x-request-id starts with "retry-" fail with 503 on their first attempt, wherever
// it lands, and succeed on the next: a retry that always happens, whatever the round-robin order.
function failFirstAttemptOfRetries(upstreams) {
  const failedOnce = new Set();
  const reply = (record) => {
    const id = record.headerValues('x-request-id')[0] ?? '';
    if (id.startsWith('retry-') && !failedOnce.has(id)) {
      failedOnce.add(id);
      return { status: 503, body: { error: { message: 'busy' } } };
    }
    if (id.startsWith('fail-')) return { status: 503, body: { error: { message: 'busy' } } };
    return {};
  };
  for (const up of upstreams) up.setReply(reply);
}

function ask(rolter, { model = 'm', path = '/v1/chat/completions', headers = {}, key = kKey, stream = false, body } = {}) {
  const request = body ?? (path === '/v1/messages'
    ? { model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }
    : { model, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) });
  const auth = key ? { authorization: `Bearer ${key}` } : {};
  return postJson(`${rolter.url}${path}`, request, { headers: { ...auth, ...headers } }).then(settle);
}

// The requests an upstream got that carry x-request-id `id`.
const received = (upstreams, id) =>
  upstreams.flatMap((u) => u.requests).filter((r) => r.headerValues('x-request-id')[0] === id);

async function spansOf(receiver, traceId, count, what) {
  return waitUntil(() => receiver.of(traceId).length >= count && receiver.of(traceId),
    { timeoutMs: 8000, what: `${count} spans of ${what}` });
}

const byName = (spans, name) => spans.filter((s) => s.name === name);

// ---------------------------------------------------------------------------------------------

let receiver;
let upstreams;
let sampled;    // sample_ratio = 1
let unsampled;  // sample_ratio = 0

before(async () => {
  receiver = await startOtlpReceiver();
  upstreams = [await startEchoUpstream(), await startEchoUpstream()];
  failFirstAttemptOfRetries(upstreams);
  const urls = upstreams.map((u) => u.url);
  const deadUrl = `http://127.0.0.1:${await closedPort()}`;
  sampled = await startRolter({ config: configOver(urls, { deadUrl, tracing: { otlp_endpoint: receiver.url, sample_ratio: 1 } }), env: keyEnv });
  unsampled = await startRolter({ config: configOver(urls, { tracing: { otlp_endpoint: receiver.url, sample_ratio: 0 } }), env: keyEnv });
});

after(async () => {
  await sampled?.stop();
  await unsampled?.stop();
  for (const u of upstreams ?? []) await u.close();
  await receiver?.close();
});

test('one trace from the client through the gateway to the upstream: spans, parents and GenAI attributes', async () => {
  const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
  const clientSpan = '00f067aa0ba902b7';
  const r = await ask(sampled, {
    headers: { 'x-request-id': 'client-req-1', traceparent: `00-${clientTrace}-${clientSpan}-01`, tracestate: 'vendor=1' },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-request-id'), 'client-req-1');

  const [upstream] = received(upstreams, 'client-req-1');
  assert.ok(upstream, 'the upstream got the request id');
  const [sent] = upstream.headerValues('traceparent');
  const m = kTraceparent.exec(sent);
  assert.ok(m, `upstream traceparent ${sent}`);
  assert.equal(m[1], clientTrace, 'the client\'s trace id reaches the upstream');
  assert.notEqual(m[2], clientSpan, 'under the gateway\'s own span');
  assert.equal(m[3], '01');
  assert.deepEqual(upstream.headerValues('tracestate'), ['vendor=1']);

  const spans = await spansOf(receiver, clientTrace, 3, 'the traced request');
  const [request] = byName(spans, 'rolter.request');
  const [route] = byName(spans, 'rolter.route');
  const [attempt] = byName(spans, 'rolter.upstream');
  assert.ok(request && route && attempt, JSON.stringify(spans.map((s) => s.name)));
  assert.equal(request.kind, SpanKind.SPAN_KIND_SERVER);
  assert.equal(request.parentSpanId, clientSpan, 'the request span\'s parent is the client\'s span');
  assert.equal(request.traceState, 'vendor=1');
  assert.equal(route.parentSpanId, request.spanId, 'request → route');
  assert.equal(attempt.parentSpanId, request.spanId, 'request → upstream');
  assert.equal(attempt.kind, SpanKind.SPAN_KIND_CLIENT);
  assert.equal(attempt.spanId, m[2], 'the upstream\'s traceparent names the upstream span');
  assert.ok(request.start <= attempt.start && attempt.end <= request.end);

  assert.equal(request.resource['service.name'], 'rolter');
  assert.match(request.resource['service.version'], /^\d+\.\d+\.\d+/);
  assert.equal(request.scope, 'rolter');

  const a = request.attributes;
  assert.equal(a['rolter.request_id'], 'client-req-1');
  assert.equal(a['http.request.method'], 'POST');
  assert.equal(a['http.route'], '/v1/chat/completions');
  assert.equal(a['http.response.status_code'], 200);
  assert.equal(a['gen_ai.operation.name'], 'chat');
  assert.equal(a['gen_ai.request.model'], 'm');
  assert.equal(a['gen_ai.response.model'], 'up');
  assert.equal(a['gen_ai.provider.name'], 'openai');
  assert.equal(a['gen_ai.usage.input_tokens'], 3);   // the echo upstream's usage block
  assert.equal(a['gen_ai.usage.output_tokens'], 1);

  assert.equal(route.attributes['rolter.route'], 'm');
  assert.equal(route.attributes['rolter.strategy'], 'round_robin');
  assert.match(route.attributes['rolter.winner'], /^engine-[01]\/up$/);
  assert.equal(route.attributes['rolter.reason'], 'strategy_pick');
  assert.ok(JSON.parse(route.attributes['rolter.decision']), 'the candidates\' scores as JSON');

  const u = attempt.attributes;
  assert.equal(u['rolter.attempt'], 1);
  assert.equal(u['rolter.target'], route.attributes['rolter.winner']);
  assert.match(u['rolter.endpoint'], /^engine-[01]@http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(u['http.response.status_code'], 200);
  assert.equal(typeof u['rolter.ttft_s'], 'number');
  assert.equal(u['gen_ai.request.model'], 'up');
  assert.equal(u['gen_ai.usage.input_tokens'], 3);
  assert.equal(u['gen_ai.usage.output_tokens'], 1);

  const post = receiver.posts[0];
  assert.equal(post.path, '/v1/traces');
  assert.equal(post.contentType, 'application/x-protobuf');
});

test('a retried request: two upstream spans numbered 1 and 2, each named by its attempt\'s traceparent', async () => {
  const r = await ask(sampled, { headers: { 'x-request-id': 'retry-1' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.attempts, 2);
  const attempts = received(upstreams, 'retry-1');
  assert.equal(attempts.length, 2, 'both attempts carry the request id');
  const sent = attempts.map((rec) => kTraceparent.exec(rec.headerValues('traceparent')[0]));
  assert.ok(sent[0] && sent[1]);
  assert.equal(sent[0][1], sent[1][1], 'one trace');
  assert.notEqual(sent[0][2], sent[1][2], 'a span per attempt');

  const spans = await spansOf(receiver, sent[0][1], 5, 'the retried request');
  const ups = byName(spans, 'rolter.upstream').sort((x, y) => x.attributes['rolter.attempt'] - y.attributes['rolter.attempt']);
  assert.deepEqual(ups.map((s) => s.attributes['rolter.attempt']), [1, 2]);
  // The upstreams' records are per upstream, not in time order: compare as sets.
  assert.deepEqual(ups.map((s) => s.spanId).sort(), [sent[0][2], sent[1][2]].sort());
  assert.equal(ups[0].attributes['http.response.status_code'], 503);
  assert.equal(ups[1].attributes['http.response.status_code'], 200);
  assert.equal(ups[0].status.code, 2, 'the failed attempt is an error');  // STATUS_CODE_ERROR
  assert.equal(byName(spans, 'rolter.route').length, 2, 'a route span per pick');
  const [request] = byName(spans, 'rolter.request');
  assert.equal(request.attributes['rolter.attempts'], 2);
  for (const s of [...ups, ...byName(spans, 'rolter.route')]) assert.equal(s.parentSpanId, request.spanId);
});

test('x-request-id: the client\'s when valid, else a UUIDv7, the same upstream and on the answer', async () => {
  const cases = [
    { sent: undefined, kept: false },
    { sent: 'has space', kept: false },
    { sent: 'x'.repeat(129), kept: false },
    { sent: 'x'.repeat(128), kept: true },
    { sent: 'a!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~', kept: true },
  ];
  for (const c of cases) {
    const r = await ask(unsampled, { headers: c.sent === undefined ? {} : { 'x-request-id': c.sent } });
    assert.equal(r.status, 200, r.text);
    const id = r.headers.get('x-request-id');
    if (c.kept) {
      assert.equal(id, c.sent);
    } else {
      assert.match(id, kUuidV7, `${c.sent} replaced by a UUIDv7`);
      assert.equal(id[14], '7', 'version nibble 7');
    }
    assert.equal(received(upstreams, id).length, 1, `the upstream got ${id}`);
  }
  // A stream carries it too.
  const s = await ask(unsampled, { stream: true, headers: { 'x-request-id': 'stream-1' } });
  assert.equal(s.status, 200);
  assert.equal(s.headers.get('x-request-id'), 'stream-1');
  assert.ok(s.events.includes('[DONE]'));
});

test('every answer of the gateway\'s own carries the request id, and error bodies error.request_id', async () => {
  const check = (r, status, id) => {
    assert.equal(r.status, status, r.text);
    const header = r.headers.get('x-request-id');
    if (id) assert.equal(header, id); else assert.match(header, kUuidV7);
    assert.equal(r.json?.error?.request_id, header, r.text);
  };
  check(await ask(sampled, { model: 'nope', headers: { 'x-request-id': 'err-404' } }), 404, 'err-404');
  check(await ask(sampled, { key: null, headers: { 'x-request-id': 'err-401' } }), 401, 'err-401');
  check(await ask(sampled, { key: 'sk-wrong' }), 401);
  check(await ask(sampled, { body: '{"model": ', headers: { 'x-request-id': 'err-400' } }), 400, 'err-400');
  // Anthropic's shape on /v1/messages.
  const messages = await ask(sampled, { path: '/v1/messages', model: 'nope', headers: { 'x-request-id': 'err-anthropic' } });
  check(messages, 404, 'err-anthropic');
  assert.equal(messages.json.type, 'error');
  // Every attempt failed (refused): the gateway's 502.
  check(await ask(sampled, { model: 'dead', headers: { 'x-request-id': 'err-502' } }), 502, 'err-502');
  // The last attempt's 503 is the upstream's own answer, relayed: its body is the upstream's, but
  // the answer still carries the id, and both attempts sent it.
  const relayed = await ask(sampled, { headers: { 'x-request-id': 'fail-1' } });
  assert.equal(relayed.status, 503);
  assert.equal(relayed.headers.get('x-request-id'), 'fail-1');
  assert.equal(received(upstreams, 'fail-1').length, 2);
  // A limited key's second request in the minute: 429.
  assert.equal((await ask(sampled, { key: kLimitedKey })).status, 200);
  check(await ask(sampled, { key: kLimitedKey, headers: { 'x-request-id': 'err-429' } }), 429, 'err-429');
  // The gateway's own JSON answers.
  const health = await fetchWithin(`${sampled.url}/healthz`, { headers: { 'x-request-id': 'health-1' } });
  assert.equal(health.headers.get('x-request-id'), 'health-1');
  const models = await fetchWithin(`${sampled.url}/v1/models`, { headers: { authorization: `Bearer ${kKey}` } });
  assert.match(models.headers.get('x-request-id'), kUuidV7);
});

test('sampling: ratio 0 exports nothing of its own but propagates; a caller\'s flag decides either way', async () => {
  const flagOf = (id) => kTraceparent.exec(received(upstreams, id)[0].headerValues('traceparent')[0]);

  // Ratio 0, no parent: a new trace, not sampled, still sent upstream.
  assert.equal((await ask(unsampled, { headers: { 'x-request-id': 'ratio0-none' } })).status, 200);
  const fresh = flagOf('ratio0-none');
  assert.ok(fresh, 'a traceparent goes upstream');
  assert.equal(fresh[3], '00');

  // Ratio 0, a sampled parent: sampled, exported, flag 01 upstream.
  const sampledParent = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
  await ask(unsampled, { headers: { 'x-request-id': 'ratio0-parent', traceparent: `00-${sampledParent}-1111111111111111-01` } });
  assert.equal(flagOf('ratio0-parent')[1], sampledParent);
  assert.equal(flagOf('ratio0-parent')[3], '01');
  await spansOf(receiver, sampledParent, 3, 'the sampled parent\'s request at ratio 0');

  // Ratio 1, an unsampled parent: not sampled, flag 00 upstream, trace id kept.
  const unsampledParent = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
  await ask(sampled, { headers: { 'x-request-id': 'ratio1-unsampled', traceparent: `00-${unsampledParent}-2222222222222222-00` } });
  assert.equal(flagOf('ratio1-unsampled')[1], unsampledParent);
  assert.equal(flagOf('ratio1-unsampled')[3], '00');

  // An invalid traceparent starts a new trace (sampled at ratio 1); its tracestate is dropped.
  await ask(sampled, { headers: { 'x-request-id': 'bad-parent', traceparent: `00-${'C'.repeat(32)}-3333333333333333-01`, tracestate: 'orphan=1' } });
  const restarted = flagOf('bad-parent');
  assert.notEqual(restarted[1], 'c'.repeat(32));
  assert.equal(restarted[3], '01');
  assert.deepEqual(received(upstreams, 'bad-parent')[0].headerValues('tracestate'), []);
  await spansOf(receiver, restarted[1], 3, 'the restarted trace');

  // Nothing came (or comes) for the unsampled ones: a batch goes every second.
  await sleep(2000);
  assert.deepEqual(receiver.of(fresh[1]), []);
  assert.deepEqual(receiver.of(unsampledParent), []);
});

test('a dead collector: requests succeed, spans past max_queue are dropped and counted', async (t) => {
  const port = await closedPort();
  const up = await startEchoUpstream();
  t.after(() => up.close());
  const rolter = await startRolter({
    config: configOver([up.url], {
      keys: false,
      tracing: { otlp_endpoint: `http://127.0.0.1:${port}/v1/traces`, sample_ratio: 1, max_queue: 8 },
    }),
  });
  t.after(() => rolter.stop());
  // 3 spans a request: 60 requests in well under the 1 s between batches overflow 8 places.
  for (let round = 0; round < 6; ++round) {
    const answers = await Promise.all(Array.from({ length: 10 }, () => ask(rolter, { key: null })));
    for (const r of answers) assert.equal(r.status, 200, r.text);
  }
  const value = (text, series) => Number(text.match(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm'))?.[1] ?? NaN);
  const text = await waitUntil(async () => {
    const m = await scrapeMetrics(rolter);
    return value(m, 'rolter_tracing_spans_dropped_total{reason="queue_full"}') > 0 &&
      value(m, 'rolter_tracing_export_failures_total') > 0 && m;
  }, { timeoutMs: 8000, what: 'dropped spans and a failed export to be counted' });
  assert.equal(value(text, 'rolter_tracing_spans_exported_total'), 0);
  assert.ok(value(text, 'rolter_tracing_spans_dropped_total{reason="export_failed"}') > 0);
});
