// HTTP helpers for the integration tests. Every helper has a deadline, so a gateway that hangs
// fails the test with a message that says what it was waiting for instead of stalling the run.
//
//   const r = await chat(rolter.url, 'm', { content: 'hi', maxTokens: 2 });
//   assert.equal(r.status, 200, r.text);
//   assert.equal(r.attempts, 1);               // x-rolter-attempts
//   assert.equal(r.engine, 0);                 // x-sim-engine (rolter-sim engines only)
//   const res = await postJson(`${rolter.url}/v1/embeddings`, { model: 'm', input: 'x' });
//   const events = await readSse(res);         // the `data:` payloads, '[DONE]' included
//   await waitUntil(async () => (await sim.stats(0)).cancelled === 1,
//     { timeoutMs: 5000, what: 'engine 0 to see the cancellation' });

const kDefaultTimeoutMs = 10000;

// Polls `fn` (sync or async) until it returns a truthy value, and resolves with that value.
// Rejects after timeoutMs with an error naming `what` and the last value (or error) `fn` gave.
export async function waitUntil(fn, { timeoutMs = 5000, intervalMs = 20, what = 'a condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${detail})`);
    }
    await sleep(intervalMs);
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Resolves with `promise`'s value, or rejects after timeoutMs with an error naming `what`.
export async function withDeadline(promise, timeoutMs, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// fetch() with a deadline on the whole exchange, body included (AbortSignal.timeout).
export function fetchWithin(url, { timeoutMs = kDefaultTimeoutMs, ...init } = {}) {
  return fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(timeoutMs) });
}

// POSTs `body` (an object sent as JSON, or a string / Buffer sent as is) with a JSON content type.
// Resolves with the Response; its body must still be read within timeoutMs.
export function postJson(url, body, { headers = {}, timeoutMs = kDefaultTimeoutMs } = {}) {
  return fetchWithin(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
    timeoutMs,
  });
}

// A chat completion through the gateway at `baseUrl`, read whole. Resolves with
// { status, headers, text, json (undefined unless JSON), events (SSE payloads when streamed),
//   attempts (x-rolter-attempts), target (x-rolter-target), engine (x-sim-engine) }.
// opts: content ('hello'), maxTokens (1), stream, headers, timeoutMs, and `body` fields to merge.
export async function chat(baseUrl, model, {
  content = 'hello', maxTokens = 1, stream = false, headers = {}, timeoutMs = kDefaultTimeoutMs, body = {},
} = {}) {
  const request = {
    model,
    messages: [{ role: 'user', content }],
    max_tokens: maxTokens,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    ...body,
  };
  const res = await postJson(`${baseUrl}/v1/chat/completions`, request, { headers, timeoutMs });
  return settle(res);
}

// Reads a Response whole into the shape chat() resolves with.
export async function settle(res) {
  const text = await res.text();
  let json;
  try { json = JSON.parse(text); } catch { json = undefined; }
  const header = (name) => res.headers.get(name);
  const number = (name) => (header(name) === null ? undefined : Number(header(name)));
  return {
    status: res.status,
    headers: res.headers,
    text,
    json,
    events: /text\/event-stream/.test(header('content-type') ?? '') ? ssePayloads(text) : undefined,
    attempts: number('x-rolter-attempts'),
    target: header('x-rolter-target') ?? undefined,
    engine: number('x-sim-engine'),
  };
}

// Reads a whole SSE response body into its `data:` payloads.
export async function readSse(response) {
  return ssePayloads(await response.text());
}

export function ssePayloads(text) {
  return text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim());
}

// Reads a streamed body to its end and returns the text. A body cut by the server (the stream
// broke on purpose) ends the read without throwing; `cut` says whether it was.
export async function readAll(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let cut = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch (err) {
    if (err.name === 'TimeoutError' || err.name === 'AbortError') throw err;
    cut = true;
  }
  return { text: text + decoder.decode(), cut };
}

// Parses an SSE body into [{event, data}] (data parsed as JSON unless it is [DONE]).
export function parseSse(text) {
  const events = [];
  for (const block of text.split('\n\n')) {
    if (!block.trim()) continue;
    let event = null;
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    const raw = data.join('\n');
    events.push({ event, data: raw === '[DONE]' ? raw : JSON.parse(raw) });
  }
  return events;
}
