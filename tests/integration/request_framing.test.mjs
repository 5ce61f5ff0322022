// Request framing and header hygiene, driven by raw sockets (HTTP libraries normalise the bytes
// that matter here): ambiguous framing is refused before anything reaches an upstream, hop-by-hop
// headers stop at the gateway, X-Forwarded-*/Via follow the config, half-closing clients get their
// answer, keys are checked before a body is read, and GET /v1/models/{id} answers per key.
// Contract: /work/notes/http-contract.md items 3, 4, 5, 8 and 13.
// Each test starts its own echo upstream and rolter (fleet), so no test depends on another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRolter, configFor } from '../lib/rolter.mjs';
import { fetchWithin, withDeadline } from '../lib/http.mjs';
import { startEchoUpstream, chatChunks, chatCompletion, sseText } from '../lib/echo_upstream.mjs';
import { openRaw, exchange } from '../lib/raw_client.mjs';

const KEY_ALL = 'sk-framing-all-0f1e2d3c';
const KEY_M = 'sk-framing-m-4b5a6978';
const WRONG_KEY = 'sk-wrong-7c1d0e9a4b3f';

function baseConfig(up, serverLines = '') {
  return configFor({
    engines: [up],
    routes: [
      { name: 'm', targets: [{ engine: 0, model: 'up' }] },
      { name: 'slow', targets: [{ engine: 0, model: 'slow-up' }] },
      { name: 'other', targets: [{ engine: 0, model: 'other-up' }] },
    ],
  }).replace('[server]\n', `[server]\n${serverLines}`);
}

// [[keys]], a second route and a provider group.
const keyedExtra = `
[[provider_groups]]
slug = "grp"
[[provider_groups.members]]
provider = "engine-0"

[[keys]]
name = "all"
key_env = "KEY_ALL"

[[keys]]
name = "m-only"
key_env = "KEY_M"
routes = ["m"]
`;

// One test's processes: a fresh echo upstream and a fresh rolter over it, both stopped when the
// test ends (t.after, so a failing test stops them too). `keyed`: the config with [[keys]] (the
// default has none); `serverLines`: extra [server] lines. rolter.key is the key to send, if any.
async function fleet(t, { keyed = false, serverLines = '' } = {}) {
  const up = await startEchoUpstream();
  let rolter;
  t.after(async () => {
    await rolter?.stop();
    await withDeadline(up.close(), 5000, 'the echo upstream to close');
  });
  rolter = keyed
    ? await startRolter({ config: baseConfig(up, serverLines) + keyedExtra, env: { KEY_ALL, KEY_M } })
    : await startRolter({ config: baseConfig(up, serverLines) });
  rolter.key = keyed ? KEY_ALL : undefined;
  return { up, rolter };
}

const chatBody = (content = 'hi', extra = {}) =>
  JSON.stringify({ model: 'm', messages: [{ role: 'user', content }], ...extra });

// A raw request: `lines` are header lines without CRLF; Content-Length is added for `body` unless
// `length: false`.
function rawRequest({ method = 'POST', path = '/v1/chat/completions', version = '1.1', host = 'x',
  lines = [], body = chatBody(), length = true } = {}) {
  const head = [`${method} ${path} HTTP/${version}`];
  if (host !== null) head.push(`Host: ${host}`);
  if (body !== '' || method === 'POST') head.push('Content-Type: application/json');
  if (length) head.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return head.concat(lines).join('\r\n') + '\r\n\r\n' + body;
}

function chunk(text) {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
}

// After a case that must reach no upstream: sends a marked request on a fresh connection, waits
// for it upstream, and returns every request the upstream got since `from`.
async function upstreamSeenAfter(up, rolter, from, marker) {
  const res = await fetchWithin(`${rolter.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(rolter.key ? { authorization: `Bearer ${rolter.key}` } : {}) },
    body: chatBody(marker),
  });
  assert.equal(res.status, 200, 'the gateway keeps serving');
  await res.arrayBuffer();  // answered by the upstream, so recorded there
  return up.requests.slice(from);
}

function requestLogLines(rolter, from) {
  return rolter.log.text.slice(from).split('\n')
    .filter((l) => l.includes('"event":"request"'))
    .map((l) => JSON.parse(l));
}

// ---- 3. Request framing -------------------------------------------------------------------------

const smuggled = rawRequest({ body: chatBody('SMUGGLED') });

const refusedFraming = [
  { name: 'Transfer-Encoding: gzip', lines: ['Transfer-Encoding: gzip'], body: smuggled },
  { name: 'Transfer-Encoding: chunked, identity', lines: ['Transfer-Encoding: chunked, identity'], body: smuggled },
  { name: 'Transfer-Encoding: xchunked', lines: ['Transfer-Encoding: xchunked'], body: smuggled },
  { name: 'Transfer-Encoding: chunked split over two lines, gzip last',
    lines: ['Transfer-Encoding: chunked', 'Transfer-Encoding: gzip'], body: chunk(chatBody('x')) + '0\r\n\r\n' + smuggled },
  { name: 'Transfer-Encoding: chunked with Content-Length (CL.TE)',
    lines: ['Content-Length: 5', 'Transfer-Encoding: chunked'], body: '0\r\n\r\n' + smuggled },
  { name: 'Content-Length with Transfer-Encoding: chunked (TE.CL)',
    lines: ['Transfer-Encoding: chunked', `Content-Length: ${Buffer.byteLength(chunk(chatBody('x')))}`],
    body: chunk(chatBody('x')) + '0\r\n\r\n' + smuggled },
];

for (const c of refusedFraming) {
  test(`framing: ${c.name} is a 400, the connection closes, the upstream gets nothing`, async (t) => {
    const { up, rolter: open } = await fleet(t);
    const from = up.requests.length;
    const got = await exchange(open.port, rawRequest({ lines: c.lines, body: c.body, length: false }), { deadlineMs: 3000 });
    assert.equal(got.closedByPeer, true, `connection not closed by the gateway; received:\n${got.text}`);
    assert.equal(got.responses.length, 1, `exactly one response on the socket; received:\n${got.text}`);
    assert.equal(got.responses[0].status, 400);
    const seen = await upstreamSeenAfter(up, open, from, 'SENTINEL-te');
    assert.deepEqual(seen.map((r) => r.json?.messages?.[0]?.content), ['SENTINEL-te'],
      'only the sentinel request reached the upstream');
  });
}

const refusedHost = [
  { name: 'an HTTP/1.1 request with no Host', host: null, lines: [] },
  { name: 'two Host headers', host: 'x', lines: ['Host: y'] },
];

for (const c of refusedHost) {
  test(`framing: ${c.name} is a 400 and reaches no upstream`, async (t) => {
    const { up, rolter: open } = await fleet(t);
    const from = up.requests.length;
    const conn = await openRaw(open.port);
    try {
      conn.write(rawRequest({ host: c.host, lines: c.lines }));
      const responses = await conn.waitForResponses(1, { timeoutMs: 3000 });
      assert.equal(responses.length, 1, `one response; received:\n${conn.text()}`);
      assert.equal(responses[0].status, 400);
    } finally {
      conn.destroy();
    }
    const seen = await upstreamSeenAfter(up, open, from, 'SENTINEL-host');
    assert.deepEqual(seen.map((r) => r.json?.messages?.[0]?.content), ['SENTINEL-host']);
  });
}

test('framing: a chunked request trailer Authorization does not authenticate (401)', async (t) => {
  const { up, rolter: keyed } = await fleet(t, { keyed: true });
  const from = up.requests.length;
  const body = chatBody('trailer-auth');
  const conn = await openRaw(keyed.port);
  try {
    conn.write(rawRequest({ lines: ['Transfer-Encoding: chunked', 'Trailer: Authorization'], body: '', length: false }));
    conn.write(chunk(body) + `0\r\nAuthorization: Bearer ${KEY_ALL}\r\n\r\n`);
    const responses = await conn.waitForResponses(1, { timeoutMs: 3000 });
    assert.equal(responses[0].status, 401, `received:\n${conn.text()}`);
  } finally {
    conn.destroy();
  }
  const seen = await upstreamSeenAfter(up, keyed, from, 'SENTINEL-trailer-auth');
  assert.deepEqual(seen.map((r) => r.json?.messages?.[0]?.content), ['SENTINEL-trailer-auth']);
});

test('framing: a chunked request trailer never reaches the upstream, as header or trailer', async (t) => {
  const { up, rolter: open } = await fleet(t);
  const from = up.requests.length;
  const body = chatBody('trailer-leak');
  const conn = await openRaw(open.port);
  try {
    conn.write(rawRequest({ lines: ['Transfer-Encoding: chunked', 'Trailer: X-Trailer-Leak'], body: '', length: false }));
    conn.write(chunk(body.slice(0, 10)) + chunk(body.slice(10)) + '0\r\nX-Trailer-Leak: 1\r\n\r\n');
    const responses = await conn.waitForResponses(1, { timeoutMs: 5000 });
    assert.equal(responses[0].status, 200, `received:\n${conn.text()}`);
  } finally {
    conn.destroy();
  }
  const [record] = await up.waitForRequests(1, { from });
  assert.equal(record.json?.messages?.[0]?.content, 'trailer-leak', 'the de-chunked body arrived whole');
  assert.deepEqual(record.headerValues('x-trailer-leak'), []);
  assert.deepEqual(record.rawTrailers, []);
});

// ---- 4. Hop-by-hop and forwarding headers ------------------------------------------------------

// The client's Connection header is checked by its tokens: the gateway may send a Connection
// header of its own to the upstream, never the client's.
const requestHopByHop = ['X-Custom-Hop', 'Keep-Alive', 'TE', 'Upgrade',
  'Proxy-Authorization', 'Proxy-Connection', 'HTTP2-Settings'];

test('hop-by-hop request headers stop at the gateway; others and Accept-Encoding: identity go on', async (t) => {
  const { up, rolter: open } = await fleet(t);
  const from = up.requests.length;
  const conn = await openRaw(open.port);
  try {
    conn.write(rawRequest({ lines: [
      'Connection: keep-alive, X-Custom-Hop', 'X-Custom-Hop: 1', 'Keep-Alive: timeout=5', 'TE: trailers',
      'Upgrade: h2c', 'Proxy-Authorization: Basic abc', 'Proxy-Connection: keep-alive',
      'HTTP2-Settings: AAMAAABkAAQAAP__', 'X-Keep-Me: yes', 'Accept-Encoding: gzip, br'] }));
    const responses = await conn.waitForResponses(1);
    assert.equal(responses[0].status, 200);
  } finally {
    conn.destroy();
  }
  const [record] = await up.waitForRequests(1, { from });
  const names = record.rawHeaders.map(([k]) => k.toLowerCase());
  assert.deepEqual(requestHopByHop.filter((h) => names.includes(h.toLowerCase())), [],
    `hop-by-hop headers reached the upstream: ${JSON.stringify(record.rawHeaders)}`);
  assert.ok(!record.headerValues('connection').some((v) => /x-custom-hop/i.test(v)),
    `the client's Connection header reached the upstream: ${JSON.stringify(record.rawHeaders)}`);
  assert.deepEqual(record.headerValues('x-keep-me'), ['yes']);
  assert.deepEqual(record.headerValues('accept-encoding'), ['identity']);
});

test('the upstream gets Accept-Encoding: identity when the client sent none', async (t) => {
  const { up, rolter: open } = await fleet(t);
  const from = up.requests.length;
  const got = await exchange(open.port, rawRequest({ lines: ['Connection: close'] }));
  assert.equal(got.responses[0]?.status, 200);
  const [record] = await up.waitForRequests(1, { from });
  assert.deepEqual(record.headerValues('accept-encoding'), ['identity']);
});

test('hop-by-hop response headers stop at the gateway; the client gets Via: 1.1 rolter', async (t) => {
  const { up, rolter: open } = await fleet(t);
  up.setReply({ headers: [['Connection', 'X-Resp-Hop'], ['X-Resp-Hop', '1'], ['Keep-Alive', 'timeout=5'],
    ['Upgrade', 'foo'], ['Proxy-Connection', 'x'], ['X-Resp-Keep', 'yes']] });
  try {
    const conn = await openRaw(open.port);
    try {
      conn.write(rawRequest());
      const [response] = await conn.waitForResponses(1);
      assert.equal(response.status, 200);
      assert.deepEqual(['X-Resp-Hop', 'Keep-Alive', 'Upgrade', 'Proxy-Connection'].filter((h) => response.headerValues(h).length > 0),
        [], `hop-by-hop headers reached the client:\n${conn.text()}`);
      assert.ok(!response.headerValues('connection').some((v) => /x-resp-hop/i.test(v)),
        `the upstream's Connection header reached the client:\n${conn.text()}`);
      assert.deepEqual(response.headerValues('x-resp-keep'), ['yes']);
      assert.deepEqual(response.headerValues('via'), ['1.1 rolter']);
      assert.deepEqual(JSON.parse(response.body.toString()), chatCompletion('up'));
    } finally {
      conn.destroy();
    }
  } finally {
    up.setReply(null);
  }
});

// What the upstream receives for X-Forwarded-For / -Proto and Via, per config and client headers.
const forwarding = [
  { name: 'default: client values are replaced', server: '',
    client: ['X-Forwarded-For: 1.2.3.4', 'X-Forwarded-Proto: https'],
    expect: { xff: ['127.0.0.1'], xfp: ['http'], via: ['1.1 rolter'] }, clientVia: ['1.1 rolter'] },
  { name: 'default: no client values', server: '', client: [],
    expect: { xff: ['127.0.0.1'], xfp: ['http'], via: ['1.1 rolter'] }, clientVia: ['1.1 rolter'] },
  { name: 'trusted proxy: the chain is kept and the peer appended', server: 'trusted_proxies = ["127.0.0.1/32", "10.0.0.0/8"]\n',
    client: ['X-Forwarded-For: 1.2.3.4', 'X-Forwarded-Proto: https'],
    expect: { xff: ['1.2.3.4, 127.0.0.1'], xfp: ['https'], via: ['1.1 rolter'] }, clientVia: ['1.1 rolter'] },
  { name: 'untrusted peer (not in trusted_proxies): client values are replaced', server: 'trusted_proxies = ["10.0.0.0/8"]\n',
    client: ['X-Forwarded-For: 1.2.3.4', 'X-Forwarded-Proto: https'],
    expect: { xff: ['127.0.0.1'], xfp: ['http'], via: ['1.1 rolter'] }, clientVia: ['1.1 rolter'] },
  { name: 'forwarded_headers = false: none added, the client X-Forwarded-For passes unchanged',
    server: 'forwarded_headers = false\n', client: ['X-Forwarded-For: 1.2.3.4'],
    expect: { xff: ['1.2.3.4'], xfp: [], via: [] }, clientVia: [] },
];

for (const c of forwarding) {
  test(`forwarding headers, ${c.name}`, async (t) => {
    const { up, rolter } = await fleet(t, { serverLines: c.server });
    const from = up.requests.length;
    const got = await exchange(rolter.port, rawRequest({ lines: [...c.client, 'Connection: close'] }));
    assert.equal(got.responses[0]?.status, 200, got.text);
    const [record] = await up.waitForRequests(1, { from });
    assert.deepEqual({
      xff: record.headerValues('x-forwarded-for'),
      xfp: record.headerValues('x-forwarded-proto'),
      via: record.headerValues('via'),
      clientVia: got.responses[0].headerValues('via'),
    }, { ...c.expect, clientVia: c.clientVia },
    `upstream got ${JSON.stringify(record.rawHeaders)}; the client got:\n${got.text}`);
  });
}

const http10 = [
  // The client asks for usage, so the upstream's stream reaches it whole (usage chunk included).
  { name: 'an SSE stream', body: chatBody('s', { stream: true, stream_options: { include_usage: true } }), expected: sseText(chatChunks('up')), reply: null },
  { name: 'a chunked JSON answer', body: chatBody('c'), expected: JSON.stringify(chatCompletion('up')), reply: { chunked: true } },
];

for (const c of http10) {
  test(`an HTTP/1.0 client gets ${c.name} unchunked and close-delimited`, async (t) => {
    const { up, rolter: open } = await fleet(t);
    up.setReply(c.reply);
    try {
      const from = up.requests.length;
      const got = await exchange(open.port, rawRequest({ version: '1.0', body: c.body }), { deadlineMs: 5000 });
      assert.equal(got.closedByPeer, true, `the gateway must close at the end of the body; received:\n${got.text}`);
      assert.equal(got.responses.length, 1, got.text);
      const [response] = got.responses;
      assert.equal(response.status, 200);
      assert.deepEqual(response.headerValues('transfer-encoding'), [], `no Transfer-Encoding:\n${got.text}`);
      assert.equal(response.body.toString(), c.expected, 'the raw body, as the upstream sent it');
      const [record] = await up.waitForRequests(1, { from });
      assert.equal(record.json.messages[0].content, JSON.parse(c.body).messages[0].content);
    } finally {
      up.setReply(null);
    }
  });
}

// ---- 5. Half-close and client close ------------------------------------------------------------

for (const stream of [false, true]) {
  test(`a client that half-closes after a complete request gets the full answer (stream: ${stream})`, async (t) => {
    const { up, rolter: open } = await fleet(t);
    const from = up.requests.length;
    const logFrom = open.log.text.length;
    const usage = stream ? { stream_options: { include_usage: true } } : {};  // the whole stream
    const got = await exchange(open.port, rawRequest({ body: chatBody('half-close', { stream, ...usage }) }),
      { halfClose: true, deadlineMs: 5000 });
    assert.equal(got.closedByPeer, true, got.text);
    assert.equal(got.responses.length, 1, `exactly one response:\n${got.text}`);
    const [response] = got.responses;
    assert.equal(response.status, 200, got.text);
    assert.equal(response.complete, true);
    assert.equal(response.body.toString(),
      stream ? sseText(chatChunks('up')) : JSON.stringify(chatCompletion('up')));
    await up.waitForRequests(1, { from });
    await open.log.waitFor(/"event":"request"/, { from: logFrom });
    await upstreamSeenAfter(up, open, up.requests.length, 'SENTINEL-half-close');
    await open.log.waitFor(/"event":"request"[^\n]*\n[^]*"event":"request"/, { from: logFrom });
    const lines = requestLogLines(open, logFrom);
    assert.equal(lines.length, 2, `one line for the half-closed request, one for the sentinel:\n${open.log.text.slice(logFrom)}`);
    assert.equal(lines[0].status, 200);
    assert.equal(lines[0].target, 'engine-0/up');
  });
}

test('a client that goes away during a slow upstream is logged once as 499, with no 5xx', async (t) => {
  const { up, rolter: open } = await fleet(t);
  up.setReply((record) => (record.json?.model === 'slow-up' ? { delayMs: 1500 } : {}));
  const logFrom = open.log.text.length;
  try {
    const from = up.requests.length;
    const conn = await openRaw(open.port);
    conn.write(rawRequest({ body: JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'x' }] }) }));
    const [record] = await up.waitForRequests(1, { from });
    conn.destroy();
    await open.log.waitFor(/"event":"request"[^\n]*"route":"slow"/, { from: logFrom });
    // Whatever rolter does with the upstream's late answer, let it arrive before counting lines.
    await record.done;
    await upstreamSeenAfter(up, open, up.requests.length, 'SENTINEL-499');
    await open.log.waitFor(/"route":"m"/, { from: logFrom });
  } finally {
    up.setReply(null);
  }
  const slowLines = requestLogLines(open, logFrom).filter((l) => l.route === 'slow');
  assert.equal(slowLines.length, 1, `logged exactly once:\n${open.log.text.slice(logFrom)}`);
  assert.equal(slowLines[0].status, 499);
  const metrics = await (await fetchWithin(`${open.url}/metrics`)).text();
  const fiveXx = metrics.split('\n').filter((l) => l.startsWith('rolter_requests_total{') &&
    l.includes('route="slow"') && l.includes('code_class="5xx"'));
  for (const line of fiveXx) assert.equal(Number(line.split(' ').pop()), 0, line);
});

// ---- 8. Authenticate before reading the body ---------------------------------------------------

const earlyRefusals = [
  { name: 'a missing key', auth: [] },
  { name: 'a wrong key', auth: [`Authorization: Bearer ${WRONG_KEY}`] },
];

for (const c of earlyRefusals) {
  test(`auth: ${c.name} with a 10 MB Content-Length and no body sent gets 401 at once, then close`, async (t) => {
    const { up, rolter: keyed } = await fleet(t, { keyed: true });
    const conn = await openRaw(keyed.port);
    try {
      conn.write(rawRequest({ body: '', length: false, lines: [...c.auth, 'Content-Length: 10000000'] }));
      const responses = await conn.waitForResponses(1, { timeoutMs: 2000 });
      assert.equal(responses.length, 1, conn.text());
      assert.equal(responses[0].status, 401);
      assert.equal(await conn.waitForClose({ timeoutMs: 2000 }), true, 'the gateway closes the connection');
    } finally {
      conn.destroy();
    }
  });
}

test('auth: Expect: 100-continue with a wrong key gets 401 and never 100 Continue', async (t) => {
  const { up, rolter: keyed } = await fleet(t, { keyed: true });
  const conn = await openRaw(keyed.port);
  try {
    conn.write(rawRequest({ body: '', length: false,
      lines: [`Authorization: Bearer ${WRONG_KEY}`, 'Expect: 100-continue', `Content-Length: ${chatBody().length}`] }));
    const responses = await conn.waitForResponses(1, { timeoutMs: 2000 });
    assert.deepEqual(responses.map((r) => r.status), [401], conn.text());
    assert.doesNotMatch(conn.text(), /HTTP\/1\.[01] 100 /);
  } finally {
    conn.destroy();
  }
});

test('auth: Expect: 100-continue with a valid key gets 100 Continue, then the answer', async (t) => {
  const { up, rolter: keyed } = await fleet(t, { keyed: true });
  const body = chatBody('expect');
  const conn = await openRaw(keyed.port);
  try {
    conn.write(rawRequest({ body: '', length: false,
      lines: [`Authorization: Bearer ${KEY_ALL}`, 'Expect: 100-continue', `Content-Length: ${body.length}`] }));
    // The body is held back until the gateway asks for it.
    await conn.waitFor(/^HTTP\/1\.1 100 Continue\r\n\r\n/, { timeoutMs: 3000 });
    conn.write(body);
    const responses = await conn.waitForResponses(1, { timeoutMs: 5000 });
    assert.deepEqual(responses.map((r) => r.status), [100, 200], conn.text());
    assert.deepEqual(JSON.parse(responses[1].body.toString()), chatCompletion('up'));
  } finally {
    conn.destroy();
  }
});

function metricValue(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

test('auth: failures are counted by reason and logged without the presented key', async (t) => {
  const { up, rolter: keyed } = await fleet(t, { keyed: true });
  const scrape = async () => {
    const res = await fetchWithin(`${keyed.url}/metrics`, { headers: { authorization: `Bearer ${KEY_ALL}` } });
    assert.equal(res.status, 200);
    return res.text();
  };
  const before = await scrape();
  const logFrom = keyed.log.text.length;
  for (const auth of [[], [`Authorization: Bearer ${WRONG_KEY}`]]) {
    const got = await exchange(keyed.port, rawRequest({ lines: [...auth, 'Connection: close'] }));
    assert.equal(got.responses[0]?.status, 401);
  }
  const after = await scrape();
  for (const reason of ['missing', 'invalid']) {
    const series = `rolter_auth_failures_total{reason="${reason}"}`;
    assert.equal(metricValue(after, series) - metricValue(before, series), 1,
      `${series}; auth series scraped:\n${after.split('\n').filter((l) => l.includes('auth')).join('\n')}`);
  }
  await keyed.log.waitFor(/"event":"auth_failed"[^\n]*\n[^]*"event":"auth_failed"/, { from: logFrom });
  assert.ok(!keyed.log.text.includes(WRONG_KEY), 'the presented key is never logged');
  assert.ok(!keyed.log.text.includes(KEY_ALL), 'a valid key is never logged');
});

// ---- 13. GET /v1/models/{id} --------------------------------------------------------------------

const modelLookups = [
  { id: 'm', key: KEY_ALL, status: 200 },
  { id: 'other', key: KEY_ALL, status: 200 },
  { id: 'grp/any-model', key: KEY_ALL, status: 200 },
  { id: 'm', key: KEY_M, status: 200 },
  { id: 'other', key: KEY_M, status: 404 },
  { id: 'grp/any-model', key: KEY_M, status: 404 },
  { id: 'no-such-model', key: KEY_ALL, status: 404 },
];

test('GET /v1/models/{id}: 200 for what the key may use, 404 model_not_found otherwise', async (t) => {
  const { up, rolter: keyed } = await fleet(t, { keyed: true });
  for (const c of modelLookups) {
    const res = await fetchWithin(`${keyed.url}/v1/models/${c.id}`, { headers: { authorization: `Bearer ${c.key}` } });
    const body = await res.json();
    const who = `${c.id} with ${c.key === KEY_ALL ? 'all' : 'm-only'}`;
    assert.equal(res.status, c.status, `${who}: ${JSON.stringify(body)}`);
    if (c.status === 200) {
      assert.deepEqual(body, { id: c.id, object: 'model', created: 0, owned_by: 'rolter' }, who);
    } else {
      assert.equal(body.error?.code, 'model_not_found', `${who}: ${JSON.stringify(body)}`);
    }
  }
});
