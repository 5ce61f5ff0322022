// The dashboard tests' fleet: a rolter-sim with three engines, a control plane on SQLite (with a
// config file whose provider and route are read-only), two gateways following it, the providers
// and routes the tests look at (created through the admin API), and a background loop of chat
// requests through both gateways that the tests start and stop.
//
//   const fleet = await startFleet();
//   fleet.startTraffic(); ... await fleet.stopTraffic(); await fleet.stop();
//
// Run as a script (node ui/fleet.mjs) it starts the same fleet with traffic and prints the
// dashboard's address and token, for looking at the dashboard by hand; Ctrl+C stops it.
import path from 'node:path';
import { startSim } from '../lib/sim.mjs';
import { startControlPlane, startGateway, adminClient, tempDir } from '../lib/cluster.mjs';
import { stopSim } from '../lib/rolter.mjs';
import { chat, sleep, waitUntil } from '../lib/http.mjs';

export const ADMIN = 'dashboard-admin-token-0123456789';
const NODE = 'dashboard-node-token-0123456789';
const env = { ROLTER_ADMIN_TOKEN: ADMIN, ROLTER_NODE_TOKEN: NODE };

// The routes that take traffic, and what each one is for.
export const ROUTES = {
  weighted: 'weighted-3-1',     // weighted, 3:1: the catalog shows 75 % / 25 %
  roundRobin: 'rr-plain',       // round_robin: weights ignored, no share
  adaptive: 'adaptive-blend',   // adaptive, created through the API
  policy: 'policy-sessions',    // policy mode with least_inflight and session_affinity
  fromFile: 'from-file',        // from rolter.toml: read-only
};

async function created(r, what) {
  if (r.status !== 201) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r.body;
}

export async function startFleet({ uiDir } = {}) {
  const stopping = [];
  const stop = async () => {
    for (const fn of stopping.reverse()) {
      try { await fn(); } catch { /* the next one still stops */ }
    }
  };
  try {
    // Small modelled delays, so latency and TTFT are not all zero.
    // KV events published over ZeroMQ: engine-1 carries a KV-event stream.
    const sim = await startSim({ engines: 3, args: ['--time-scale', '0.1', '--kv-port', '0'] });
    stopping.push(() => stopSim(sim));
    const config = `[[providers]]\nname = "file-engine"\nbase_url = "${sim.engines[2].url}"\n\n` +
      `[[routes]]\nname = "${ROUTES.fromFile}"\nstrategy = "round_robin"\n` +
      `[[routes.targets]]\nprovider = "file-engine"\nmodel = "sim-model"\n`;
    const store = `sqlite:${path.join(tempDir('rolter-ui-db-'), 'rolter.db')}`;
    // The tests serve the assets embedded in the binary: never a folder inherited from the shell.
    const cpEnv = { ...env, ROLTER_UI_DIR: uiDir ?? '' };
    const cp = await startControlPlane({ config, store, env: cpEnv });
    stopping.push(() => cp.stop());
    const api = adminClient(cp.url, ADMIN);

    await created(await api.post('/providers', { name: 'engine-0', base_url: sim.engines[0].url, cost: { input: 0.2, output: 0.6 } }), 'engine-0');
    await created(await api.post('/providers', {
      name: 'engine-1', base_url: sim.engines[1].url, cost: { input: 0.1, output: 0.3 },
      kv_events: { endpoint: `tcp://127.0.0.1:${sim.engines[1].kv_port}` },
    }), 'engine-1');
    // A hosted API: it cannot carry a KV-event stream or an LMCache endpoint.
    await created(await api.post('/providers', { name: 'hosted-api', kind: 'anthropic', base_url: sim.engines[2].url }), 'hosted-api');
    const both = (extra = [{}, {}]) => [
      { provider: 'engine-0', model: 'sim-model', ...extra[0] },
      { provider: 'engine-1', model: 'sim-model', ...extra[1] },
    ];
    await created(await api.post('/routes', { name: ROUTES.weighted, strategy: 'weighted', targets: both([{ weight: 3 }, { weight: 1 }]) }), ROUTES.weighted);
    await created(await api.post('/routes', { name: ROUTES.roundRobin, strategy: 'round_robin', targets: both() }), ROUTES.roundRobin);
    await created(await api.post('/routes', { name: ROUTES.adaptive, strategy: 'adaptive', targets: both() }), ROUTES.adaptive);
    await created(await api.post('/routes', {
      name: ROUTES.policy, strategy: 'policy', targets: both(),
      policy: { least_inflight: { weight: 1 }, session_affinity: { weight: 1 } },
    }), ROUTES.policy);

    const gateways = [];
    for (const id of ['gw-a', 'gw-b']) {
      const gw = await startGateway({ controlPlane: cp.url, nodeId: id, stateDir: tempDir(), env });
      stopping.push(() => gw.stop());
      gateways.push(gw);
    }
    await waitUntil(async () => {
      const r = await api.get('/cluster/nodes');
      return r.body.data.length === 2 && r.body.data.every((n) => n.snapshot_version === r.body.snapshot_version);
    }, { timeoutMs: 15000, intervalMs: 100, what: 'both gateways to follow the control plane' });
    for (const gw of gateways) {
      await waitUntil(async () => (await chat(gw.url, ROUTES.adaptive, { timeoutMs: 3000 })).status === 200,
        { timeoutMs: 10000, intervalMs: 100, what: `${gw.url} to serve the routes` });
    }

    let traffic = null;
    return {
      sim, cp, api, gateways, stop: async () => { await stopTraffic(); await stop(); },
      // A bounded loop of chat requests over every traffic route, through both gateways.
      startTraffic({ maxSeconds = 240 } = {}) {
        if (traffic) return;
        const state = { running: true, sent: 0, failed: 0 };
        const deadline = Date.now() + maxSeconds * 1000;
        const routes = [ROUTES.weighted, ROUTES.roundRobin, ROUTES.adaptive, ROUTES.policy];
        const worker = async (w) => {
          while (state.running && Date.now() < deadline) {
            const gw = gateways[(state.sent + w) % gateways.length];
            const model = routes[state.sent % routes.length];
            state.sent += 1;
            try {
              const r = await chat(gw.url, model, { content: `dashboard ${w} ${state.sent}`, maxTokens: 4, timeoutMs: 5000,
                headers: { 'session-id': `s-${state.sent % 7}` } });
              if (r.status !== 200) state.failed += 1;
            } catch {
              state.failed += 1;
            }
            await sleep(40);
          }
        };
        state.done = Promise.all([0, 1, 2].map(worker));
        traffic = state;
      },
      stopTraffic,
      trafficStats: () => ({ sent: traffic?.sent ?? 0, failed: traffic?.failed ?? 0 }),
    };
    async function stopTraffic() {
      if (!traffic) return;
      traffic.running = false;
      await traffic.done;
      traffic = null;
    }
  } catch (err) {
    await stop();
    throw err;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const fleet = await startFleet({ uiDir: process.env.ROLTER_UI_DIR });
  fleet.startTraffic({ maxSeconds: 3600 });
  console.log(`dashboard: ${fleet.cp.url}/ui/  token: ${ADMIN}`);
  for (const gw of fleet.gateways) console.log(`gateway: ${gw.url}`);
  const quit = async () => { await fleet.stop(); process.exit(0); };
  process.on('SIGINT', quit);
  process.on('SIGTERM', quit);
}
