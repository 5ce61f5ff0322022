// A tiny OpenAI-shaped upstream for tests that need to see exactly what the gateway sent: every
// request is recorded with its raw header pairs (req.rawHeaders, in order, as received), its raw
// trailers, its body and the upstream connection it came on; it answers with a chat completion
// JSON (with a usage block) or, when the request asks for `"stream": true`, an SSE stream sent
// chunked (no Content-Length).
//
//   const up = await startEchoUpstream();
//   // ... point a rolter provider's base_url at up.url, send a request through rolter ...
//   const [record] = await up.waitForRequests(1);
//   assert.deepEqual(record.headerValues('x-forwarded-for'), ['127.0.0.1']);
//   assert.equal(record.socketId, 1);          // the first upstream connection
//   await record.done;                         // its response was sent or its connection closed
//   up.setReply({ status: 401, body: { error: { message: 'bad key' } } });
//   up.setReply((record) => ({ delayMs: 1500 })); // per request; absent fields take defaults
//   up.setReply(null);                         // back to the default answer
//   await up.close();
//
// Reply fields (all optional):
//   status, reason        status code (200) and reason phrase (Node's default for the code)
//   headers               extra response headers: [[name, value], ...] or { name: value }
//   body                  a string, or an object sent as JSON (default: a chat completion)
//   stream                SSE instead of JSON (default: the request's own `stream` flag)
//   events                SSE `data:` payloads, strings or objects (default: role, "echo", usage,
//                         then [DONE])
//   chunked               send a JSON body without Content-Length (chunked framing)
//   delayMs               wait this long before writing the response head
import http from 'node:http';

const kSocketId = Symbol('socketId');

export function chatCompletion(model = 'up', content = 'echo') {
  return {
    id: 'chatcmpl-echo',
    object: 'chat.completion',
    created: 0,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  };
}

export function chatChunks(model = 'up', content = 'echo') {
  const base = { id: 'chatcmpl-echo', object: 'chat.completion.chunk', created: 0, model };
  return [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { content }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    { ...base, choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } },
    '[DONE]',
  ];
}

// The exact bytes of an SSE body made of `events` (what the upstream writes, before chunking).
export function sseText(events) {
  return events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');
}

function headerPairs(headers) {
  if (!headers) return [];
  return Array.isArray(headers) ? headers : Object.entries(headers);
}

export async function startEchoUpstream({ host = '127.0.0.1' } = {}) {
  const requests = [];
  const sockets = new Set();
  let socketsAccepted = 0;
  let reply = null;
  let waiters = [];

  const notify = () => { waiters = waiters.filter((w) => !w.check()); };

  const server = http.createServer((req, res) => {
    const body = [];
    req.on('data', (d) => body.push(d));
    req.on('end', async () => {
      const text = Buffer.concat(body).toString('utf8');
      let json;
      try { json = JSON.parse(text); } catch { json = undefined; }
      const record = {
        method: req.method,
        url: req.url,
        httpVersion: req.httpVersion,
        rawHeaders: pairsOf(req.rawHeaders),
        rawTrailers: pairsOf(req.rawTrailers),
        body: text,
        json,
        socketId: req.socket[kSocketId],
        // Resolves when this request's response is over: sent whole, or its connection closed.
        done: new Promise((resolve) => res.once('close', resolve)),
        // Every value of header `name` (case-insensitive), in the order received.
        headerValues(name) {
          const n = name.toLowerCase();
          return this.rawHeaders.filter(([k]) => k.toLowerCase() === n).map(([, v]) => v);
        },
        hasHeader(name) { return this.headerValues(name).length > 0; },
      };
      requests.push(record);
      notify();
      const spec = { ...(typeof reply === 'function' ? reply(record) : reply) };
      if (spec.delayMs) await new Promise((r) => setTimeout(r, spec.delayMs));
      if (res.destroyed) return;
      answer(res, record, spec);
    });
  });
  server.on('connection', (socket) => {
    socket[kSocketId] = ++socketsAccepted;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    notify();
  });
  await new Promise((resolve) => server.listen(0, host, resolve));
  const port = server.address().port;

  return {
    port,
    url: `http://${host}:${port}`,
    requests,
    get socketsAccepted() { return socketsAccepted; },
    setReply(spec) { reply = spec; },
    clear() { requests.length = 0; },
    // Resolves with the recorded requests once at least `count` have arrived (counting from
    // index `from`); rejects after timeoutMs.
    waitForRequests(count, { from = 0, timeoutMs = 5000 } = {}) {
      return new Promise((resolve, reject) => {
        const waiter = {
          check: () => {
            if (requests.length - from < count) return false;
            clearTimeout(waiter.timer);
            resolve(requests.slice(from));
            return true;
          },
        };
        if (waiter.check()) return;
        waiter.timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== waiter);
          reject(new Error(`upstream got ${requests.length - from} of ${count} requests within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    async close() {
      for (const w of waiters) clearTimeout(w.timer);
      waiters = [];
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function pairsOf(flat) {
  const pairs = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i], flat[i + 1]]);
  return pairs;
}

function answer(res, record, spec) {
  const model = record.json?.model ?? 'up';
  const status = spec.status ?? 200;
  const stream = spec.stream ?? record.json?.stream === true;
  const extra = headerPairs(spec.headers);
  if (stream) {
    const events = spec.events ?? chatChunks(model);
    res.writeHead(status, spec.reason, [['Content-Type', 'text/event-stream'], ['Cache-Control', 'no-cache'], ...extra].flat());
    for (const e of events) res.write(`data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`);
    res.end();
    return;
  }
  const body = spec.body === undefined ? chatCompletion(model)
    : spec.body;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const head = [['Content-Type', typeof body === 'string' ? 'text/plain' : 'application/json'], ...extra];
  if (!spec.chunked) head.push(['Content-Length', String(Buffer.byteLength(text))]);
  res.writeHead(status, spec.reason, head.flat());
  res.end(text);
}
