#!/usr/bin/env node
// Flow control measured, on and off (docs/flow-control.md): the fairness and priority scenarios of
// tests/integration/flow_control.test.mjs, run longer and once with the providers' bound
// (flow control on) and once without it (off: the engines queue everything).
//
// Usage: cd tests && ROLTER_BIN_DIR=$PWD/../build/bin node bench/flow_measure.mjs [seconds]
// Prints one JSON line per scenario and mode.
import { configFor, startRolter, stopSim } from '../lib/rolter.mjs';
import { startSim } from '../lib/sim.mjs';
import { openLoop, summarize, streamOnce } from '../lib/flow_load.mjs';

const seconds = Number(process.argv[2] ?? 10);
const kEngines = 4;
const kPerInstance = 8;
// --max-batch 8: an engine runs 8 sequences and queues the rest, as a real one past its sweet
// spot would; with flow control off, that queue is where requests wait.
const kSimArgs = ['--time-scale', '1', '--ttft-ms', '30', '--token-ms', '80', '--decode-ms-per-seq', '0',
  '--prefill-ms-per-token', '0', '--max-batch', '8'];
const kMaxTokens = 16;
const kPrompt = 'lorem ipsum '.repeat(1365);  // 16 KB: about one fairness quantum
const kCapacity = (kEngines * kPerInstance) / 1.25;
const env = { KA: 'ka', KB: 'kb', KI: 'ki', KX: 'kx' };

async function run(mode, scenario) {
  const sim = await startSim({ engines: kEngines, args: kSimArgs });
  const config = configFor({
    engines: sim.engines,
    providerFields: mode === 'on' ? { max_in_flight_per_instance: kPerInstance } : {},
    routes: [{ name: 'm', strategy: 'power_of_two', targets: sim.engines.map((_, i) => ({ engine: i, model: 'sim-model' })) }],
    keys: [
      { name: 'a', key_env: 'KA' }, { name: 'b', key_env: 'KB' },
      { name: 'interactive', key_env: 'KI', priority: 6 }, { name: 'batch', key_env: 'KX', priority: 1 },
    ],
    // On: the light tenant keeps two slots (fair_reserve), the interactive band preempts.
    extra: '[queue]\nmax_requests = 256\nmax_wait_ms = 5000\nfair_reserve = 2\n[[queue.bands]]\nband = 6\npreempt = true\n',
  });
  const rolter = await startRolter({ config, env });
  const durationMs = seconds * 1000;
  const send = (key) => () => streamOnce(rolter.url, 'm', { key, maxTokens: kMaxTokens, content: kPrompt, timeoutMs: 120000 });
  try {
    const [heavy, light] = scenario === 'fairness'
      ? await Promise.all([openLoop({ rate: 5 * kCapacity, durationMs }, send('ka')),
        openLoop({ rate: 0.2 * kCapacity, durationMs }, send('kb'))])
      : await Promise.all([openLoop({ rate: 3 * kCapacity, durationMs }, send('kx')),
        openLoop({ rate: 0.2 * kCapacity, durationMs }, send('ki'))]);
    const names = scenario === 'fairness' ? ['A (5x)', 'B (20%)'] : ['batch (3x)', 'interactive (20%)'];
    console.log(JSON.stringify({ scenario, flow_control: mode, seconds,
      [names[0]]: summarize(heavy, durationMs), [names[1]]: summarize(light, durationMs) }));
  } finally {
    await rolter.stop();
    await stopSim(sim);
  }
}

async function alone() {
  const sim = await startSim({ engines: kEngines, args: kSimArgs });
  const rolter = await startRolter({ config: configFor({ engines: sim.engines,
    routes: [{ name: 'm', strategy: 'power_of_two', targets: sim.engines.map((_, i) => ({ engine: i, model: 'sim-model' })) }],
    keys: [{ name: 'b', key_env: 'KB' }] }), env });
  try {
    const r = await openLoop({ rate: 0.2 * kCapacity, durationMs: seconds * 1000 },
      () => streamOnce(rolter.url, 'm', { key: 'kb', maxTokens: kMaxTokens, content: kPrompt }));
    console.log(JSON.stringify({ scenario: 'light tenant alone', seconds, alone: summarize(r, seconds * 1000) }));
  } finally {
    await rolter.stop();
    await stopSim(sim);
  }
}

await alone();
for (const scenario of ['fairness', 'priority']) {
  for (const mode of ['on', 'off']) await run(mode, scenario);
}
