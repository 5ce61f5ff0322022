// Load for flow-control tests and measurements: streamed chat requests timed to their first
// content token, fired open-loop at a rate, and the percentiles of what came back.
//
//   const r = await streamOnce(rolter.url, 'm', { key: 'ka', priority: 6 });
//   // { status, ttftMs, totalMs, retryAfter, queueMs, requestId, complete, engine }
//   const all = await openLoop({ rate: 40, durationMs: 3000 }, (i) => streamOnce(...));
//   percentile(all.filter(ok).map((r) => r.ttftMs), 0.99);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// One streamed chat completion. A 200 is read to its end; any other status is read whole.
export async function streamOnce(baseUrl, model, {
  key, priority, content = 'hello', maxTokens = 8, timeoutMs = 30000, headers = {}, body = {},
} = {}) {
  const started = performance.now();
  const h = { 'content-type': 'application/json', ...headers };
  if (key) h.authorization = `Bearer ${key}`;
  if (priority !== undefined) h['x-rolter-priority'] = String(priority);
  const out = { status: 0, ttftMs: undefined, totalMs: undefined, complete: false };
  try {
    const res = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({
        model, messages: [{ role: 'user', content }], max_tokens: maxTokens, stream: true, ...body,
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    out.status = res.status;
    out.retryAfter = res.headers.get('retry-after') ?? undefined;
    out.queueMs = res.headers.get('x-rolter-queue-ms') === null ? undefined : Number(res.headers.get('x-rolter-queue-ms'));
    out.engine = res.headers.get('x-sim-engine') ?? undefined;
    out.requestId = res.headers.get('x-request-id') ?? undefined;
    if (res.status !== 200) {
      out.text = await res.text();
      out.totalMs = performance.now() - started;
      return out;
    }
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (out.ttftMs === undefined && text.includes('"content"')) out.ttftMs = performance.now() - started;
    }
    out.totalMs = performance.now() - started;
    out.complete = text.includes('[DONE]');
    out.text = text;
  } catch (err) {
    out.error = err.name;
    out.totalMs = performance.now() - started;
  }
  return out;
}

// Calls fn(i) `rate` times a second for durationMs without waiting for the answers (open loop),
// then resolves with every answer. Requests go out in ticks of 20 ms, as many as are due.
export async function openLoop({ rate, durationMs }, fn) {
  const pending = [];
  const start = performance.now();
  let sent = 0;
  for (;;) {
    const elapsed = performance.now() - start;
    if (elapsed >= durationMs) break;
    const due = Math.floor((elapsed / 1000) * rate) + 1;
    while (sent < due) pending.push(fn(sent++));
    await sleep(20);
  }
  return Promise.all(pending);
}

// The q-quantile (0..1) of `values`, nearest rank; NaN when empty.
export function percentile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

// Summary of one tenant's answers: counts, TTFT p50/p99 of the served, goodput (served / s).
export function summarize(results, durationMs) {
  const served = results.filter((r) => r.status === 200 && r.complete);
  const ttfts = served.map((r) => r.ttftMs).filter((v) => v !== undefined);
  return {
    sent: results.length,
    served: served.length,
    shed: results.filter((r) => r.status === 429).length,
    other: results.filter((r) => r.status !== 200 && r.status !== 429).length,
    ttft_p50_ms: Math.round(percentile(ttfts, 0.5)),
    ttft_p99_ms: Math.round(percentile(ttfts, 0.99)),
    goodput_per_s: Number((served.length / (durationMs / 1000)).toFixed(1)),
  };
}
