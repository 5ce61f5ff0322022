// The dashboard's shell: login with an admin token, the role from whoami, the left navigation,
// and the hash router that mounts one view at a time (views get a context with the role, a
// poller that stops when the view is left, and the error banner).
import { api, setToken, token, unauthorized } from './api.js';
import { h, clear } from './dom.js';
import catalog from './views/catalog.js';
import providers from './views/providers.js';
import routes from './views/routes.js';
import groups from './views/groups.js';
import adaptive from './views/adaptive.js';
import policy from './views/policy.js';
import traffic from './views/traffic.js';
import keys from './views/keys.js';
import usage from './views/usage.js';
import audit from './views/audit.js';
import cluster from './views/cluster.js';
import tokens from './views/tokens.js';

const RANK = { viewer: 0, admin: 1, superadmin: 2 };

// Every screen, in navigation order; `rank` is the lowest role that may open it.
const VIEWS = [
  { path: 'catalog', label: 'Model catalog', view: catalog, rank: 0 },
  { path: 'providers', label: 'Providers', view: providers, rank: 0 },
  { path: 'routes', label: 'Routes', view: routes, rank: 0 },
  { path: 'groups', label: 'Provider groups', view: groups, rank: 0 },
  { path: 'policy', label: 'Policy mode', view: policy, rank: 0 },
  { path: 'adaptive', label: 'Adaptive routing', view: adaptive, rank: 2 },
  { path: 'traffic', label: 'Live traffic', view: traffic, rank: 0 },
  { path: 'keys', label: 'Keys', view: keys, rank: 0 },
  { path: 'usage', label: 'Usage', view: usage, rank: 0 },
  { path: 'audit', label: 'Audit log', view: audit, rank: 0 },
  { path: 'cluster', label: 'Cluster', view: cluster, rank: 0 },
  { path: 'tokens', label: 'Admin tokens', view: tokens, rank: 2 },
];

const $ = (id) => document.getElementById(id);
let who = null;        // { name, role }
let current = null;    // { cleanups: [] } of the mounted view
let mountCount = 0;

function showBanner(message) {
  const banner = $('banner');
  banner.textContent = message;
  banner.hidden = !message;
}

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query = ''] = raw.split('?');
  return { path: path || 'catalog', params: new URLSearchParams(query) };
}

function unmount() {
  if (!current) return;
  for (const fn of current.cleanups) {
    try { fn(); } catch { /* a cleanup never stops the next one */ }
  }
  current = null;
}

function context(entry, params) {
  const rank = RANK[who.role] ?? 0;
  const mounted = { cleanups: [], alive: true };
  mounted.cleanups.push(() => { mounted.alive = false; });
  current = mounted;
  return {
    name: who.name,
    role: who.role,
    rank,
    canWrite: rank >= 1,
    isSuper: rank >= 2,
    params,
    alive: () => mounted.alive,
    onCleanup: (fn) => mounted.cleanups.push(fn),
    banner: showBanner,
    // Runs fn now and then every `ms` while the view is shown; a run never overlaps the last.
    every(ms, fn) {
      let running = false;
      const tick = async () => {
        if (running || !mounted.alive) return;
        running = true;
        try {
          await fn();
        } catch (err) {
          if (mounted.alive) showBanner(err.message);
        } finally {
          running = false;
        }
      };
      const timer = setInterval(tick, ms);
      mounted.cleanups.push(() => clearInterval(timer));
      return tick();
    },
    navigate: (hash) => { location.hash = hash; },
  };
}

async function route() {
  if (!who) return;
  const { path, params } = parseHash();
  const rank = RANK[who.role] ?? 0;
  const entry = VIEWS.find((v) => v.path === path && v.rank <= rank) ?? VIEWS[0];
  unmount();
  showBanner('');
  for (const link of document.querySelectorAll('#nav a')) {
    link.classList.toggle('active', link.dataset.path === entry.path);
    if (link.dataset.path === entry.path) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  $('view-title').textContent = entry.label;
  document.title = `${entry.label} · rolter`;
  const root = $('view');
  const mount = ++mountCount;
  clear(root);
  root.dataset.view = entry.path;
  delete root.dataset.loaded;
  delete root.dataset.hash;
  const ctx = context(entry, params);
  try {
    await entry.view.render(root, ctx);
  } catch (err) {
    if (mount === mountCount) showBanner(err.message);
  }
  if (mount === mountCount) {
    root.dataset.hash = location.hash;
    root.dataset.loaded = '1';
  }
}

function buildNav() {
  const rank = RANK[who.role] ?? 0;
  clear($('nav'), VIEWS.filter((v) => v.rank <= rank).map((v) =>
    h('li', {}, h('a', { href: `#/${v.path}`, dataset: { path: v.path } }, v.label))));
}

function showLogin(message = '') {
  who = null;
  unmount();
  $('shell').hidden = true;
  $('login').hidden = false;
  const err = $('login-error');
  err.textContent = message;
  err.hidden = !message;
  $('login-token').focus();
}

function showShell() {
  $('login').hidden = true;
  $('shell').hidden = false;
  $('whoami-name').textContent = who.name;
  const role = $('whoami-role');
  role.textContent = who.role;
  role.className = `badge role-${who.role}`;
  document.body.dataset.role = who.role;
  buildNav();
  route();
}

async function signIn(bearer) {
  try {
    who = await api.whoami(bearer);
  } catch (err) {
    setToken('');
    showLogin(err.status === 401 ? 'That token is not valid.' : err.message);
    return;
  }
  setToken(bearer);
  showShell();
}

$('login-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const value = $('login-token').value.trim();
  $('login-token').value = '';
  if (value) signIn(value);
});

$('logout').addEventListener('click', () => {
  setToken('');
  delete document.body.dataset.role;
  showLogin();
});

unauthorized.addEventListener('unauthorized', () => {
  setToken('');
  showLogin('The token was refused; sign in again.');
});

window.addEventListener('hashchange', route);

if (token()) signIn(token());
else showLogin();
