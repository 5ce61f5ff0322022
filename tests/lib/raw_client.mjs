// A raw-socket HTTP client for tests about bytes that HTTP libraries normalise away (framing,
// hop-by-hop headers, interim responses, half-close), and a parser that splits what came back into
// the HTTP responses it holds.
//
//   // One shot: write the pieces, half-close, collect until the server closes or the deadline.
//   const got = await exchange(port, ['POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n',
//     'Content-Length: 2\r\n\r\n{}'], { halfClose: true, deadlineMs: 5000 });
//   assert.equal(got.closedByPeer, true);
//   assert.equal(got.responses.length, 1);
//   assert.equal(got.responses[0].status, 200);
//
//   // Interactive: keep the connection, wait for what you expect, then write more.
//   const c = await openRaw(port);
//   c.write(head);
//   await c.waitFor(/^HTTP\/1\.1 100 /);
//   c.write(body);
//   const [interim, final] = await c.waitForResponses(1);  // 1 final response (+ any 1xx)
//   c.destroy();
import net from 'node:net';

// An open raw connection. Everything received is kept in `data` (a Buffer).
export class RawConnection {
  constructor(socket) {
    this.socket = socket;
    this.chunks = [];
    this.isClosed = false;
    this.error = null;
    this.waiters = [];
    socket.on('data', (d) => { this.chunks.push(d); this.notify(); });
    socket.on('error', (err) => { this.error = err; });
    this.closed = new Promise((resolve) => socket.once('close', () => {
      this.isClosed = true;
      this.notify();
      resolve();
    }));
  }

  get data() { return Buffer.concat(this.chunks); }
  text() { return this.data.toString('latin1'); }
  write(bytes) { this.socket.write(bytes); }
  // Half-close: shutdown(SHUT_WR). The server may still answer.
  end() { this.socket.end(); }
  destroy() { this.socket.destroy(); }

  notify() { this.waiters = this.waiters.filter((w) => !w.check()); }

  // Resolves once `test` holds: a RegExp matched against the received text, or a function of
  // (text, connection) returning a truthy value (which is resolved). Rejects after timeoutMs, or
  // when the connection closes first; `what` names the wait in those errors.
  waitFor(test, { timeoutMs = 5000, what = String(test) } = {}) {
    const probe = test instanceof RegExp ? (t) => t.match(test) : (t) => test(t, this);
    return new Promise((resolve, reject) => {
      const waiter = {
        check: () => {
          const result = probe(this.text());
          if (result) { clearTimeout(waiter.timer); resolve(result); return true; }
          if (this.isClosed) {
            clearTimeout(waiter.timer);
            reject(new Error(`connection closed before ${what}; received:\n${this.text()}`));
            return true;
          }
          return false;
        },
      };
      if (waiter.check()) return;
      waiter.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`not seen within ${timeoutMs} ms: ${what}; received:\n${this.text()}`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  // Resolves with every response received (1xx included) once `count` complete final responses
  // are in.
  waitForResponses(count, { timeoutMs = 5000 } = {}) {
    return this.waitFor(() => {
      const responses = splitResponses(this.data, { closed: this.isClosed });
      const finals = responses.filter((r) => !r.interim && r.complete);
      return finals.length >= count ? responses : null;
    }, { timeoutMs, what: `${count} complete final response(s)` });
  }

  // Resolves true when the peer closed within timeoutMs, false otherwise.
  async waitForClose({ timeoutMs = 5000 } = {}) {
    let timer;
    const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); });
    const result = await Promise.race([this.closed.then(() => true), timeout]);
    clearTimeout(timer);
    return result;
  }
}

export async function openRaw(port, { host = '127.0.0.1', timeoutMs = 5000 } = {}) {
  const socket = net.connect(port, host);
  const connection = new RawConnection(socket);
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`connect to ${host}:${port} timed out`)), timeoutMs);
    socket.once('connect', () => { clearTimeout(timer); resolve(); });
    socket.once('error', (err) => { clearTimeout(timer); reject(err); });
  });
  return connection;
}

// Writes `pieces` (a string/Buffer or an array of them, pieceDelayMs apart), optionally
// half-closes, and collects everything until the server closes the connection or deadlineMs
// passes (then the socket is destroyed). Returns { data, text, closedByPeer, responses }.
export async function exchange(port, pieces, {
  host = '127.0.0.1', pieceDelayMs = 0, halfClose = false, deadlineMs = 5000,
} = {}) {
  const c = await openRaw(port, { host });
  const started = Date.now();
  try {
    for (const [i, piece] of [pieces].flat().entries()) {
      if (i > 0 && pieceDelayMs > 0) await new Promise((r) => setTimeout(r, pieceDelayMs));
      if (c.isClosed) break;
      c.write(piece);
    }
    if (halfClose && !c.isClosed) c.end();
    const closedByPeer = await c.waitForClose({ timeoutMs: Math.max(0, deadlineMs - (Date.now() - started)) });
    return {
      data: c.data,
      text: c.text(),
      closedByPeer,
      responses: splitResponses(c.data, { closed: closedByPeer }),
    };
  } finally {
    c.destroy();
  }
}

// Parses one response head ("HTTP/1.1 200 OK\r\nName: value\r\n...") into
// { version, status, reason, headers: [[name, value], ...], header(name), headerValues(name) }.
export function parseHead(text) {
  const lines = text.split('\r\n');
  const m = lines[0].match(/^HTTP\/(\d\.\d) (\d{3})(?: (.*))?$/);
  const headers = [];
  for (const line of lines.slice(1)) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    headers.push(colon < 0 ? [line, ''] : [line.slice(0, colon), line.slice(colon + 1).trim()]);
  }
  const headerValues = (name) => headers.filter(([k]) => k.toLowerCase() === name.toLowerCase()).map(([, v]) => v);
  return {
    statusLine: lines[0],
    version: m ? m[1] : undefined,
    status: m ? Number(m[2]) : NaN,
    reason: m ? (m[3] ?? '') : undefined,
    headers,
    headerValues,
    header: (name) => headerValues(name)[0],
  };
}

// Splits received bytes into the responses they hold, in order. Each is parseHead(...) plus
// { interim (1xx other than 101), body (Buffer, de-chunked), rawBody, chunked, complete }.
// Bytes that do not start a response ("HTTP/") become { malformed: true, raw } and end the list.
// `closed`: whether the connection has closed (completes a close-delimited body).
// `headRequest`: the responses answer HEAD requests, so carry no body whatever their headers.
export function splitResponses(buffer, { closed = true, headRequest = false } = {}) {
  const responses = [];
  let at = 0;
  while (at < buffer.length) {
    if (buffer.subarray(at, at + 5).toString('latin1') !== 'HTTP/') {
      responses.push({ malformed: true, raw: buffer.subarray(at), complete: false });
      break;
    }
    const end = buffer.indexOf('\r\n\r\n', at, 'latin1');
    if (end < 0) {
      responses.push({ ...parseHead(buffer.subarray(at).toString('latin1')), incompleteHead: true, complete: false });
      break;
    }
    const head = parseHead(buffer.subarray(at, end).toString('latin1'));
    at = end + 4;
    const r = { ...head, interim: head.status >= 100 && head.status < 200 && head.status !== 101 };
    const te = head.headerValues('transfer-encoding').join(',').toLowerCase();
    r.chunked = /(^|,)\s*chunked\s*$/.test(te);
    if (r.interim || head.status === 204 || head.status === 304 || headRequest) {
      r.body = Buffer.alloc(0);
      r.rawBody = r.body;
      r.complete = true;
    } else if (r.chunked) {
      const parsed = dechunk(buffer, at);
      r.body = parsed.body;
      r.rawBody = buffer.subarray(at, parsed.next);
      r.complete = parsed.complete;
      at = parsed.next;
    } else if (head.header('content-length') !== undefined) {
      const length = Number(head.header('content-length'));
      r.body = buffer.subarray(at, at + length);
      r.rawBody = r.body;
      r.complete = r.body.length === length;
      at += r.body.length;
    } else {
      r.body = buffer.subarray(at);
      r.rawBody = r.body;
      r.complete = closed;
      r.closeDelimited = true;
      at = buffer.length;
    }
    responses.push(r);
    if (!r.complete) break;
  }
  return responses;
}

// How many final (non-1xx) responses `buffer` holds; stray bytes that are not a response are not
// counted (splitResponses shows them as a `malformed` entry).
export function countResponses(buffer, options) {
  return splitResponses(buffer, options).filter((r) => !r.interim && !r.malformed).length;
}

function dechunk(buffer, start) {
  const parts = [];
  let at = start;
  for (;;) {
    const lineEnd = buffer.indexOf('\r\n', at, 'latin1');
    if (lineEnd < 0) return { body: Buffer.concat(parts), next: buffer.length, complete: false };
    const size = parseInt(buffer.subarray(at, lineEnd).toString('latin1').split(';')[0].trim(), 16);
    if (Number.isNaN(size)) return { body: Buffer.concat(parts), next: buffer.length, complete: false };
    at = lineEnd + 2;
    if (size === 0) {
      // Trailer section: header lines until an empty line.
      for (;;) {
        const trailerEnd = buffer.indexOf('\r\n', at, 'latin1');
        if (trailerEnd < 0) return { body: Buffer.concat(parts), next: buffer.length, complete: false };
        const empty = trailerEnd === at;
        at = trailerEnd + 2;
        if (empty) return { body: Buffer.concat(parts), next: at, complete: true };
      }
    }
    if (at + size + 2 > buffer.length) {
      parts.push(buffer.subarray(at, Math.min(at + size, buffer.length)));
      return { body: Buffer.concat(parts), next: buffer.length, complete: false };
    }
    parts.push(buffer.subarray(at, at + size));
    at += size + 2;
  }
}
