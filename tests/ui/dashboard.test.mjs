// The dashboard in a real browser (headless Chromium through puppeteer-core) against real
// processes: a control plane on SQLite, two gateways following it, rolter-sim engines behind them
// and live traffic. It checks the catalog's shares, the strategy picker's rules, that a saved
// route keeps the strategy nobody touched, validation errors at their field, that a viewer sees no
// write control, the policy flip threshold against the command's, the traffic charts and the
// adaptive scoreboard; and every test fails on a console error, a page error, a failed request or
// an error status the test did not provoke on purpose.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { binDir, startRolter, configFor, stopSim } from '../lib/rolter.mjs';
import { startSim } from '../lib/sim.mjs';
import { startFleet, ADMIN, ROUTES } from './fleet.mjs';
import { launchBrowser, watchPage, login, show, fill, waitFor, screenshot, shotDir } from './browser.mjs';

const WRITE_WORDS = /^\s*(save|create|delete|revoke|remove|edit|new|add)\b/i;

describe('dashboard', { timeout: 280000 }, () => {
  let fleet;
  let browser;
  let page;
  let watch;

  before(async () => {
    fleet = await startFleet();
    browser = await launchBrowser();
    page = await browser.newPage();
    watch = watchPage(page);
    await login(page, fleet.cp.url, ADMIN);
  });

  after(async () => {
    page?.removeAllListeners();
    await browser?.close();
    await fleet?.stop();
    process.stderr.write(`dashboard screenshots: ${shotDir}\n`);
  });

  // Every test ends with a clean page.
  const uiTest = (name, fn) => test(name, async (t) => {
    await fn(t);
    watch.check(name);
  });

  uiTest('the login screen and the shell show who is signed in', async () => {
    const who = await page.$eval('.whoami', (el) => el.textContent);
    assert.match(who, /ROLTER_ADMIN_TOKEN/);
    assert.match(who, /superadmin/);
    const nav = await page.$$eval('#nav a', (links) => links.map((a) => a.dataset.path));
    assert.deepEqual(nav, ['catalog', 'providers', 'routes', 'groups', 'policy', 'adaptive', 'traffic', 'keys', 'usage', 'audit', 'cluster', 'tokens']);
    // The login screen, for the docs: a fresh tab has no token.
    const fresh = await browser.createBrowserContext();
    const loginPage = await fresh.newPage();
    const loginWatch = watchPage(loginPage);
    await loginPage.goto(`${fleet.cp.url}/ui/`, { waitUntil: 'load' });
    await loginPage.waitForSelector('#login-token', { visible: true, timeout: 10000 });
    await screenshot(loginPage, 'login');
    loginWatch.check('login page');
    await fresh.close();
  });

  uiTest('the catalog shows every route, and a share only where weights apply', async () => {
    await show(page, '#/catalog');
    const entries = await page.$$eval('section[data-entry]', (cards) => cards.map((c) => c.dataset.entry).sort());
    assert.deepEqual(entries, Object.values(ROUTES).sort());
    assert.equal(await page.$$eval('section[data-kind="provider_group"]', (cards) => cards.length), 0);
    const read = (name) => page.$eval(`section[data-entry="${name}"]`, (card) => ({
      headers: [...card.querySelectorAll('th')].map((th) => th.textContent.trim()),
      shares: [...card.querySelectorAll('td[data-share]')].map((td) => td.textContent.trim()),
      note: card.querySelector('[data-weights-note]')?.textContent.trim() ?? null,
    }));
    const weighted = await read(ROUTES.weighted);
    assert.deepEqual(weighted.shares, ['75 %', '25 %']);
    assert.ok(weighted.headers.includes('Share'));
    assert.equal(weighted.note, null);
    const rr = await read(ROUTES.roundRobin);
    assert.deepEqual(rr.shares, []);
    assert.ok(!rr.headers.includes('Share'), JSON.stringify(rr.headers));
    assert.equal(rr.note, 'weights are ignored by round_robin');
    await screenshot(page, 'catalog');
  });

  uiTest('the strategy picker: no adaptive, telemetry hints naming providers', async () => {
    await show(page, '#/routes');
    await screenshot(page, 'routes');
    await show(page, '#/routes?new=1');
    const options = await page.$$eval('#strategy option', (os) => os.map((o) => o.value));
    assert.ok(!options.includes('adaptive'), `adaptive offered: ${options}`);
    for (const s of ['round_robin', 'weighted', 'precise_cache_aware', 'lmcache_aware', 'policy']) {
      assert.ok(options.includes(s), `${s} missing from ${options}`);
    }
    await page.select('[data-field="targets[0].provider"]', 'engine-0');
    await page.click('button[data-action="add-target"]');
    await page.select('[data-field="targets[1].provider"]', 'hosted-api');
    await page.click('button[data-action="add-target"]');
    await page.select('[data-field="targets[2].provider"]', 'engine-1');
    for (const [strategy, telemetry] of [['precise_cache_aware', 'kv_events'], ['lmcache_aware', 'lmcache']]) {
      await page.select('#strategy', strategy);
      const hint = await page.$eval('.telemetry-hint', (el) => ({
        telemetry: el.dataset.telemetry,
        text: el.textContent,
        items: [...el.querySelectorAll('li')].map((li) => ({ provider: li.dataset.provider, state: li.dataset.state, text: li.textContent })),
      }));
      assert.equal(hint.telemetry, telemetry);
      const none = hint.items.find((i) => i.provider === 'engine-0');
      assert.equal(none?.state, 'none', JSON.stringify(hint));
      assert.match(none.text, new RegExp(`engine-0 has no ${telemetry} configured`));
      const cannot = hint.items.find((i) => i.provider === 'hosted-api');
      assert.equal(cannot?.state, 'cannot', JSON.stringify(hint));
      assert.match(cannot.text, /hosted-api \(kind anthropic\) cannot carry/);
      // engine-1 has a KV-event stream and no LMCache endpoint.
      const carrier = hint.items.find((i) => i.provider === 'engine-1');
      if (telemetry === 'kv_events') assert.equal(carrier, undefined, JSON.stringify(hint));
      else assert.equal(carrier?.state, 'none', JSON.stringify(hint));
    }
    await screenshot(page, 'route-editor-telemetry-hint');
    // A route from rolter.toml opens read-only.
    await show(page, `#/routes?edit=${ROUTES.fromFile}`);
    assert.equal(await page.$('form.entity-editor'), null);
    assert.match(await page.$eval('#view', (el) => el.textContent), /read-only here/);
    await show(page, '#/routes?new=1');
    await page.select('#strategy', 'round_robin');
    assert.equal(await page.$('.telemetry-hint'), null, 'no telemetry hint for round_robin');
  });

  uiTest('an adaptive route shows adaptive, and saving a weight change keeps it adaptive', async () => {
    const before = (await fleet.api.get(`/routes/${ROUTES.adaptive}`)).body;
    assert.equal(before.strategy, 'adaptive');
    await show(page, `#/routes?edit=${ROUTES.adaptive}`);
    assert.equal(await page.$eval('#strategy', (s) => s.value), 'adaptive');
    await fill(page, '[data-field="targets[0].weight"]', '4');
    await page.click('form.entity-editor button[type="submit"]');
    await page.waitForSelector('form.entity-editor .success:not([hidden])', { timeout: 10000 });
    const after = (await fleet.api.get(`/routes/${ROUTES.adaptive}`)).body;
    assert.equal(after.strategy, 'adaptive');
    assert.equal(after.targets[0].weight, 4);
    assert.deepEqual(after.targets[1], before.targets[1]);
    assert.deepEqual({ ...after, targets: null }, { ...before, targets: null });
    assert.equal(await page.$eval('#strategy', (s) => s.value), 'adaptive');
    await screenshot(page, 'route-editor');
  });

  uiTest('a validation error appears next to the field the API names', async () => {
    await show(page, '#/routes?new=1');
    await page.type('#entity-name', 'bad-weight');
    await page.select('#strategy', 'weighted');
    await page.select('[data-field="targets[0].provider"]', 'engine-0');
    await page.type('[data-field="targets[0].model"]', 'sim-model');
    await fill(page, '[data-field="targets[0].weight"]', '-1');
    watch.allow({ method: 'POST', path: '/api/v1/routes', status: 400 });
    await page.click('form.entity-editor button[type="submit"]');
    const slot = '[data-error-for="targets[0].weight"]:not([hidden])';
    await page.waitForSelector(slot, { timeout: 10000 });
    const placed = await page.$eval(slot, (el) => ({
      text: el.textContent,
      besideInput: Boolean(el.closest('td')?.querySelector('[data-field="targets[0].weight"].invalid')),
      topHidden: el.closest('form').querySelector('.form-error').hidden,
    }));
    assert.match(placed.text, /\S/);
    assert.ok(placed.besideInput, 'the message sits in the weight input\'s cell');
    assert.ok(placed.topHidden, 'not at the top of the form');
    assert.equal(watch.disallow(), 1, 'exactly the provoked answer was let through');
    assert.equal((await fleet.api.get('/routes/bad-weight')).status, 404);
    await screenshot(page, 'route-editor-validation');
  });

  uiTest('a provider group made in the editor is stored key for key and listed in the catalog', async () => {
    await show(page, '#/groups?new=1');
    await page.type('#entity-name', 'pool');
    await page.select('#strategy', 'weighted');
    await page.select('[data-field="members[0].provider"]', 'engine-0');
    await page.type('[data-field="members[0].weight"]', '2');
    await page.click('button[data-action="add-target"]');
    await page.select('[data-field="members[1].provider"]', 'engine-1');
    await page.type('[data-field="members[1].upstream_model"]', 'sim-model');
    await page.click('form.entity-editor button[type="submit"]');
    await waitFor(page, () => location.hash === '#/groups?edit=pool' && document.getElementById('view').dataset.loaded === '1', null);
    const stored = await fleet.api.get('/provider-groups/pool');
    assert.deepEqual(stored.body, {
      slug: 'pool', strategy: 'weighted', read_only: false,
      members: [{ provider: 'engine-0', weight: 2 }, { provider: 'engine-1', upstream_model: 'sim-model' }],
    });
    await show(page, '#/catalog');
    const shares = await page.$$eval('section[data-entry="pool"][data-kind="provider_group"] td[data-share]', (tds) => tds.map((td) => td.textContent.trim()));
    assert.deepEqual(shares, ['66.7 %', '33.3 %']);
    await show(page, '#/groups');
    await screenshot(page, 'groups');
  });

  uiTest('a viewer sees no write control on any screen; an admin does', async () => {
    const minted = await fleet.api.post('/admin-tokens', { name: 'dashboard-viewer', role: 'viewer' });
    assert.equal(minted.status, 201, minted.text);
    const context = await browser.createBrowserContext();
    const viewer = await context.newPage();
    const viewerWatch = watchPage(viewer);
    await login(viewer, fleet.cp.url, minted.body.token);
    assert.equal(await viewer.$eval('#whoami-role', (el) => el.textContent), 'viewer');
    const nav = await viewer.$$eval('#nav a', (links) => links.map((a) => a.dataset.path));
    assert.ok(!nav.includes('adaptive') && !nav.includes('tokens'), nav.join());
    const screens = [...nav.map((p) => `#/${p}`),
      `#/routes?edit=${ROUTES.weighted}`, `#/routes?edit=${ROUTES.fromFile}`, '#/routes?new=1',
      '#/groups?new=1', '#/providers?edit=engine-0', `#/policy?route=${ROUTES.policy}`, '#/adaptive', '#/tokens'];
    for (const hash of screens) {
      await show(viewer, hash);
      await new Promise((r) => setTimeout(r, 300));
      const found = await viewer.evaluate((words) => {
        const re = new RegExp(words, 'i');
        return {
          write: [...document.querySelectorAll('[data-write]')].map((el) => el.outerHTML.slice(0, 80)),
          buttons: [...document.querySelectorAll('button, a.button-link, input[type="submit"]')]
            .map((b) => b.textContent || b.value).filter((text) => re.test(text)),
          editors: document.querySelectorAll('form.entity-editor, #adaptive-policy, textarea').length,
        };
      }, WRITE_WORDS.source);
      assert.deepEqual(found, { write: [], buttons: [], editors: 0 }, `viewer on ${hash}`);
      viewerWatch.check(`viewer on ${hash}`);
    }
    await show(viewer, '#/routes');
    await screenshot(viewer, 'viewer-routes');
    // Logging out forgets the token.
    await viewer.click('#logout');
    await viewer.waitForSelector('#login-token', { visible: true, timeout: 10000 });
    assert.equal(await viewer.evaluate(() => sessionStorage.length), 0);
    assert.equal(await viewer.$eval('#shell', (el) => el.hidden), true);
    viewerWatch.check('viewer logout');
    await context.close();

    // An admin: editors, but neither the adaptive policy nor admin tokens.
    const adminToken = await fleet.api.post('/admin-tokens', { name: 'dashboard-admin', role: 'admin' });
    const adminContext = await browser.createBrowserContext();
    const admin = await adminContext.newPage();
    const adminWatch = watchPage(admin);
    await login(admin, fleet.cp.url, adminToken.body.token);
    const adminNav = await admin.$$eval('#nav a', (links) => links.map((a) => a.dataset.path));
    assert.ok(!adminNav.includes('adaptive') && !adminNav.includes('tokens'), adminNav.join());
    await show(admin, '#/routes');
    assert.ok(await admin.$('[data-write]'), 'an admin sees write controls');
    await show(admin, '#/adaptive');
    assert.equal(await admin.$('#adaptive-policy'), null);
    adminWatch.check('admin');
    await adminContext.close();
  });

  uiTest('the flip threshold shown matches rolter policy-thresholds', async () => {
    await show(page, '#/policy');
    const cli = (n, ratio) => JSON.parse(execFileSync(path.join(binDir, 'rolter'),
      ['policy-thresholds', '--targets', String(n), '--ratios', ratio, '--json'], { encoding: 'utf8' }))[0];
    const expectShown = async (n, ratio) => {
      const want = cli(n, ratio);
      await waitFor(page, ([t, r]) => {
        const el = document.querySelector('.threshold');
        return el?.dataset.targets === t && el?.dataset.ratio === r;
      }, [String(n), want.ratio]);
      const shown = await page.$eval('.threshold', (el) => ({ flip: el.dataset.flip, tieAt: el.dataset.tieAt, text: el.textContent }));
      assert.equal(shown.flip, want.flip === null ? 'never' : String(want.flip), `${n} targets at ${ratio}`);
      assert.equal(shown.tieAt, want.tie_at === null ? '' : String(want.tie_at), `${n} targets at ${ratio}`);
      assert.match(shown.text, want.flip === null ? /never moves/ : new RegExp(`has ${want.flip} requests? in flight`));
      return want;
    };
    const settings = [[3, 1, 1], [6, 1, 1], [4, 1.5, 1]];
    const seen = new Set();
    for (const [n, li, sa] of settings) {
      await fill(page, '#policy-targets', n);
      await fill(page, '#weight-least_inflight', li);
      await fill(page, '#weight-session_affinity', sa);
      const want = await expectShown(n, `${li}:${sa}`);
      seen.add(want.flip);
    }
    assert.equal(seen.size, 3, 'three different answers');
    assert.ok(seen.has(null), 'one of them is "never"');
    // A policy route: its weights and its two targets; a weight saved through the form changes
    // that weight alone.
    await page.select('#policy-route', ROUTES.policy);
    assert.equal(await page.$eval('#policy-targets', (el) => el.value), '2');
    await expectShown(2, '1:1');
    const before = (await fleet.api.get(`/routes/${ROUTES.policy}`)).body;
    await fill(page, '#weight-least_inflight', 2);
    await expectShown(2, '2:1');
    await page.click('#policy-form button[type="submit"]');
    await page.waitForSelector('#policy-form .success:not([hidden])', { timeout: 10000 });
    const after = (await fleet.api.get(`/routes/${ROUTES.policy}`)).body;
    assert.deepEqual(after, { ...before, policy: { ...before.policy, least_inflight: { weight: 2 } } });
    await screenshot(page, 'policy');
  });

  // The traffic screen stays open in a tab of its own from here on, so its charts build a history.
  let trafficPage;
  let trafficWatch;
  uiTest('the traffic charts rise from zero once traffic starts', async () => {
    trafficPage = await browser.newPage();
    trafficWatch = watchPage(trafficPage);
    await login(trafficPage, fleet.cp.url, ADMIN);
    const tab = trafficPage;
    await show(tab, '#/traffic');
    const chart = (route, key) => `section[data-route="${route}"] [data-chart="${key}"]`;
    await waitFor(tab, (sel) => document.querySelector(sel)?.dataset.lastRps !== undefined, chart(ROUTES.weighted, 'rps'));
    assert.equal(await tab.$eval(chart(ROUTES.weighted, 'rps'), (el) => Number(el.dataset.lastRps)), 0);
    fleet.startTraffic();
    await waitFor(tab, (sel) => Number(document.querySelector(sel)?.dataset.lastRps) > 0, chart(ROUTES.weighted, 'rps'), 30000);
    await waitFor(tab, (sel) => Number(document.querySelector(sel)?.dataset.lastLatencyP50) > 0, chart(ROUTES.weighted, 'latency'), 15000);
    const figures = await tab.evaluate((route) => {
      const c = (key) => document.querySelector(`section[data-route="${route}"] [data-chart="${key}"]`);
      return {
        rps: Number(c('rps').dataset.lastRps),
        errors: Number(c('errors').dataset.lastErrorRate),
        p99: Number(c('latency').dataset.lastLatencyP99),
        ttft: c('ttft').dataset.lastTtftP50,
        share: JSON.parse(c('share').dataset.lastShare),
        canvases: document.querySelectorAll(`section[data-route="${route}"] canvas`).length,
        charts: document.querySelectorAll(`section[data-route="${route}"] [data-chart]`).length,
      };
    }, ROUTES.weighted);
    assert.ok(figures.rps > 0, JSON.stringify(figures));
    assert.equal(figures.errors, 0, JSON.stringify(figures));
    assert.ok(figures.p99 > 0, JSON.stringify(figures));
    assert.notEqual(figures.ttft, undefined);
    assert.deepEqual(Object.keys(figures.share).sort(), ['engine-0/sim-model', 'engine-1/sim-model']);
    assert.ok(figures.share['engine-0/sim-model'] > figures.share['engine-1/sim-model'], JSON.stringify(figures.share));
    // Every chart of the route draws.
    assert.ok(figures.charts >= 6, JSON.stringify(figures));
    assert.equal(figures.canvases, figures.charts);
    trafficWatch.check('traffic tab');
    // Back to the main tab: a tab in the background gets no animation frames.
    await page.bringToFront();
  });

  uiTest('the adaptive scoreboard fills within 30 s of enabling the policy through the form', async () => {
    await show(page, '#/adaptive');
    if (!(await page.$eval('#policy-enabled', (el) => el.checked))) await page.click('#policy-enabled');
    await fill(page, '#policy-min_samples', 5);
    await page.click('#adaptive-policy button[type="submit"]');
    await page.waitForSelector('#adaptive-policy .success:not([hidden])', { timeout: 10000 });
    const started = Date.now();
    const policy = (await fleet.api.get('/adaptive-routing-policy')).body;
    assert.equal(policy.policy.enabled, true);
    assert.equal(policy.policy.min_samples, 5);
    assert.deepEqual(policy.affected_routes, [ROUTES.adaptive]);
    await waitFor(page, (route) => [...document.querySelectorAll(`.route-score[data-route="${route}"] .sample[data-engaged="true"]`)]
      .some((sample) => {
        const scores = [...sample.querySelectorAll('td.score')].map((td) => td.dataset.score);
        return scores.length === 2 && scores.every((s) => s !== '' && Number.isFinite(Number(s)));
      }), ROUTES.adaptive, 30000);
    const ms = Date.now() - started;
    const board = await page.$eval(`.route-score[data-route="${ROUTES.adaptive}"] .sample[data-engaged="true"]`, (el) =>
      [...el.querySelectorAll('tbody tr')].map((tr) => ({ target: tr.dataset.target, score: Number(tr.querySelector('td.score').dataset.score) })));
    assert.deepEqual(board.map((r) => r.target).sort(), ['engine-0/sim-model', 'engine-1/sim-model']);
    process.stderr.write(`adaptive scoreboard filled ${ms} ms after the policy was saved\n`);
    await screenshot(page, 'adaptive');
  });

  uiTest('providers and cluster show every node\'s live state', async () => {
    await show(page, '#/cluster');
    await waitFor(page, () => document.querySelectorAll('tr[data-node][data-health="healthy"]').length === 2, null);
    const current = await page.$eval('[data-snapshot-version]', (el) => el.dataset.snapshotVersion);
    assert.match(current, /^\d+$/);
    await screenshot(page, 'cluster');
    await show(page, '#/providers');
    // Every node reports each instance it routes to: engine-0 is healthy on both, breaker closed.
    const row = (provider) => `tr[data-instance^="${provider}@"]`;
    await waitFor(page, (sel) => /healthy on 2 nodes/.test(document.querySelector(sel)?.children[1].textContent ?? ''), row('engine-0'), 15000);
    const live = await page.$eval(row('engine-0'), (tr) => [...tr.children].map((td) => td.textContent.trim()));
    assert.equal(live[2], 'closed', live.join(' | '));
    assert.equal(live[3], 'no', live.join(' | '));
    assert.match(live[4], /^\d+$/, live.join(' | '));
    assert.equal(live[5], 'not configured');
    await waitFor(page, (sel) => /^(live|stale|gap|disconnected)$/.test(document.querySelector(sel)?.children[5].textContent.trim() ?? ''), row('engine-1'), 15000);
    const hosted = await page.$eval(row('hosted-api'), (tr) => [...tr.children].map((td) => td.textContent.trim()));
    assert.equal(hosted[5], 'n/a (hosted)');
    // The create form puts a refused base URL next to its input.
    await page.type('#provider-name', 'bad-url');
    await page.type('#provider-url', 'not a url');
    watch.allow({ method: 'POST', path: '/api/v1/providers', status: 400 });
    await page.click('form:has(#provider-name) button[type="submit"]');
    await page.waitForSelector('[data-error-for="base_url"]:not([hidden])', { timeout: 10000 });
    assert.equal(watch.disallow(), 1);
    assert.equal((await fleet.api.get('/providers/bad-url')).status, 404);
    await screenshot(page, 'providers');
    await show(page, '#/tokens');
    await screenshot(page, 'tokens');
  });

  uiTest('keys: created and shown once, listed, revoked; the audit log finds the change', async () => {
    // The traffic tab, with the history it gathered meanwhile.
    await trafficPage.bringToFront();
    await screenshot(trafficPage, 'traffic');
    trafficWatch.check('traffic tab');
    trafficPage.removeAllListeners();
    // Chromium under load sometimes drops the target before it answers Target.closeTarget; what
    // matters is that the tab is gone.
    await trafficPage.close().catch((e) => {
      if (!/No target with given id/.test(e.message)) throw e;
    });
    assert.ok(!(await browser.pages()).includes(trafficPage), 'the traffic tab is still open');
    await page.bringToFront();
    // A key makes the gateways require keys: the traffic stops first.
    await fleet.stopTraffic();
    await show(page, '#/keys');
    await page.type('#key-name', 'team-dashboard');
    await page.type('#key-routes', `${ROUTES.weighted}, ${ROUTES.roundRobin}`);
    await page.click('form:has(#key-name) button[type="submit"]');
    await page.waitForSelector('.secret-box', { timeout: 10000 });
    const box = await page.$eval('.secret-box', (el) => ({ text: el.textContent, key: el.querySelector('.secret-value').textContent }));
    assert.match(box.text, /will not be shown again/);
    assert.match(box.key, /^rk-/);
    await page.click('.secret-box button');
    await waitFor(page, () => /Copied|Selected/.test(document.querySelector('.secret-box [role="status"]')?.textContent ?? ''), null);
    await page.waitForSelector('tr[data-key="team-dashboard"]', { timeout: 10000 });
    await screenshot(page, 'keys');
    const revoke = 'tr[data-key="team-dashboard"] button[data-write]';
    await page.click(revoke);
    await page.click(revoke);  // confirm
    await waitFor(page, () => !document.querySelector('tr[data-key="team-dashboard"]'), null);
    await show(page, '#/audit');
    await fill(page, '#audit-q', 'team-dashboard');
    await page.keyboard.press('Enter');
    await waitFor(page, () => document.querySelectorAll('tr[data-audit-id]').length >= 2, null);
    const actions = await page.$$eval('tr[data-audit-id]', (rows) => rows.map((r) => r.children[3].textContent));
    assert.ok(actions.some((a) => /create/.test(a)) && actions.some((a) => /revoke|delete/.test(a)), actions.join());
    await fill(page, '#audit-q', '');
    await page.keyboard.press('Enter');
    await waitFor(page, () => document.querySelectorAll('tr[data-audit-id]').length > 5, null);
    await screenshot(page, 'audit');
  });
});

describe('dashboard on the all-in-one rolter serve', { timeout: 60000 }, () => {
  test('serve shows the dashboard on the gateway\'s port, with its own node', async (t) => {
    const sim = await startSim({ engines: 1, args: ['--time-scale', '0'] });
    t.after(() => stopSim(sim));
    const rolter = await startRolter({
      config: configFor({ engines: sim.engines, routes: [{ name: 'solo', strategy: 'weighted', targets: [{ engine: 0, model: 'sim-model', weight: 2 }] }] }),
      env: { ROLTER_ADMIN_TOKEN: ADMIN, ROLTER_UI_DIR: '' },
    });
    t.after(() => rolter.stop());
    const browser = await launchBrowser();
    t.after(() => browser.close());
    const page = await browser.newPage();
    const watch = watchPage(page);
    await login(page, rolter.url, ADMIN);
    await show(page, '#/catalog');
    const shares = await page.$$eval('section[data-entry="solo"] td[data-share]', (tds) => tds.map((td) => td.textContent.trim()));
    assert.deepEqual(shares, ['100 %']);
    assert.equal(await page.$eval('section[data-entry="solo"]', (el) => el.textContent.includes('from rolter.toml')), true);
    await show(page, '#/cluster');
    await waitFor(page, () => document.querySelectorAll('tr[data-node][data-health="healthy"]').length === 1, null, 15000);
    page.removeAllListeners();
    watch.check('rolter serve');
  });
});
