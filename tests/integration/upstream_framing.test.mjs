// Upstream framing, driven by raw-socket upstreams (tests/lib/raw_upstream.mjs): what a gateway must
// do with the bytes an engine actually sends. Each test names the item of
// notes/http-contract.md it proves. Connection numbers come from the upstream's own accept count,
// so "went out on a new connection" is observed, not inferred.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import {
  startRawUpstream, response, chunk, LAST_CHUNK, sseHead, sse, rawExchange, rawPost,
} from '../lib/raw_upstream.mjs';
import { startRolter, configFor } from '../lib/rolter.mjs';

// ---------------------------------------------------------------------------------------------
// Helpers.

const JSON_HEAD = { 'Content-Type': 'application/json' };

// A chat completion whose content is the request id: a relayed answer proves whose it is.
function chatAnswer(id, usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }) {
  return JSON.stringify({
    id: `chatcmpl-${id}`, object: 'chat.completion', created: 0, model: 'up',
    choices: [{ index: 0, message: { role: 'assistant', content: id }, finish_reason: 'stop' }], usage,
  });
}
const idOf = (req) => req.json().messages[0].content;
const clean = (req, ctx) => ctx.write(response({ headers: JSON_HEAD, body: chatAnswer(idOf(req)) }));

// One raw upstream behind a rolter with route "m" → engine-0/up. Pool tests use one worker: with
// two, the next request may land on the other worker's pool and get a new connection for free.
// `kind`: the provider's kind; an Anthropic Messages upstream is kind "anthropic", so /v1/messages
// reaches it untranslated.
async function gateway(respond, { workers = 1, server = '', extra = '', kind } = {}) {
  const up = await startRawUpstream({ respond });
  const providerFields = kind ? { kind } : {};
  const config = configFor({ engines: [up], routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }] }], extra, providerFields })
    .replace('[server]\n', `[server]\n${server}`);
  let rolter;
  try {
    rolter = await startRolter({ config, workers });
  } catch (err) {
    await up.close();
    throw err;
  }
  return { up, rolter, async stop() { await rolter.stop(); await up.close(); } };
}

// One chat request over a fresh raw keep-alive connection; returns once one complete response
// (of any status: a relayed 1xx is a failure to see, not to wait through) arrived or rolter
// closed, with everything rolter sent, parsed. Keep-alive, because a
// gateway may fairly decline to pool an upstream connection whose client asked to close.
async function ask(rolter, id, { headers = {}, body, path = '/v1/chat/completions' } = {}) {
  const payload = body ?? { model: 'm', messages: [{ role: 'user', content: id }] };
  const all = { Connection: 'keep-alive', ...headers };
  const untilComplete = /keep-alive/i.test(all.Connection) && (() => true);
  const ex = await rawExchange(rolter.port, rawPost(path, payload, all), { deadlineMs: 10000, untilComplete });
  assert.ok(!ex.timedOut, `no complete answer within 10 s for ${id}; received:\n${ex.text}`);
  return ex;
}

// Exactly one well-formed response, returned.
function only(ex) {
  assert.equal(ex.responses.length, 1, `expected exactly one response, got:\n${ex.text}`);
  const [res] = ex.responses;
  assert.ok(!res.garbage, `unparsable bytes from rolter:\n${ex.text}`);
  return res;
}

function assertOwnAnswer(ex, id, usage) {
  const res = only(ex);
  assert.equal(res.status, 200, ex.text);
  assert.ok(res.complete, `body cut short:\n${ex.text}`);
  assert.equal(res.text, chatAnswer(id, usage), 'the client receives exactly its own answer');
  return res;
}

// The next JSON line rolter logs for a proxied request after log offset `from`.
async function requestLogLine(rolter, from) {
  const m = await rolter.log.waitFor(/^(\{[^\n]*"event":"request"[^\n]*\})$/m, { from, timeoutMs: 10000 });
  return JSON.parse(m[1]);
}

function metricValue(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

async function scrape(rolter) {
  const res = await fetch(`${rolter.url}/metrics`, { signal: AbortSignal.timeout(5000) });
  assert.equal(res.status, 200);
  return res.text();
}

// ---------------------------------------------------------------------------------------------
// Item 1: pool cleanliness. After the first answer, the next request must go out on a new upstream
// connection (or, for the control row, on the same one) and get its own answer.

const poolCases = [
  {
    name: 'a clean Content-Length answer (control: the connection IS reused)',
    first: clean,
    reused: true,
  },
  {
    name: 'extra bytes after a Content-Length body (a whole second response)',
    first: (req, ctx) => ctx.write(Buffer.concat([
      response({ headers: JSON_HEAD, body: chatAnswer(idOf(req)) }),
      response({ headers: JSON_HEAD, body: chatAnswer('ghost') }),
    ])),
    reused: false,
  },
  {
    name: 'a few stray bytes after a Content-Length body',
    first: (req, ctx) => ctx.write(Buffer.concat([
      response({ headers: JSON_HEAD, body: chatAnswer(idOf(req)) }), Buffer.from('\r\n\r\nHTTP/1.1 200'),
    ])),
    reused: false,
  },
  {
    name: 'a 204 that carries a body',
    first: (req, ctx) => ctx.write(Buffer.concat([
      response({ status: 204, framing: 'none' }), Buffer.from(chatAnswer('ghost')),
    ])),
    firstStatus: 204,
    reused: false,
  },
  {
    name: 'a 304 with Content-Length and a body',
    first: (req, ctx) => {
      const body = chatAnswer('ghost');
      ctx.write(Buffer.concat([
        response({ status: 304, headers: { 'Content-Length': Buffer.byteLength(body) }, framing: 'none' }),
        Buffer.from(body),
      ]));
    },
    firstStatus: 304,
    reused: false,
  },
  {
    name: 'a close-delimited body (no Content-Length, no chunked)',
    first: (req, ctx) => ctx.end(response({ headers: JSON_HEAD, body: chatAnswer(idOf(req)), framing: 'close' })),
    reused: false,
  },
  {
    name: 'a close-delimited body written in pieces with a pause',
    first: async (req, ctx) => {
      const body = chatAnswer(idOf(req));
      ctx.write(response({ headers: JSON_HEAD, framing: 'none' }));
      ctx.write(body.slice(0, 20));
      await ctx.sleep(50);
      ctx.end(body.slice(20));
    },
    reused: false,
  },
  {
    name: 'an unsolicited 408 + close on the idle connection, 50 ms after a clean answer',
    first: (req, ctx) => {
      clean(req, ctx);
      ctx.onIdle(50, () => ctx.end(response({ status: 408, reason: 'Request Timeout', headers: { Connection: 'close' } }), { destroy: true }));
    },
    // The next request goes out only once the upstream has written the 408 and closed: the
    // gateway then holds a pooled connection with a 408 and an EOF waiting in it.
    settle: (up, conn) => up.waitFor(() => up.connections[conn - 1].closed, 5000, 'the upstream to write its 408 and close'),
    reused: false,
  },
  (() => {
    let markWritten;
    const written = new Promise((resolve) => { markWritten = resolve; });
    return {
      name: 'a ghost 200 written on the idle connection, 50 ms after a clean answer, left open',
      first: (req, ctx) => {
        clean(req, ctx);
        ctx.onIdle(50, () => ctx.socket.write(response({ headers: JSON_HEAD, body: chatAnswer('ghost') }), markWritten));
      },
      // The next request goes out only once the ghost sits in the pooled connection: only a look
      // at the idle connection before reuse can tell (no 408, no EOF to give it away).
      settle: () => Promise.race([written, new Promise((_, reject) => setTimeout(
        () => reject(new Error('timed out waiting for the upstream to write its ghost answer')), 5000).unref())]),
      reused: false,
    };
  })(),
];

for (const c of poolCases) {
  test(`item 1: pool cleanliness after ${c.name}`, async () => {
    let n = 0;
    const g = await gateway((req, ctx) => (n++ === 0 ? c.first(req, ctx) : clean(req, ctx)));
    try {
      const first = await ask(g.rolter, 'first-id');
      const res1 = only(first);
      assert.equal(res1.status, c.firstStatus ?? 200, first.text);
      if ((c.firstStatus ?? 200) === 200) assertOwnAnswer(first, 'first-id');
      else assert.equal(res1.body.length, 0, `a ${c.firstStatus} is relayed without a body`);
      assert.doesNotMatch(first.text, /ghost/);
      assert.equal(g.up.requests.length, 1);
      const conn1 = g.up.requests[0].conn;
      if (c.settle) await c.settle(g.up, conn1);

      const second = await ask(g.rolter, 'second-id');
      assertOwnAnswer(second, 'second-id');
      // (Not a bare /408/: the x-request-id, a random UUID, may hold those digits.)
      assert.doesNotMatch(second.text, /ghost|HTTP\/1\.1 408|Request Timeout/, 'nothing left over from the first exchange');
      const res2 = only(second);
      assert.equal(res2.header('x-rolter-target'), 'engine-0/up');
      // A pooled connection that turned out dead is resent without counting an attempt.
      assert.equal(res2.header('x-rolter-attempts'), '1');
      const seen = g.up.requestsWith('second-id');
      assert.equal(seen.length, 1, 'the upstream received the second request exactly once');
      if (c.reused) {
        assert.equal(seen[0].conn, conn1, 'a clean keep-alive connection is reused (else this table proves nothing)');
      } else {
        assert.notEqual(seen[0].conn, conn1, 'the second request went out on a NEW upstream connection');
      }
    } finally {
      await g.stop();
    }
  });
}

const interimCases = [
  { name: '100 Continue', interim: 'HTTP/1.1 100 Continue\r\n\r\n' },
  { name: '103 Early Hints with a Link', interim: 'HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n' },
  { name: '100 Continue then 103 Early Hints', interim: 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n' },
  { name: '100 Continue in its own packet, 30 ms before the answer', interim: 'HTTP/1.1 100 Continue\r\n\r\n', pauseMs: 30 },
];

for (const c of interimCases) {
  test(`item 1: an interim ${c.name} before the final 200 is not relayed`, async () => {
    const g = await gateway(async (req, ctx) => {
      ctx.write(c.interim);
      if (c.pauseMs) await ctx.sleep(c.pauseMs);
      clean(req, ctx);
    });
    try {
      for (const id of ['interim-1', 'interim-2']) {
        const ex = await ask(g.rolter, id);
        assert.match(ex.text, /^HTTP\/1\.1 200 /, 'the first bytes the client sees are the final 200');
        assertOwnAnswer(ex, id);
        assert.equal(only(ex).header('x-rolter-attempts'), '1');
        assert.doesNotMatch(ex.text, /HTTP\/1\.1 1\d\d|Early Hints|Continue/);
        assert.equal(g.up.requestsWith(id).length, 1);
      }
    } finally {
      await g.stop();
    }
  });
}

test('item 1: 101 Switching Protocols from an upstream is a 502, and that connection is never reused', async () => {
  const upgraded = new Set();
  const g = await gateway((req, ctx) => {
    if (idOf(req).startsWith('upgrade')) {
      upgraded.add(req.conn);
      ctx.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
      return;  // the connection stays open, now "speaking" another protocol
    }
    clean(req, ctx);
  });
  try {
    const ex = await ask(g.rolter, 'upgrade-me');
    const res = only(ex);
    assert.equal(res.status, 502, ex.text);
    const error = JSON.parse(res.text).error;
    assert.equal(typeof error.message, 'string');
    assert.ok(error.type);
    assert.doesNotMatch(ex.text, /Switching Protocols|websocket/i);
    assert.ok(upgraded.size >= 1);

    const next = await ask(g.rolter, 'after-upgrade');
    assertOwnAnswer(next, 'after-upgrade');
    const [seen] = g.up.requestsWith('after-upgrade');
    assert.ok(!upgraded.has(seen.conn), 'the next request did not go out on an upgraded connection');
  } finally {
    await g.stop();
  }
});

// ---------------------------------------------------------------------------------------------
// Item 2: any three-digit status passes through with its number and the upstream's reason phrase.

const oddStatuses = [
  [299, 'Custom Two Ninety Nine'],
  [418, "I'm a teapot"],
  [520, 'Web Server Returned an Unknown Error'],
  [521, 'Web Server Is Down'],
  [522, 'Connection Timed Out'],
  [523, 'Origin Is Unreachable'],
  [524, 'A Timeout Occurred'],
];

test('item 2: odd statuses pass through with their number and reason phrase, not retried', async () => {
  const g = await gateway((req, ctx) => {
    const status = Number(idOf(req).split('-')[1]);
    const [, reason] = oddStatuses.find(([s]) => s === status);
    ctx.write(response({ status, reason, headers: JSON_HEAD, body: JSON.stringify({ upstream_status: status }) }));
  }, { workers: 2 });
  try {
    for (const [status, reason] of oddStatuses) {
      const id = `status-${status}`;
      const ex = await ask(g.rolter, id);
      const res = only(ex);
      assert.equal(res.statusLine, `HTTP/1.1 ${status} ${reason}`);
      assert.ok(res.complete);
      assert.deepEqual(JSON.parse(res.text), { upstream_status: status }, 'the upstream body is relayed');
      assert.equal(res.header('x-rolter-attempts'), '1', `${status} is not in the retry set`);
      assert.equal(res.header('x-rolter-target'), 'engine-0/up');
      assert.equal(g.up.requestsWith(id).length, 1, `${status} was sent upstream once`);
    }
  } finally {
    await g.stop();
  }
});

// ---------------------------------------------------------------------------------------------
// Item 4 (response side) and Accept-Encoding.

test('item 4: hop-by-hop response headers never reach the client; end-to-end ones do; Via is added', async () => {
  const g = await gateway((req, ctx) => ctx.write(response({
    headers: [
      ['Content-Type', 'application/json'],
      ['Connection', 'X-Resp-Hop'],
      ['X-Resp-Hop', '1'],
      ['Keep-Alive', 'timeout=5'],
      ['Upgrade', 'foo'],
      ['Proxy-Connection', 'x'],
      ['X-Keep-Resp', 'kept'],
    ],
    body: chatAnswer(idOf(req)),
  })), { workers: 2 });
  try {
    for (const connection of ['close', 'keep-alive']) {
      const id = `hop-${connection}`;
      const ex = await ask(g.rolter, id, { headers: { Connection: connection } });
      const res = only(ex);
      assert.equal(res.status, 200, ex.text);
      assert.equal(res.text, chatAnswer(id));
      for (const name of ['x-resp-hop', 'keep-alive', 'upgrade', 'proxy-connection']) {
        assert.equal(res.header(name), undefined, `${name} reached the client:\n${ex.text}`);
      }
      for (const value of res.headerAll('connection')) {
        assert.doesNotMatch(value, /x-resp-hop|upgrade/i, `Connection: ${value}`);
      }
      assert.equal(res.header('x-keep-resp'), 'kept', 'end-to-end headers pass');
      assert.equal(res.header('via'), '1.1 rolter');
    }
  } finally {
    await g.stop();
  }
});

// A gzip-capable upstream, like a real server behind a compression middleware: it compresses when
// the request allows it. A gateway that forwarded the client's Accept-Encoding would get gzip back.
function gzipCapable(bodyFor) {
  return (req, ctx) => {
    const body = Buffer.from(bodyFor(req));
    const ae = req.header('accept-encoding') ?? '';
    if (/gzip/i.test(ae)) {
      ctx.write(response({ headers: { ...JSON_HEAD, 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' }, body: gzipSync(body) }));
    } else {
      ctx.write(response({ headers: JSON_HEAD, body }));
    }
  };
}

const acceptEncodings = [undefined, 'gzip', 'gzip, deflate, br', 'br;q=1.0, gzip;q=0.8, *;q=0.1', 'identity', 'zstd'];

test('item 4: the upstream always receives Accept-Encoding: identity; the client gets the plain body', async () => {
  const g = await gateway(gzipCapable((req) => chatAnswer(idOf(req))), { workers: 2 });
  try {
    for (const [i, ae] of acceptEncodings.entries()) {
      const id = `ae-${i}`;
      const ex = await ask(g.rolter, id, { headers: ae === undefined ? {} : { 'Accept-Encoding': ae } });
      const res = assertOwnAnswer(ex, id);
      assert.equal(res.header('content-encoding'), undefined, `client sent ${ae}`);
      const [seen] = g.up.requestsWith(id);
      assert.deepEqual(seen.headerAll('accept-encoding'), ['identity'], `client sent ${ae}; upstream head:\n${seen.rawHead}`);
    }
  } finally {
    await g.stop();
  }
});

// ---------------------------------------------------------------------------------------------
// Item 10: usage is still counted for a client that asked for gzip.

test('item 10: with client Accept-Encoding: gzip, tokens are counted in the log and rolter_tokens_total', async () => {
  const usage = { prompt_tokens: 123, completion_tokens: 45, total_tokens: 168 };
  const g = await gateway((req, ctx) => {
    const body = req.json();
    if (!body.stream) return gzipCapable((r) => chatAnswer(idOf(r), usage))(req, ctx);
    // Streamed: gzip over the whole SSE body when allowed, as a compressing middleware would.
    const events = sse({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: idOf(req) } }] }) +
      sse({ id: 'c', object: 'chat.completion.chunk', choices: [], usage }) + sse('[DONE]');
    const gz = /gzip/i.test(req.header('accept-encoding') ?? '');
    ctx.write(Buffer.concat([
      sseHead(gz ? { 'Content-Encoding': 'gzip' } : {}), chunk(gz ? gzipSync(events) : events), LAST_CHUNK,
    ]));
  }, { workers: 2 });
  try {
    const before = await scrape(g.rolter);
    const inBefore = metricValue(before, 'rolter_tokens_total{direction="in",route="m"}');
    const outBefore = metricValue(before, 'rolter_tokens_total{direction="out",route="m"}');

    let mark = g.rolter.log.text.length;
    const ex = await ask(g.rolter, 'gz-plain', { headers: { 'Accept-Encoding': 'gzip' } });
    let line = await requestLogLine(g.rolter, mark);
    assert.equal(line.status, 200);
    assert.equal(line.tokens_in, 123, JSON.stringify(line));
    assert.equal(line.tokens_out, 45, JSON.stringify(line));
    assertOwnAnswer(ex, 'gz-plain', usage);

    mark = g.rolter.log.text.length;
    const streamed = await ask(g.rolter, 'gz-stream', {
      headers: { 'Accept-Encoding': 'gzip, deflate' },
      body: { model: 'm', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'gz-stream' }] },
    });
    const res = only(streamed);
    assert.equal(res.status, 200);
    assert.equal(res.header('content-encoding'), undefined);
    assert.match(res.text, /"usage":\{"prompt_tokens":123/);
    assert.match(res.text, /data: \[DONE\]/);
    line = await requestLogLine(g.rolter, mark);
    assert.equal(line.tokens_in, 123, JSON.stringify(line));
    assert.equal(line.tokens_out, 45, JSON.stringify(line));

    for (const r of g.up.requests) assert.deepEqual(r.headerAll('accept-encoding'), ['identity']);
    const after = await scrape(g.rolter);
    assert.equal(metricValue(after, 'rolter_tokens_total{direction="in",route="m"}') - inBefore, 246);
    assert.equal(metricValue(after, 'rolter_tokens_total{direction="out",route="m"}') - outBefore, 90);
  } finally {
    await g.stop();
  }
});

// ---------------------------------------------------------------------------------------------
// Item 6: upstream_timeout_ms cuts a stream that never ends, even when every read completes at once.

test('item 6: upstream_timeout_ms = 1000 cuts an endless tight-loop SSE stream with an error event', async () => {
  const block = chunk(sse({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'x' } }] }).repeat(256));
  const flood = (req, ctx) => new Promise((resolve) => {
    ctx.socket.once('close', resolve);
    ctx.write(sseHead());
    // Writes as fast as the socket takes it, forever: rolter's reads never wait.
    const pump = () => {
      for (let i = 0; i < 64; i++) {
        if (ctx.socket.destroyed) return;
        if (!ctx.socket.write(block)) { ctx.socket.once('drain', pump); return; }
      }
      setImmediate(pump);
    };
    pump();
  });
  const g = await gateway((req, ctx) => (idOf(req) === 'endless' ? flood(req, ctx) : clean(req, ctx)), {
    workers: 2, server: 'upstream_timeout_ms = 1000\n',
  });
  try {
    const mark = g.rolter.log.text.length;
    const started = Date.now();
    const res = await fetch(`${g.rolter.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'endless' }] }),
      signal: AbortSignal.timeout(15000),
    });
    assert.equal(res.status, 200);
    // Only the tail is kept: a second of loopback flood is hundreds of MB.
    let tail = '';
    let bytes = 0;
    let ended = 'end';
    const decoder = new TextDecoder();
    try {
      for await (const piece of res.body) {
        bytes += piece.length;
        tail = (tail + decoder.decode(piece, { stream: true })).slice(-65536);
      }
    } catch (err) {
      // A cut after the error event is acceptable; the 15 s abort is not.
      ended = err.name;
      assert.notEqual(err.name, 'TimeoutError', `the stream did not end within 15 s (${bytes} bytes relayed)`);
    }
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 15000, `ended after ${elapsed} ms`);
    assert.ok(bytes > 0, 'the stream flowed before the cut');
    const events = tail.split('\n\n').filter((e) => e.trim() !== '');
    const last = events.at(-1);
    assert.match(last, /^data: \{"error":/, `the stream ends with an error event (ended by ${ended}); tail:\n${tail.slice(-400)}`);
    assert.doesNotMatch(last, /^event:/m, 'chat completions errors carry no event: line');
    assert.equal(JSON.parse(last.slice('data: '.length)).error.type, 'api_error');
    assert.doesNotMatch(tail, /\[DONE\]/);

    const line = await requestLogLine(g.rolter, mark);
    assert.equal(line.status, 200);
    assert.equal(line.complete, false, JSON.stringify(line));

    assertOwnAnswer(await ask(g.rolter, 'still-serving'), 'still-serving');
  } finally {
    await g.stop();
  }
});

// ---------------------------------------------------------------------------------------------
// Item 11: TTFT is the time to the first SSE event that carries content.

const ttftCases = [
  {
    name: 'chat: role-only chunk, then content',
    path: '/v1/chat/completions',
    body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'ttft' }] },
    empty: [sse({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] })],
    content: sse({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hi' } }] }),
    done: sse('[DONE]'),
  },
  {
    name: 'chat: reasoning_content first',
    path: '/v1/chat/completions',
    body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'ttft' }] },
    empty: [sse({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: '', reasoning_content: '' } }] })],
    content: sse({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { reasoning_content: 'Hmm' } }] }),
    done: sse('[DONE]'),
  },
  {
    name: 'chat: tool-call arguments',
    path: '/v1/chat/completions',
    body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'ttft' }] },
    empty: [sse({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] } }] })],
    content: sse({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] } }] }),
    done: sse('[DONE]'),
  },
  {
    name: 'completions: empty text, then text',
    path: '/v1/completions',
    body: { model: 'm', stream: true, prompt: 'ttft' },
    empty: [sse({ object: 'text_completion', choices: [{ index: 0, text: '' }] })],
    content: sse({ object: 'text_completion', choices: [{ index: 0, text: 'Hi' }] }),
    done: sse('[DONE]'),
  },
  {
    name: 'responses: created and in_progress, then an output_text delta',
    path: '/v1/responses',
    body: { model: 'm', stream: true, input: 'ttft' },
    empty: [
      sse({ type: 'response.created', sequence_number: 0, response: { id: 'r', status: 'in_progress' } }, 'response.created'),
      sse({ type: 'response.output_text.delta', sequence_number: 1, delta: '' }, 'response.output_text.delta'),
    ],
    content: sse({ type: 'response.output_text.delta', sequence_number: 2, delta: 'Hi' }, 'response.output_text.delta'),
    done: sse({ type: 'response.completed', sequence_number: 3, response: { id: 'r', status: 'completed' } }, 'response.completed'),
  },
  {
    name: 'messages: message_start and an empty text block, then a text_delta',
    path: '/v1/messages',
    headers: { 'anthropic-version': '2023-06-01' },
    body: { model: 'm', stream: true, max_tokens: 8, messages: [{ role: 'user', content: 'ttft' }] },
    empty: [
      sse({ type: 'message_start', message: { id: 'msg', role: 'assistant', content: [] } }, 'message_start'),
      sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
    ],
    content: sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } }, 'content_block_delta'),
    done: sse({ type: 'message_stop' }, 'message_stop'),
  },
  {
    name: 'messages: tool input partial_json',
    path: '/v1/messages',
    headers: { 'anthropic-version': '2023-06-01' },
    body: { model: 'm', stream: true, max_tokens: 8, messages: [{ role: 'user', content: 'ttft' }] },
    empty: [
      sse({ type: 'message_start', message: { id: 'msg', role: 'assistant', content: [] } }, 'message_start'),
      sse({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'f', input: {} } }, 'content_block_start'),
      sse({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } }, 'content_block_delta'),
    ],
    content: sse({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"a":' } }, 'content_block_delta'),
    done: sse({ type: 'message_stop' }, 'message_stop'),
  },
];

for (const c of ttftCases) {
  test(`item 11: ttft_ms is the time to the first content event (${c.name})`, async () => {
    const g = await gateway(async (req, ctx) => {
      // The head and the empty events at once; content after 300 ms; the end 300 ms later.
      ctx.write(Buffer.concat([sseHead(), chunk(c.empty.join(''))]));
      await ctx.sleep(300);
      ctx.write(chunk(c.content));
      await ctx.sleep(300);
      ctx.write(Buffer.concat([chunk(c.done), LAST_CHUNK]));
    }, { workers: 2, kind: c.path === '/v1/messages' ? 'anthropic' : undefined });
    try {
      const mark = g.rolter.log.text.length;
      const ex = await ask(g.rolter, 'ttft', { path: c.path, body: c.body, headers: c.headers ?? {} });
      const res = only(ex);
      assert.equal(res.status, 200, ex.text);
      assert.ok(res.complete);
      assert.equal(res.text, [...c.empty, c.content, c.done].join(''), 'the stream is relayed unchanged');
      const line = await requestLogLine(g.rolter, mark);
      assert.equal(typeof line.ttft_ms, 'number', JSON.stringify(line));
      assert.ok(line.ttft_ms >= 300, `ttft_ms ${line.ttft_ms}: an empty/role-only event was taken for the first token`);
      // The end came >= 300 ms after the content; a ttft near duration_ms measured the wrong event.
      assert.ok(line.duration_ms - line.ttft_ms >= 150, `ttft_ms ${line.ttft_ms} vs duration_ms ${line.duration_ms}`);
    } finally {
      await g.stop();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Item 12: an upstream that cuts an SSE stream after some events → the API's own error event.

// Splits an SSE body into events: { event, data } per blank-line-separated block.
function sseEvents(text) {
  return text.split('\n\n').filter((b) => b.trim() !== '').map((block) => {
    const lines = block.split('\n');
    return {
      block,
      event: lines.find((l) => l.startsWith('event:'))?.slice(6).trim(),
      data: lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n'),
    };
  });
}

const cutCases = [
  {
    api: 'chat completions',
    path: '/v1/chat/completions',
    body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'cut' }] },
    events: [0, 1, 2].map((i) => sse({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: `t${i}` } }] })),
    check(error) {
      assert.equal(error.event, undefined, 'no event: line');
      const body = JSON.parse(error.data);
      assert.equal(typeof body.error.message, 'string');
      assert.equal(body.error.type, 'api_error');
    },
  },
  {
    api: 'completions',
    path: '/v1/completions',
    body: { model: 'm', stream: true, prompt: 'cut' },
    events: [0, 1, 2].map((i) => sse({ id: 'c', object: 'text_completion', choices: [{ index: 0, text: `t${i}` }] })),
    check(error) {
      assert.equal(error.event, undefined, 'no event: line');
      const body = JSON.parse(error.data);
      assert.equal(typeof body.error.message, 'string');
      assert.equal(body.error.type, 'api_error');
    },
  },
  {
    api: 'responses',
    path: '/v1/responses',
    body: { model: 'm', stream: true, input: 'cut' },
    events: [
      sse({ type: 'response.created', sequence_number: 0, response: { id: 'r', status: 'in_progress' } }, 'response.created'),
      sse({ type: 'response.output_text.delta', sequence_number: 1, delta: 't1' }, 'response.output_text.delta'),
      sse({ type: 'response.output_text.delta', sequence_number: 2, delta: 't2' }, 'response.output_text.delta'),
    ],
    check(error) {
      assert.equal(error.event, 'error');
      const body = JSON.parse(error.data);
      assert.equal(body.type, 'error');
      assert.equal(body.code, 'upstream_error');
      assert.equal(typeof body.message, 'string');
      assert.equal(body.param, null);
      assert.ok(Number.isInteger(body.sequence_number) && body.sequence_number > 2,
        `sequence_number ${body.sequence_number} continues after the relayed events`);
    },
  },
  {
    api: 'messages',
    path: '/v1/messages',
    headers: { 'anthropic-version': '2023-06-01' },
    body: { model: 'm', stream: true, max_tokens: 8, messages: [{ role: 'user', content: 'cut' }] },
    events: [
      sse({ type: 'message_start', message: { id: 'msg', role: 'assistant', content: [] } }, 'message_start'),
      sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
      sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 't' } }, 'content_block_delta'),
    ],
    check(error) {
      assert.equal(error.event, 'error');
      const body = JSON.parse(error.data);
      assert.equal(body.type, 'error');
      assert.equal(body.error.type, 'api_error');
      assert.equal(typeof body.error.message, 'string');
    },
  },
];

for (const c of cutCases) {
  test(`item 12: a ${c.api} stream cut mid-way ends with the API's own error event and no [DONE]`, async () => {
    const g = await gateway(async (req, ctx) => {
      ctx.write(Buffer.concat([sseHead(), ...c.events.map((e) => chunk(e))]));
      await ctx.sleep(50);
      ctx.destroy();  // no last chunk: the upstream died
    }, { workers: 2, kind: c.path === '/v1/messages' ? 'anthropic' : undefined });
    try {
      const mark = g.rolter.log.text.length;
      const ex = await ask(g.rolter, 'cut', { path: c.path, body: c.body, headers: c.headers ?? {} });
      const res = only(ex);
      assert.equal(res.status, 200, ex.text);
      const events = sseEvents(res.text);
      assert.deepEqual(events.slice(0, c.events.length).map((e) => e.block + '\n\n'), c.events,
        'the events before the cut are relayed unchanged');
      assert.equal(events.length, c.events.length + 1, `exactly one event follows them:\n${res.text}`);
      c.check(events.at(-1));
      assert.doesNotMatch(res.text, /\[DONE\]/);
      const line = await requestLogLine(g.rolter, mark);
      assert.equal(line.status, 200);
      assert.equal(line.complete, false, JSON.stringify(line));
    } finally {
      await g.stop();
    }
  });
}
