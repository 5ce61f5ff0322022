// The gateway queue's figures per route (flow control, docs/flow-control.md) from the nodes'
// reports, summed over nodes. A node reports a route's queue once the route has queued or shed
// (its rolter_queue_depth / rolter_shed_total series exist):
//   "queue": {"depth": [waiting requests in band 0, ..., band 7],
//             "shed": {"full": n, "predicted_wait": n, "expired": n}}
// where the shed counts are cumulative since the node started, summed over bands, each reason
// listed (zero when the route shed none for it).

// The requests waiting in a route's queue on one node, summed over bands; null without a queue.
function nodeDepth(report) {
  const depth = report.queue?.depth;
  if (!Array.isArray(depth)) return null;
  return depth.reduce((sum, n) => sum + Math.max(0, Number(n) || 0), 0);
}

// The requests waiting in the route's queues now, summed over the nodes' latest reports; null when
// no node reports a queue for it.
function queueDepth(reports) {
  let total = null;
  for (const report of reports) {
    const depth = nodeDepth(report);
    if (depth !== null) total = (total ?? 0) + depth;
  }
  return total;
}

// The requests one node shed in an interval, per reason: each counter's growth since `base`
// (everything it counts when base is null or had no queue yet), never below zero.
function shedGrowth(cur, base) {
  const before = base?.queue?.shed ?? {};
  return Object.entries(cur.queue?.shed ?? {}).map(([reason, n]) =>
    [reason, Math.max(0, Number(n) - Number(before[reason] ?? 0))]);
}

// Requests shed per second over the last interval, per reason and in all, summed over nodes'
// intervals ({seconds, cur, base}, as ReportWindow.intervals gives them); null when no node
// reports a queue for the route.
function shedRate(intervals) {
  let reporting = false;
  let total = 0;
  const byReason = {};
  for (const { seconds, cur, base } of intervals) {
    if (!cur.queue) continue;
    reporting = true;
    for (const [reason, count] of shedGrowth(cur, base)) {
      byReason[reason] = (byReason[reason] ?? 0) + count / seconds;
      total += count / seconds;
    }
  }
  return reporting ? { total, byReason } : null;
}

// The route's queue figures from a ReportWindow: requests waiting now, and shed per second.
export function routeQueue(window, name) {
  return { depth: queueDepth(window.latest(name)), shed: shedRate(window.intervals(name)) };
}
