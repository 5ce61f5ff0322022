// The gateway queue's figures on the Traffic screen (ui/src/queue_math.js): requests waiting now,
// summed over bands and nodes, and requests shed per second from the growth of the nodes'
// cumulative counters, where a node that restarted counts from zero and a lower counter with the
// same start is never a negative rate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReportWindow } from '../../ui/src/traffic_math.js';
import { routeQueue } from '../../ui/src/queue_math.js';

// One node's report of route "m": `ok` 2xx answers so far, and its queue when given
// ({depth: per band, shed: per reason}).
const report = ({ node = 'n1', atMs, ok = 0, startedAtMs, queue }) => ({
  node_id: node,
  health: 'up',
  stats: {
    at_ms: atMs,
    ...(startedAtMs === undefined ? {} : { started_at_ms: startedAtMs }),
    routes: [{ route: 'm', requests: { '2xx': ok, '4xx': 0, '5xx': 0, other: 0 }, targets: [], ...(queue ? { queue } : {}) }],
  },
});

// A queue with `full` and `expired` requests shed so far and `depth` waiting per band.
const queue = (full, expired = 0, depth = [0, 0, 0, 0, 0, 0, 0, 0]) => ({ depth, shed: { full, predicted_wait: 0, expired } });

// The queue figures after two rounds of reports.
function figures(first, second) {
  const w = new ReportWindow();
  w.add(first);
  w.add(second);
  return routeQueue(w, 'm');
}

test('depth: the latest reports summed over bands and nodes', () => {
  const q = figures(
    [report({ atMs: 10000, queue: queue(0, 0, [9, 9, 9, 9, 9, 9, 9, 9]) })],
    [report({ atMs: 15000, queue: queue(0, 0, [0, 0, 0, 0, 2, 0, 0, 1]) }),
      report({ node: 'n2', atMs: 15000, queue: queue(0, 0, [4, 0, 0, 0, 0, 0, 0, 0]) })]);
  assert.equal(q.depth, 7);
});

test('shed rate: each node\'s counter growth per second, summed, per reason and in all', () => {
  const q = figures(
    [report({ atMs: 10000, ok: 10, startedAtMs: 1, queue: queue(100, 10) }),
      report({ node: 'n2', atMs: 10000, ok: 10, startedAtMs: 1, queue: queue(0) })],
    [report({ atMs: 15000, ok: 20, startedAtMs: 1, queue: queue(110, 15) }),
      report({ node: 'n2', atMs: 12000, ok: 20, startedAtMs: 1, queue: queue(4) })]);
  assert.deepEqual(q.shed, { total: 5, byReason: { full: 4, predicted_wait: 0, expired: 1 } });
});

test('a node that restarted: its shed counts are the interval\'s', () => {
  const q = figures(
    [report({ atMs: 10000, ok: 500, startedAtMs: 1, queue: queue(100) })],
    [report({ atMs: 15000, ok: 900, startedAtMs: 12000, queue: queue(20) })]);
  assert.equal(q.shed.total, 4);
});

test('an older node without a start: lower request totals mean a restart', () => {
  const q = figures(
    [report({ atMs: 10000, ok: 500, queue: queue(100) })],
    [report({ atMs: 15000, ok: 30, queue: queue(20) })]);
  assert.equal(q.shed.total, 4);
});

test('a lower shed count with the same start is no negative rate', () => {
  const q = figures(
    [report({ atMs: 10000, ok: 10, startedAtMs: 1, queue: queue(100, 10) })],
    [report({ atMs: 15000, ok: 20, startedAtMs: 1, queue: queue(60, 20) })]);
  assert.deepEqual(q.shed, { total: 2, byReason: { full: 0, predicted_wait: 0, expired: 2 } });
});

test('a queue that first appears in the interval: everything it counts is the interval\'s', () => {
  const q = figures(
    [report({ atMs: 10000, ok: 10, startedAtMs: 1 })],
    [report({ atMs: 15000, ok: 20, startedAtMs: 1, queue: queue(10, 5) })]);
  assert.equal(q.shed.total, 3);
});

test('no node reports a queue: no figures, not zeros', () => {
  const q = figures([report({ atMs: 10000, ok: 10 })], [report({ atMs: 15000, ok: 20 })]);
  assert.deepEqual(q, { depth: null, shed: null });
});

test('a single report gives the depth but no rate yet', () => {
  const w = new ReportWindow();
  w.add([report({ atMs: 10000, queue: queue(7, 0, [0, 0, 0, 0, 3, 0, 0, 0]) })]);
  assert.deepEqual(routeQueue(w, 'm'), { depth: 3, shed: null });
});
