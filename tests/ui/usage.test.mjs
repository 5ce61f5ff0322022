// The Usage screen in a real browser against a real control plane on SQLite: usage is posted the
// way gateway nodes post it (POST /internal/v1/usage with the node token), then the screen must
// show the range's totals per key, team and model, the charts' totals, and a key's remaining
// budget and its place among the keys near their budget. A screenshot is saved.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startControlPlane, adminClient, tempDir } from '../lib/cluster.mjs';
import { postJson } from '../lib/http.mjs';
import { launchBrowser, watchPage, login, show, waitFor, screenshot } from './browser.mjs';

const ADMIN = 'usage-admin-token-0123456789';
const NODE = 'usage-node-token-0123456789';
const HOUR_MS = 3600000;

describe('usage screen', { timeout: 60000 }, () => {
  let cp;
  let browser;
  let page;
  let watch;

  before(async () => {
    const store = `sqlite:${path.join(tempDir('rolter-usage-db-'), 'rolter.db')}`;
    cp = await startControlPlane({ store, env: { ROLTER_ADMIN_TOKEN: ADMIN, ROLTER_NODE_TOKEN: NODE, ROLTER_UI_DIR: '' } });
    const api = adminClient(cp.url, ADMIN);
    const team = await api.post('/teams', { name: 'alpha', budget: { usd: 1000, period: 'month' } });
    assert.equal(team.status, 201, JSON.stringify(team.body));
    const withBudget = await api.post('/keys', { name: 'ci', team: 'alpha', budget: { usd: 5, period: 'day' } });
    assert.equal(withBudget.status, 201, JSON.stringify(withBudget.body));
    assert.equal((await api.post('/keys', { name: 'web' })).status, 201);

    const hour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    const rows = [
      { hour_ms: hour, key: 'ci', team: 'alpha', route: 'r1', model: 'sim-model', requests: 3, input_tokens: 1000, cached_input_tokens: 200, output_tokens: 500, usd: 4.5, estimated: 1 },
      { hour_ms: hour, key: 'ci', team: 'alpha', route: 'r1', model: 'other-model', requests: 1, input_tokens: 100, output_tokens: 0, usd: 0.25 },
      { hour_ms: hour, key: 'web', team: 'beta', route: 'r2', model: 'other-model', requests: 2, input_tokens: 400, output_tokens: 100, usd: 1.25 },
    ];
    const headers = { authorization: `Bearer ${NODE}`, 'x-rolter-node-id': 'gw-usage' };
    // Two posts, as two flushes would send them: the counters add up.
    for (const batch of [rows.slice(0, 2), rows.slice(2)]) {
      const res = await postJson(`${cp.url}/internal/v1/usage`, { rows: batch }, { headers });
      assert.equal(res.status, 200, await res.text());
    }
    const stats = await api.get('/usage/stats');
    assert.equal(stats.body.store_writes, 2);

    browser = await launchBrowser();
    page = await browser.newPage();
    watch = watchPage(page);
    await login(page, cp.url, ADMIN);
  });

  after(async () => {
    page?.removeAllListeners();
    await browser?.close();
    await cp?.stop();
  });

  const groupCells = (by) => page.$$eval('tr[data-group]', (rows) => Object.fromEntries(rows.map((r) => [r.dataset.group, {
    requests: r.querySelector('[data-cell="requests"]').textContent,
    usd: r.querySelector('[data-cell="usd"]').textContent,
  }])));

  test('shows spend, requests and tokens per key, team and model', async () => {
    await show(page, '#/usage?range=14d&by=key');
    assert.deepEqual(await groupCells(), { ci: { requests: '4', usd: '$4.75' }, web: { requests: '2', usd: '$1.25' } });
    const summary = await page.$$eval('[data-total]:not([data-chart])', (els) => els.map((e) => e.textContent));
    assert.deepEqual(summary, ['Spend $6', '6 requests', '2,100 tokens']);
    const charts = await page.$$eval('[data-chart]', (els) => Object.fromEntries(els.map((e) => [e.dataset.chart, Number(e.dataset.total)])));
    assert.equal(charts.tokens, 2100);
    assert.ok(Math.abs(charts.spend - 6) < 1e-9, String(charts.spend));
    const legend = await page.$$eval('[data-chart="spend"] [data-series]', (els) => els.map((e) => e.dataset.series));
    assert.deepEqual(legend, ['ci', 'web']);  // biggest first

    await page.select('#usage-by', 'model');
    await waitFor(page, () => document.querySelector('tr[data-group="other-model"]') !== null, null);
    assert.deepEqual(await groupCells(), { 'sim-model': { requests: '3', usd: '$4.5' }, 'other-model': { requests: '3', usd: '$1.5' } });
    await page.select('#usage-by', 'team');
    await waitFor(page, () => document.querySelector('tr[data-group="beta"]') !== null, null);
    assert.deepEqual(await groupCells(), { alpha: { requests: '4', usd: '$4.75' }, beta: { requests: '2', usd: '$1.25' } });
    await page.select('#usage-range', '48h');
    await waitFor(page, () => document.querySelector('tr[data-group="beta"]') !== null, null);
    assert.equal(await page.$eval('[data-chart="tokens"]', (e) => e.dataset.total), '2100');
    watch.disallow();
    watch.check('usage per key, team and model');
  });

  test('shows the remaining budget and the keys near it', async () => {
    await show(page, '#/usage?range=14d&by=key');
    const budget = await page.$eval('section tr[data-budget="key/ci"]', (r) => ({
      remaining: r.querySelector('[data-cell="remaining"]').textContent, share: Number(r.dataset.share),
    }));
    assert.equal(budget.remaining, '$0.25');
    assert.ok(Math.abs(budget.share - 0.95) < 1e-9, String(budget.share));
    const near = await page.$$eval('section:last-of-type tr[data-budget]', (rows) => rows.map((r) => r.dataset.budget));
    assert.deepEqual(near, ['key/ci']);
    watch.disallow();
    watch.check('budgets');
  });

  test('a screenshot of the Usage screen', async () => {
    await show(page, '#/usage?range=14d&by=model');
    await screenshot(page, 'usage');
    watch.disallow();
    watch.check('screenshot');
  });
});
