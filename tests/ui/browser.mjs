// Headless Chromium for the dashboard tests (puppeteer-core and the system's browser; nothing is
// ever downloaded), a watch on every page that collects console errors, page errors, failed
// requests and answers of status 400 or more (with a narrow allowance for a request a test
// provokes on purpose), and the page functions the tests share.
import { mkdtempSync, mkdirSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const WIDTH = 1280;
const HEIGHT = 800;
const WAIT_MS = 10000;

// Chromium by default; ROLTER_TEST_BROWSER=firefox runs the same tests on Firefox
// (ROLTER_FIREFOX, default /usr/bin/firefox-esr, over WebDriver BiDi).
export async function launchBrowser() {
  if (process.env.ROLTER_TEST_BROWSER === 'firefox') {
    return puppeteer.launch({
      browser: 'firefox',
      executablePath: process.env.ROLTER_FIREFOX || '/usr/bin/firefox-esr',
      headless: true,
      defaultViewport: { width: WIDTH, height: HEIGHT },
    });
  }
  return puppeteer.launch({
    executablePath: process.env.ROLTER_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', `--window-size=${WIDTH},${HEIGHT}`],
    defaultViewport: { width: WIDTH, height: HEIGHT },
  });
}

// Collects what must never happen on a page. allow({ method, path, status }) lets exactly that
// answer through until disallow(). Each answer let through also lets through one console line the
// browser logs for it, whenever that line arrives (Chromium logs one, a little after the answer;
// Firefox logs none).
export function watchPage(page) {
  const problems = [];
  let allowed = null;
  const consoleLines = [];  // { path, status } per answer let through, until its line arrives
  const matches = (method, url, status) => allowed !== null && method === allowed.method &&
    new URL(url).pathname === allowed.path && status === allowed.status;
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const where = msg.location()?.url ?? '';
    const status = Number(msg.text().match(/status of (\d+)/)?.[1]);
    const from = where ? new URL(where).pathname : '';
    const owed = consoleLines.findIndex((l) => l.path === from && l.status === status);
    if (owed >= 0) {
      consoleLines.splice(owed, 1);
      return;
    }
    problems.push(`console error: ${msg.text()} (${where})`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.method()} ${req.url()}: ${req.failure()?.errorText}`));
  page.on('response', (res) => {
    if (res.status() < 400) return;
    const req = res.request();
    if (matches(req.method(), res.url(), res.status())) {
      allowed.seen += 1;
      consoleLines.push({ path: allowed.path, status: allowed.status });
      return;
    }
    problems.push(`HTTP ${res.status()} for ${req.method()} ${res.url()}`);
  });
  return {
    problems,
    allow(spec) { allowed = { ...spec, seen: 0 }; },
    // Ends the allowance; returns how many answers it let through.
    disallow() { const seen = allowed?.seen ?? 0; allowed = null; return seen; },
    // Throws with every problem seen since the last call.
    check(what) {
      const seen = problems.splice(0);
      if (seen.length) throw new Error(`${what}: the page reported problems:\n${seen.join('\n')}`);
    },
  };
}

export async function login(page, baseUrl, token) {
  await page.goto(`${baseUrl}/ui/`, { waitUntil: 'load', timeout: WAIT_MS });
  await page.waitForSelector('#login-token', { visible: true, timeout: WAIT_MS });
  await page.type('#login-token', token);
  await page.click('#login-form button[type="submit"]');
  await page.waitForSelector('body[data-role]', { timeout: WAIT_MS });
}

// Opens a screen by its hash and waits until it has rendered.
export async function show(page, hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await page.waitForFunction(() => {
    const view = document.getElementById('view');
    return view.dataset.loaded === '1' && view.dataset.hash === location.hash;
  }, { timeout: WAIT_MS, polling: 100 });
}

// Replaces an input's value as a person would: select all, delete, type.
export async function fill(page, selector, value) {
  await page.focus(selector);
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyA');
  await page.keyboard.up('Control');
  await page.keyboard.press('Backspace');
  await page.type(selector, String(value));
}

export function waitFor(page, fn, arg, timeout = WAIT_MS) {
  return page.waitForFunction(fn, { timeout, polling: 100 }, arg);
}

const shotDir = mkdtempSync(path.join(tmpdir(), 'rolter-ui-shots-'));
// A screenshot of the whole page, 1280 px wide: always into a temporary folder, and into
// docs/screenshots/<name>.png with ROLTER_UPDATE_SCREENSHOTS=1.
export async function screenshot(page, name) {
  const file = path.join(shotDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  if (process.env.ROLTER_UPDATE_SCREENSHOTS === '1') {
    const docs = path.join(repoRoot, 'docs', 'screenshots');
    mkdirSync(docs, { recursive: true });
    copyFileSync(file, path.join(docs, `${name}.png`));
  }
  return file;
}
export { shotDir };
