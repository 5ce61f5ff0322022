// The dashboard's rates from the nodes' cumulative reports (ui/src/traffic_math.js): a node that
// restarted counts from zero, but a reload that removed one of a route's targets (its series leave
// the node's metrics, so the route's totals drop) is no restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReportWindow } from '../../ui/src/traffic_math.js';

// One node's report of route "m" with `ok` 2xx answers so far.
const report = (atMs, ok, startedAtMs) => ({
  node_id: 'n1',
  health: 'up',
  stats: {
    at_ms: atMs,
    ...(startedAtMs === undefined ? {} : { started_at_ms: startedAtMs }),
    routes: [{ route: 'm', requests: { '2xx': ok, '4xx': 0, '5xx': 0, other: 0 }, targets: [] }],
  },
});

function rps(first, second) {
  const w = new ReportWindow();
  w.add([first]);
  w.add([second]);
  return w.route('m').rps;
}

test('a report with lower totals and the same start lost series to a reload: no spike', () => {
  // 100 answers so far, 40 of them by a target a reload removed; 5 new ones in 5 s.
  assert.equal(rps(report(10000, 100, 1), report(15000, 65, 1)), 0);
  assert.equal(rps(report(10000, 100, 1), report(15000, 105, 1)), 1);
});

test('a report with a new start is a restart: its totals are the interval\'s', () => {
  assert.equal(rps(report(10000, 100, 1), report(15000, 20, 12000)), 4);
});

test('reports without a start (older nodes): lower totals mean a restart', () => {
  assert.equal(rps(report(10000, 100), report(15000, 20)), 4);
});
