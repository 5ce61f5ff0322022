// A scriptable raw HTTP/1.1 upstream and a raw client, for tests where the exact bytes matter
// (HTTP libraries normalise framing, reason phrases, interim responses and hop-by-hop headers, so
// they cannot produce or observe the misbehaviour a gateway must survive).
//
// The upstream listens on 127.0.0.1:0, parses each request (head, then a Content-Length or chunked
// body), records it with the number of the connection it arrived on, and calls `respond` which
// writes whatever bytes it likes. Requests on one connection are answered in order: the next one is
// handed to `respond` only after the previous call's promise settled.
//
//   import { startRawUpstream, response, openRaw, parseResponses } from '../lib/raw_upstream.mjs';
//
//   const up = await startRawUpstream({
//     respond(req, ctx) {
//       const id = req.json().messages[0].content;
//       // A clean answer, then a whole second response nobody asked for.
//       ctx.write(response({ body: JSON.stringify({ id }) }) +
//                 response({ body: JSON.stringify({ id: 'ghost' }) }));
//       // 50 ms later, if nothing arrived meanwhile: an unsolicited 408 and a close.
//       ctx.onIdle(50, () => ctx.end(response({ status: 408, reason: 'Request Timeout' }), { destroy: true }));
//     },
//   });
//   ... drive a gateway whose provider base_url is up.url ...
//   assert.notEqual(up.requests[1].conn, up.requests[0].conn);  // the second came on a new socket
//   assert.equal(up.requests[0].header('accept-encoding'), 'identity');
//   await up.close();
//
//   const c = await openRaw(port);                   // a raw client
//   c.write('GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
//   await c.closedWithin(5000);
//   const [res] = parseResponses(c.buffer());         // { status, reason, headers, body, complete }
//
// Every wait takes a deadline; close() destroys every socket and timer.
import net from 'node:net';

// ---------------------------------------------------------------------------------------------
// Response bytes.

// The bytes of one HTTP/1.1 response. headers: an object or [[name, value], ...] (kept in order,
// repeats allowed). framing: 'length' (adds Content-Length unless `headers` has one), 'chunked'
// (the body as one chunk plus the last chunk), 'close' (no framing header: the body ends at close),
// 'none' (no framing header, no body added: for 1xx/204/304 heads, or to append bytes yourself).
export function response({ status = 200, reason, headers = {}, body = '', framing = 'length', version = '1.1' } = {}) {
  const list = Array.isArray(headers) ? headers : Object.entries(headers);
  const has = (name) => list.some(([n]) => n.toLowerCase() === name);
  const phrase = reason ?? REASONS[status] ?? 'Status';
  let head = `HTTP/${version} ${status} ${phrase}\r\n`;
  for (const [n, v] of list) head += `${n}: ${v}\r\n`;
  const bodyBuf = Buffer.from(body);
  if (framing === 'length' && !has('content-length')) head += `Content-Length: ${bodyBuf.length}\r\n`;
  if (framing === 'chunked' && !has('transfer-encoding')) head += 'Transfer-Encoding: chunked\r\n';
  head += '\r\n';
  if (framing === 'none') return Buffer.from(head);
  if (framing === 'chunked') {
    return Buffer.concat([Buffer.from(head), bodyBuf.length ? chunk(bodyBuf) : Buffer.alloc(0), LAST_CHUNK]);
  }
  return Buffer.concat([Buffer.from(head), bodyBuf]);
}

// One chunk of a chunked body.
export function chunk(data) {
  const buf = Buffer.from(data);
  return Buffer.concat([Buffer.from(`${buf.length.toString(16)}\r\n`), buf, Buffer.from('\r\n')]);
}
export const LAST_CHUNK = Buffer.from('0\r\n\r\n');

// The head of an SSE answer with a chunked body; follow it with chunk(sse(...)) and LAST_CHUNK.
export function sseHead(extraHeaders = {}) {
  return response({
    headers: { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', ...extraHeaders, 'Transfer-Encoding': 'chunked' },
    framing: 'none',
  });
}

// One SSE event: sse({a: 1}) → 'data: {"a":1}\n\n'; sse(obj, 'name') adds an `event:` line.
export function sse(data, event) {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`;
}

const REASONS = {
  100: 'Continue', 101: 'Switching Protocols', 103: 'Early Hints', 200: 'OK', 204: 'No Content',
  304: 'Not Modified', 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 408: 'Request Timeout',
  429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

// ---------------------------------------------------------------------------------------------
// Parsing (shared by the upstream for requests and by parseResponses for responses).

function parseHeadLines(headText) {
  const lines = headText.split('\r\n');
  const startLine = lines.shift();
  const headers = [];
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    headers.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
  }
  return { startLine, headers };
}

function headerAccessors(headers) {
  return {
    // The value of the first header with this name (case-insensitive), or undefined.
    header: (name) => headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1],
    // Every value of this header, in order.
    headerAll: (name) => headers.filter(([n]) => n.toLowerCase() === name.toLowerCase()).map(([, v]) => v),
  };
}

// Decodes a chunked body starting at `offset`. Returns { body, trailers, end } or null if the
// buffer does not yet hold the whole body.
function decodeChunked(buf, offset) {
  const parts = [];
  let pos = offset;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', pos);
    if (lineEnd < 0) return null;
    const size = parseInt(buf.subarray(pos, lineEnd).toString('latin1').split(';')[0].trim(), 16);
    if (Number.isNaN(size)) throw new Error(`bad chunk size line: ${JSON.stringify(buf.subarray(pos, lineEnd).toString('latin1'))}`);
    pos = lineEnd + 2;
    if (size === 0) {
      const trailerEnd = buf.indexOf('\r\n\r\n', pos - 2);
      if (trailerEnd < 0) return null;
      const trailers = parseHeadLines('x\r\n' + buf.subarray(pos, trailerEnd).toString('latin1')).headers;
      return { body: Buffer.concat(parts), trailers, end: trailerEnd + 4 };
    }
    if (buf.length < pos + size + 2) return null;
    parts.push(buf.subarray(pos, pos + size));
    pos += size + 2;
  }
}

// Like decodeChunked but for a body that may be cut: returns what arrived.
function decodeChunkedPartial(buf, offset) {
  const parts = [];
  let pos = offset;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', pos);
    if (lineEnd < 0) return { body: Buffer.concat(parts), complete: false, end: buf.length };
    const size = parseInt(buf.subarray(pos, lineEnd).toString('latin1').split(';')[0].trim(), 16);
    if (Number.isNaN(size)) return { body: Buffer.concat(parts), complete: false, end: buf.length, bad: true };
    pos = lineEnd + 2;
    if (size === 0) {
      const trailerEnd = buf.indexOf('\r\n\r\n', pos - 2);
      if (trailerEnd < 0) return { body: Buffer.concat(parts), complete: false, end: buf.length };
      const trailers = parseHeadLines('x\r\n' + buf.subarray(pos, trailerEnd).toString('latin1')).headers;
      return { body: Buffer.concat(parts), trailers, complete: true, end: trailerEnd + 4 };
    }
    if (buf.length < pos + size) {
      parts.push(buf.subarray(pos));
      return { body: Buffer.concat(parts), complete: false, end: buf.length };
    }
    parts.push(buf.subarray(pos, pos + size));
    pos += size + 2;
  }
}

// Splits the bytes a client received into responses. A response to HEAD, a 1xx, 204 or 304 has no
// body; otherwise Content-Length, chunked, or (neither) everything up to the close. Each response:
// { version, status, reason, statusLine, headers: [[name, value]], header(), headerAll(), body,
//   text, framing, complete, trailers }. `complete` is false for a body cut short. Bytes after the
// last complete head that do not form a head are returned as a final { garbage } entry.
export function parseResponses(data, { head = false } = {}) {
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data, 'latin1');
  const out = [];
  let pos = 0;
  while (pos < buf.length) {
    const headEnd = buf.indexOf('\r\n\r\n', pos);
    if (headEnd < 0) {
      out.push({ garbage: buf.subarray(pos).toString('latin1') });
      break;
    }
    const { startLine, headers } = parseHeadLines(buf.subarray(pos, headEnd).toString('latin1'));
    const m = startLine.match(/^HTTP\/(\d\.\d) (\d{3})(?: (.*))?$/);
    if (!m) {
      out.push({ garbage: buf.subarray(pos).toString('latin1') });
      break;
    }
    const status = Number(m[2]);
    const r = { version: m[1], status, reason: m[3] ?? '', statusLine: startLine, headers, ...headerAccessors(headers) };
    pos = headEnd + 4;
    const te = r.header('transfer-encoding');
    const cl = r.header('content-length');
    if (head || (status >= 100 && status < 200) || status === 204 || status === 304) {
      Object.assign(r, { framing: 'none', body: Buffer.alloc(0), complete: true });
    } else if (te && /chunked\s*$/i.test(te)) {
      const d = decodeChunkedPartial(buf, pos);
      Object.assign(r, { framing: 'chunked', body: d.body, complete: d.complete, trailers: d.trailers ?? [] });
      pos = d.end;
    } else if (cl !== undefined) {
      const n = Number(cl);
      const body = buf.subarray(pos, Math.min(buf.length, pos + n));
      Object.assign(r, { framing: 'length', body, complete: body.length === n });
      pos += body.length;
    } else {
      Object.assign(r, { framing: 'close', body: buf.subarray(pos), complete: true });
      pos = buf.length;
    }
    r.text = r.body.toString('utf8');
    out.push(r);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The upstream.

// respond(req, ctx): called for each parsed request. req: { seq (0-based over the server), conn
// (1-based connection number), index (0-based within its connection), method, target, version,
// rawHead, headers: [[name, value]], header(name), headerAll(name), body (Buffer), trailers,
// text(), json() }. ctx: { socket, conn (the connection record), write(bytes), end(bytes,
// { destroy }), destroy(), after(ms, fn) (a timer cleared when the connection closes),
// sleep(ms) (a promise: after ms, or when the connection closes), onIdle(ms, fn) (fn runs after ms
// unless bytes arrived on the connection meanwhile) }.
// With no respond, answers 200 {"ok":true}.
export async function startRawUpstream({ respond = defaultRespond, host = '127.0.0.1' } = {}) {
  const requests = [];
  const connections = [];
  const waiters = [];
  const timers = new Set();
  const notify = () => {
    for (const w of [...waiters]) if (w.check()) waiters.splice(waiters.indexOf(w), 1);
  };

  const server = net.createServer((socket) => {
    const conn = { id: connections.length + 1, socket, requests: 0, closed: false, epoch: 0, bytesIn: 0 };
    connections.push(conn);
    let buffer = Buffer.alloc(0);
    let busy = false;
    socket.on('error', () => {});
    socket.on('close', () => { conn.closed = true; notify(); });

    const track = (ms, fn) => {
      const t = setTimeout(() => { timers.delete(t); if (!socket.destroyed) fn(); }, ms);
      timers.add(t);
      socket.once('close', () => { clearTimeout(t); timers.delete(t); });
      return t;
    };
    const ctx = {
      socket,
      conn,
      write: (bytes) => { if (!socket.destroyed && !socket.writableEnded) socket.write(bytes); },
      // Half-closes after `bytes`; with destroy, closes fully once they are flushed (a server that
      // close()s its socket: later bytes from the peer are refused, not read).
      end: (bytes, { destroy = false } = {}) => {
        if (socket.destroyed) return;
        if (socket.writableEnded) return;
        socket.end(bytes ?? undefined, () => { if (destroy) socket.destroy(); });
      },
      destroy: () => socket.destroy(),
      after: track,
      // Resolves after ms, or at once when the connection closes (a behaviour never hangs).
      sleep: (ms) => new Promise((resolve) => {
        if (socket.destroyed) return resolve();
        const t = setTimeout(done, ms);
        timers.add(t);
        function done() { clearTimeout(t); timers.delete(t); socket.off('close', done); resolve(); }
        socket.once('close', done);
      }),
      onIdle: (ms, fn) => {
        const epoch = conn.epoch;
        return track(ms, () => { if (conn.epoch === epoch) fn(); });
      },
    };

    const pump = async () => {
      if (busy) return;
      busy = true;
      try {
        for (;;) {
          const parsed = takeRequest(buffer);
          if (!parsed) break;
          buffer = buffer.subarray(parsed.consumed);
          const req = {
            ...parsed.request,
            seq: requests.length,
            conn: conn.id,
            index: conn.requests++,
            at: Date.now(),
          };
          requests.push(req);
          notify();
          try {
            await respond(req, ctx);
          } catch (err) {
            // A broken behaviour function must not hang the test silently.
            process.stderr.write(`raw upstream: respond threw: ${err.stack}\n`);
            socket.destroy();
          }
          if (socket.destroyed) break;
        }
      } catch (err) {
        process.stderr.write(`raw upstream: unparsable request on connection ${conn.id}: ${err.message}\n`);
        socket.destroy();
      } finally {
        busy = false;
      }
      if (!socket.destroyed && takeRequest(buffer)) pump();
    };

    socket.on('data', (data) => {
      // A server that closed its side reads no more requests (as a close() would refuse them).
      if (socket.writableEnded) return;
      conn.epoch++;
      conn.bytesIn += data.length;
      buffer = Buffer.concat([buffer, data]);
      pump();
    });
  });
  // Sockets are reset rather than lingering when the test closes the server.
  await new Promise((resolve) => server.listen(0, host, resolve));
  const port = server.address().port;

  return {
    port,
    url: `http://${host}:${port}`,
    requests,
    connections,
    // Accepted connections so far.
    get accepted() { return connections.length; },
    // The requests whose body contains `needle` (e.g. a request id).
    requestsWith: (needle) => requests.filter((r) => r.body.includes(needle)),
    // Resolves once `predicate()` is true (re-checked on every request and close); rejects after
    // timeoutMs.
    waitFor(predicate, timeoutMs = 10000, what = 'a condition on the raw upstream') {
      return new Promise((resolve, reject) => {
        const w = {
          check: () => {
            if (!predicate()) return false;
            clearTimeout(w.timer);
            resolve();
            return true;
          },
        };
        if (w.check()) return;
        w.timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
        }, timeoutMs);
        waiters.push(w);
      });
    },
    // Forgets recorded requests (connection numbers keep counting).
    reset() { requests.length = 0; },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const c of connections) c.socket.destroy();
      for (const w of waiters.splice(0)) clearTimeout(w.timer);
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function defaultRespond(req, ctx) {
  ctx.write(response({ headers: { 'Content-Type': 'application/json' }, body: '{"ok":true}' }));
}

// Parses one request from the front of `buf`: { request, consumed } or null when incomplete.
function takeRequest(buf) {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const rawHead = buf.subarray(0, headEnd).toString('latin1');
  const { startLine, headers } = parseHeadLines(rawHead);
  const [method, target, version] = startLine.split(' ');
  const acc = headerAccessors(headers);
  let body = Buffer.alloc(0);
  let trailers = [];
  let consumed = headEnd + 4;
  const te = acc.header('transfer-encoding');
  const cl = acc.header('content-length');
  if (te && /chunked\s*$/i.test(te)) {
    const d = decodeChunked(buf, consumed);
    if (!d) return null;
    ({ body, trailers } = d);
    consumed = d.end;
  } else if (cl !== undefined) {
    const n = Number(cl);
    if (buf.length < consumed + n) return null;
    body = buf.subarray(consumed, consumed + n);
    consumed += n;
  }
  body = Buffer.from(body);
  return {
    consumed,
    request: {
      method, target, version, rawHead, headers, trailers, body, ...acc,
      text: () => body.toString('utf8'),
      json: () => JSON.parse(body.toString('utf8')),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The raw client.

// Connects to 127.0.0.1:port and collects everything the server sends. Returns { socket,
// write(bytes), end(bytes) (half-close), buffer(), text(), closed (a promise), isClosed(),
// waitFor(regex | fn(buffer), timeoutMs), closedWithin(timeoutMs), destroy() }.
export async function openRaw(port, { host = '127.0.0.1', connectTimeoutMs = 5000 } = {}) {
  const socket = net.connect(port, host);
  socket.on('error', () => {});
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`connect to ${port} timed out`)); }, connectTimeoutMs);
    socket.once('connect', () => { clearTimeout(timer); resolve(); });
    socket.once('error', (err) => { clearTimeout(timer); reject(err); });
  });
  const chunks = [];
  let size = 0;
  let isClosed = false;
  const listeners = new Set();
  socket.on('data', (d) => {
    chunks.push(d);
    size += d.length;
    for (const l of [...listeners]) l();
  });
  const closed = new Promise((resolve) => socket.once('close', () => {
    isClosed = true;
    for (const l of [...listeners]) l();
    resolve();
  }));
  const buffer = () => {
    if (chunks.length > 1) chunks.splice(0, chunks.length, Buffer.concat(chunks, size));
    return chunks[0] ?? Buffer.alloc(0);
  };
  const waitUntil = (check, timeoutMs, what) => new Promise((resolve, reject) => {
    const l = () => {
      if (!check()) return;
      listeners.delete(l);
      clearTimeout(timer);
      resolve(buffer());
    };
    const timer = setTimeout(() => {
      listeners.delete(l);
      reject(new Error(`raw client: timed out after ${timeoutMs} ms waiting for ${what}; received:\n${buffer().toString('latin1')}`));
    }, timeoutMs);
    listeners.add(l);
    l();
  });
  return {
    socket,
    write: (bytes) => socket.write(bytes),
    end: (bytes) => socket.end(bytes),
    buffer,
    text: () => buffer().toString('utf8'),
    closed,
    isClosed: () => isClosed,
    waitFor: (pattern, timeoutMs = 10000) => waitUntil(
      () => (typeof pattern === 'function' ? pattern(buffer()) : pattern.test(buffer().toString('latin1'))),
      timeoutMs, String(pattern)),
    closedWithin: (timeoutMs = 10000) => waitUntil(() => isClosed, timeoutMs, 'the server to close'),
    destroy: () => socket.destroy(),
  };
}

// One raw exchange: connect, write `bytes`, collect until the server closes or deadlineMs passes.
// untilComplete: true also stops at the first complete non-1xx response; a function
// (response) => bool stops at the first complete response it accepts.
// Resolves { buffer, text, closed, timedOut, responses } (responses: parseResponses(buffer)).
export async function rawExchange(port, bytes, { deadlineMs = 10000, halfClose = false, head = false, untilComplete = false } = {}) {
  const c = await openRaw(port);
  if (halfClose) c.end(bytes); else c.write(bytes);
  let timedOut = false;
  const accept = typeof untilComplete === 'function' ? untilComplete : (r) => r.status < 100 || r.status >= 200;
  const done = (buf) => c.isClosed() || (untilComplete && parseResponses(buf, { head })
    .some((r) => !r.garbage && r.complete && r.framing !== 'close' && accept(r)));
  try {
    await c.waitFor(done, deadlineMs);
  } catch {
    timedOut = true;
  } finally {
    c.destroy();
  }
  const buffer = c.buffer();
  return { buffer, text: buffer.toString('utf8'), closed: c.isClosed(), timedOut, responses: parseResponses(buffer, { head }) };
}

// A raw HTTP/1.1 POST with a JSON body and `Connection: close`, as bytes.
export function rawPost(path, body, headers = {}) {
  const payload = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  let head = `POST ${path} HTTP/1.1\r\nHost: rolter.test\r\nContent-Type: application/json\r\n`;
  const list = Array.isArray(headers) ? headers : Object.entries(headers);
  if (!list.some(([n]) => n.toLowerCase() === 'connection')) head += 'Connection: close\r\n';
  for (const [n, v] of list) head += `${n}: ${v}\r\n`;
  head += `Content-Length: ${payload.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), payload]);
}
