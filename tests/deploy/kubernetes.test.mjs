// The Kubernetes manifests (deploy/kubernetes) are rendered with `kubectl kustomize` and held to
// the real rolter: the ConfigMap's rolter.toml passes `rolter check`; the control plane and the
// gateways start with their Deployments' own arguments (addresses moved to loopback) and answer
// every probe and scrape on the port the manifest names; the ports are the listen addresses; the
// shutdown sequence fits in the grace period; the PDB and the HPA govern the gateways.
// Skipped when kubectl is not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { binDir, spawnRolter, startFleet } from '../lib/rolter.mjs';
import { fetchWithin, postJson } from '../lib/http.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const base = path.join(repoRoot, 'deploy', 'kubernetes');
const vllmExample = path.join(base, 'examples', 'vllm');

function findKubectl() {
  const candidates = [process.env.KUBECTL,
    ...(process.env.PATH ?? '').split(':').map((dir) => path.join(dir, 'kubectl'))];
  for (const file of candidates.filter(Boolean)) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch { /* next */ }
  }
  return null;
}
const kubectl = findKubectl();
const skip = kubectl ? false : 'kubectl is not installed: the Kubernetes manifests are not rendered (apt-get install kubectl, or set KUBECTL)';

// Every object `kubectl kustomize dir` renders.
function render(dir) {
  const text = execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8', timeout: 60000 });
  const docs = parseAllDocuments(text);
  for (const d of docs) assert.deepEqual(d.errors, [], `${dir}: YAML errors`);
  return docs.map((d) => d.toJS()).filter(Boolean);
}

function one(objects, kind, name) {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  assert.equal(found.length, 1, `one ${kind}${name ? ` ${name}` : ''} (found ${found.length})`);
  return found[0];
}

// The value of `key` in rolter.toml's [server] table, or undefined (a plain `key = value` line).
function serverKey(toml, key) {
  const table = toml.split(/^\[server\]\s*$/m)[1]?.split(/^\[/m)[0] ?? '';
  const m = table.match(new RegExp(`^${key}\\s*=\\s*("([^"]*)"|\\d+)`, 'm'));
  if (!m) return undefined;
  return m[2] ?? Number(m[1]);
}

// rolter.toml with its listeners on loopback ports of the system's choosing.
function onLoopback(toml) {
  return toml.replace(/^(listen|metrics_listen)\s*=\s*"[^"]*"/gm, '$1 = "127.0.0.1:0"');
}

const portOf = (hostPort) => Number(hostPort.slice(hostPort.lastIndexOf(':') + 1));
const argAfter = (args, flag) => {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args[i + 1];
};
const rolterContainers = (objects) => objects.filter((o) => o.kind === 'Deployment')
  .flatMap((d) => d.spec.template.spec.containers.map((c) => ({ deployment: d, container: c })))
  .filter(({ container }) => /(^|\/)rolter(:|$)/.test(container.image));

function check(configText) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-k8s-'));
  const file = path.join(dir, 'rolter.toml');
  writeFileSync(file, configText);
  return new Promise((resolve) => {
    execFile(path.join(binDir, 'rolter'), ['check', '--config', file], { timeout: 10000 },
      (error, stdout, stderr) => {
        rmSync(dir, { recursive: true, force: true });
        resolve({ code: error ? error.code : 0, output: stdout + stderr });
      });
  });
}

// The probes and scrapes a container's manifest points at: [{ what, path, port }] with the
// port's name or number as the manifest gives it.
function httpChecks(container, serviceMonitorPaths = []) {
  const checks = [];
  for (const kind of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
    const get = container[kind]?.httpGet;
    if (get) checks.push({ what: kind, path: get.path, port: get.port });
  }
  for (const { path: p, port } of serviceMonitorPaths) checks.push({ what: 'ServiceMonitor', path: p, port });
  return checks;
}

// The ServiceMonitor endpoints that scrape a Deployment's pods, as [{ path, port }] with the
// container port's name (resolved through the Service the monitor selects).
function scrapesOf(objects, deployment) {
  const podLabels = deployment.spec.template.metadata.labels;
  const selects = (selector, labels) => Object.entries(selector).every(([k, v]) => labels[k] === v);
  const out = [];
  for (const monitor of objects.filter((o) => o.kind === 'ServiceMonitor')) {
    for (const service of objects.filter((o) => o.kind === 'Service')) {
      if (!selects(monitor.spec.selector.matchLabels, service.metadata.labels ?? {})) continue;
      if (!selects(service.spec.selector, podLabels)) continue;
      for (const endpoint of monitor.spec.endpoints) {
        const servicePort = service.spec.ports.find((p) => p.name === endpoint.port);
        if (servicePort) out.push({ path: endpoint.path, port: servicePort.targetPort });
      }
    }
  }
  return out;
}

test('the base renders: control plane and gateway Deployments, Services, ConfigMap, HPA, PDB, ServiceMonitors', { skip }, () => {
  const objects = render(base);
  const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
  assert.deepEqual(kinds, [
    'ConfigMap/rolter-config',
    'Deployment/rolter-control-plane', 'Deployment/rolter-gateway',
    'HorizontalPodAutoscaler/rolter-gateway', 'PodDisruptionBudget/rolter-gateway',
    'Service/rolter-control-plane', 'Service/rolter-gateway',
    'ServiceMonitor/rolter-control-plane', 'ServiceMonitor/rolter-gateway',
  ]);
  for (const { container } of rolterContainers(objects)) {
    assert.equal(container.image, 'localhost/rolter:latest', 'the image scripts/image tags');
  }
  assert.equal(rolterContainers(objects).length, 2);
});

test("the base ConfigMap's rolter.toml passes rolter check", { skip }, async () => {
  const toml = one(render(base), 'ConfigMap', 'rolter-config').data['rolter.toml'];
  const { code, output } = await check(toml);
  assert.equal(code, 0, output);
  assert.doesNotMatch(output, /error/i, output);
});

test('every container port is a listen address it is given, and every probe names a declared port', { skip }, () => {
  const objects = render(base);
  const toml = one(objects, 'ConfigMap', 'rolter-config').data['rolter.toml'];
  const gateway = one(objects, 'Deployment', 'rolter-gateway').spec.template.spec.containers[0];
  const controlPlane = one(objects, 'Deployment', 'rolter-control-plane').spec.template.spec.containers[0];
  const ports = (c) => Object.fromEntries(c.ports.map((p) => [p.name, p.containerPort]));

  assert.equal(gateway.args[0], 'gateway');
  assert.equal(portOf(argAfter(gateway.args, '--listen')), ports(gateway).http, 'gateway --listen = containerPort http');
  assert.equal(portOf(serverKey(toml, 'listen')), ports(gateway).http, 'server.listen = the gateway port');
  const metricsListen = serverKey(toml, 'metrics_listen');
  assert.ok(metricsListen, 'rolter.toml sets server.metrics_listen (the probes and the scrape use it)');
  assert.equal(portOf(metricsListen), ports(gateway).metrics, 'server.metrics_listen = containerPort metrics');
  assert.match(metricsListen, /^0\.0\.0\.0:/, 'the kubelet and Prometheus reach the metrics listener from outside the pod');
  assert.match(argAfter(gateway.args, '--listen'), /^0\.0\.0\.0:/);

  assert.equal(controlPlane.args[0], 'control-plane');
  assert.equal(portOf(argAfter(controlPlane.args, '--listen')), ports(controlPlane).http, 'control plane --listen = containerPort http');
  const cpService = one(objects, 'Service', 'rolter-control-plane');
  const cpUrl = new URL(argAfter(gateway.args, '--control-plane'));
  assert.equal(cpUrl.hostname, cpService.metadata.name, 'the gateways reach the control plane by its Service');
  const cpServicePort = cpService.spec.ports.find((p) => p.port === Number(cpUrl.port));
  assert.ok(cpServicePort, `the control plane Service has port ${cpUrl.port}`);
  assert.equal(ports(controlPlane)[cpServicePort.targetPort], ports(controlPlane).http);

  for (const { deployment, container } of rolterContainers(objects)) {
    for (const { what, port } of httpChecks(container, scrapesOf(objects, deployment))) {
      assert.ok(port in ports(container), `${deployment.metadata.name} ${what}: port ${port} is a containerPort`);
    }
  }
  for (const service of objects.filter((o) => o.kind === 'Service')) {
    const pods = rolterContainers(objects).find(({ deployment }) => Object.entries(service.spec.selector)
      .every(([k, v]) => deployment.spec.template.metadata.labels[k] === v));
    assert.ok(pods, `Service ${service.metadata.name} selects a Deployment`);
    for (const p of service.spec.ports) {
      assert.ok(p.targetPort in ports(pods.container), `Service ${service.metadata.name}: ${p.targetPort} is a containerPort`);
    }
  }
});

test('each Deployment runs as the image user, read-only, with no capabilities, within limits', { skip }, () => {
  for (const { deployment, container } of rolterContainers(render(base))) {
    const name = deployment.metadata.name;
    const pod = deployment.spec.template.spec.securityContext;
    assert.equal(pod.runAsNonRoot, true, name);
    assert.equal(pod.runAsUser, 10001, `${name}: the uid of the image's rolter user`);
    const sc = container.securityContext;
    assert.equal(sc.readOnlyRootFilesystem, true, name);
    assert.equal(sc.allowPrivilegeEscalation, false, name);
    assert.deepEqual(sc.capabilities.drop, ['ALL'], name);
    for (const r of ['cpu', 'memory']) {
      assert.ok(container.resources.requests[r], `${name}: requests.${r}`);
      assert.ok(container.resources.limits[r], `${name}: limits.${r}`);
    }
    // --workers matches the CPU limit: 0 would start a worker per core of the node.
    assert.equal(Number(argAfter(container.args, '--workers')), Number(container.resources.limits.cpu), name);
  }
});

test('shutdown fits: the preStop pause, then server.drain_timeout_ms, within terminationGracePeriodSeconds', { skip }, () => {
  const objects = render(base);
  const toml = one(objects, 'ConfigMap', 'rolter-config').data['rolter.toml'];
  // SPEC §3: 30000 when the file does not set it.
  const drainMs = serverKey(toml, 'drain_timeout_ms') ?? 30000;
  for (const { deployment, container } of rolterContainers(objects)) {
    const name = deployment.metadata.name;
    const command = container.lifecycle?.preStop?.exec?.command;
    assert.ok(command, `${name}: a preStop hook, so the pod leaves the endpoints before it drains`);
    assert.equal(command[0], '/bin/sleep', `${name}: preStop sleeps (the image has /bin/sleep)`);
    const pauseSecs = Number(command[1]);
    assert.ok(pauseSecs >= 5, `${name}: a preStop pause of ${pauseSecs} s is too short for endpoints to drop the pod`);
    const grace = deployment.spec.template.spec.terminationGracePeriodSeconds;
    assert.ok(grace >= pauseSecs + Math.ceil(drainMs / 1000),
      `${name}: terminationGracePeriodSeconds ${grace} < preStop ${pauseSecs} s + drain ${drainMs} ms: the kubelet would kill requests still draining`);
  }
});

test('the PDB and the HPA govern the gateway Deployment and nothing else', { skip }, () => {
  const objects = render(base);
  const gateway = one(objects, 'Deployment', 'rolter-gateway');
  const controlPlane = one(objects, 'Deployment', 'rolter-control-plane');
  const hpa = one(objects, 'HorizontalPodAutoscaler');
  assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'rolter-gateway' });
  assert.equal(hpa.spec.metrics[0].resource.name, 'cpu');
  assert.ok(hpa.spec.minReplicas >= 2, 'at least two gateways, so the PDB lets one go');
  const pdb = one(objects, 'PodDisruptionBudget');
  const selects = (labels) => Object.entries(pdb.spec.selector.matchLabels).every(([k, v]) => labels[k] === v);
  assert.ok(selects(gateway.spec.template.metadata.labels), 'the PDB selects the gateway pods');
  assert.ok(!selects(controlPlane.spec.template.metadata.labels), 'the PDB does not select the control plane');
});

test('the ServiceMonitors scrape /metrics', { skip }, () => {
  const objects = render(base);
  const monitors = objects.filter((o) => o.kind === 'ServiceMonitor');
  for (const m of monitors) {
    assert.equal(m.apiVersion, 'monitoring.coreos.com/v1');
    for (const e of m.spec.endpoints) assert.equal(e.path, '/metrics', m.metadata.name);
  }
  for (const name of ['rolter-gateway', 'rolter-control-plane']) {
    assert.ok(scrapesOf(objects, one(objects, 'Deployment', name)).length >= 1, `${name} is scraped`);
  }
});

// Runs a Deployment's rolter container as the manifest says, on loopback: its args with the
// listen addresses on port 0, $(VAR) expanded from `env`, paths inside the container moved into
// `dir`. Checks that each path the process writes is on a writable volume (the root file system
// is read-only) and that --config names a file of the mounted ConfigMap.
function localArgs(deployment, container, { dir, env, controlPlaneUrl, configPath, configMap }) {
  const mounts = container.volumeMounts ?? [];
  const volumes = deployment.spec.template.spec.volumes ?? [];
  const mountOf = (file) => mounts.filter((m) => file === m.mountPath || file.startsWith(`${m.mountPath}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  const args = container.args.map((a) => a.replace(/\$\((\w+)\)/g, (_, v) => {
    assert.ok(container.env?.some((e) => e.name === v), `$(${v}) is one of the container's env`);
    return env[v];
  }));
  for (let i = 0; i < args.length; ++i) {
    const [flag, value] = [args[i], args[i + 1]];
    if (flag === '--listen') args[i + 1] = '127.0.0.1:0';
    if (flag === '--control-plane') args[i + 1] = controlPlaneUrl;
    if (flag === '--config') {
      const mount = mountOf(value);
      assert.ok(mount, `--config ${value} is on a mounted volume`);
      const volume = volumes.find((v) => v.name === mount.name);
      assert.equal(volume.configMap?.name, configMap, `--config ${value} is from the ConfigMap ${configMap}`);
      assert.equal(path.relative(mount.mountPath, value), 'rolter.toml', 'the ConfigMap key');
      args[i + 1] = configPath;
    }
    if (flag === '--state-dir') {
      const mount = mountOf(value);
      assert.ok(mount && !mount.readOnly, `--state-dir ${value} is on a writable volume (the root file system is read-only)`);
      args[i + 1] = path.join(dir, 'state');
    }
  }
  return args;
}

async function expectOk(url, what) {
  const res = await fetchWithin(url);
  const text = await res.text();
  assert.equal(res.status, 200, `${what}: GET ${url}: ${res.status} ${text}`);
  return text;
}

test('the control plane and a gateway, started as the Deployments say, answer every probe and scrape', { skip }, async (t) => {
  const objects = render(base);
  const toml = one(objects, 'ConfigMap', 'rolter-config').data['rolter.toml'];
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-k8s-'));
  const procs = [];
  t.after(async () => {
    for (const p of procs.reverse()) await p.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  const configPath = path.join(dir, 'rolter.toml');
  writeFileSync(configPath, onLoopback(toml));
  const env = {
    DATABASE_URL: `sqlite:${path.join(dir, 'rolter.db')}`,
    ROLTER_ADMIN_TOKEN: 'k8s-admin-token', ROLTER_NODE_TOKEN: 'k8s-node-token',
  };
  const started = {};
  for (const [name, ready] of [
    ['rolter-control-plane', /rolter control plane listening on (http):\/\/127\.0\.0\.1:(\d+)/],
    ['rolter-gateway', /rolter gateway listening on (http):\/\/127\.0\.0\.1:(\d+)/],
  ]) {
    const deployment = one(objects, 'Deployment', name);
    const container = deployment.spec.template.spec.containers[0];
    const args = localArgs(deployment, container, {
      dir, env, configPath, configMap: 'rolter-config',
      controlPlaneUrl: started['rolter-control-plane']?.url,
    });
    const proc = await spawnRolter(args, { env, ready, what: name, startTimeoutMs: 20000 });
    procs.push(proc);
    const metrics = proc.log.text.match(/metrics listening on http:\/\/127\.0\.0\.1:(\d+)/);
    const byName = { http: proc.port, ...(metrics ? { metrics: Number(metrics[1]) } : {}) };
    started[name] = proc;
    for (const { what, path: p, port } of httpChecks(container, scrapesOf(objects, deployment))) {
      assert.ok(byName[port], `${name} ${what}: port ${port} is listening (${JSON.stringify(byName)})`);
      const text = await expectOk(`http://127.0.0.1:${byName[port]}${p}`, `${name} ${what}`);
      if (what === 'ServiceMonitor') assert.match(text, /^rolter_/m, `${name}: Prometheus text on ${p}`);
    }
  }
});

test('rolter serve with the ConfigMap answers the gateway probes on their ports', { skip }, async (t) => {
  const objects = render(base);
  const toml = one(objects, 'ConfigMap', 'rolter-config').data['rolter.toml'];
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-k8s-'));
  const configPath = path.join(dir, 'rolter.toml');
  writeFileSync(configPath, onLoopback(toml));
  const proc = await spawnRolter(['serve', '--config', configPath, '--workers', '2'], {
    ready: /rolter listening on (http):\/\/127\.0\.0\.1:(\d+)/, what: 'rolter serve',
  });
  t.after(async () => {
    await proc.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  const metrics = Number(proc.log.text.match(/metrics listening on http:\/\/127\.0\.0\.1:(\d+)/)?.[1]);
  const byName = { http: proc.port, metrics };
  const deployment = one(objects, 'Deployment', 'rolter-gateway');
  const container = deployment.spec.template.spec.containers[0];
  for (const { what, path: p, port } of httpChecks(container, scrapesOf(objects, deployment))) {
    await expectOk(`http://127.0.0.1:${byName[port]}${p}`, `rolter serve ${what}`);
  }
});

// What the probes expect of a draining gateway (SPEC §17): from SIGTERM, /readyz answers 503
// while /healthz stays 200 and a stream in flight finishes, then rolter exits 0.
test('draining, as the probes see it: /readyz 503, /healthz 200, the stream in flight finishes', { skip }, async (t) => {
  const objects = render(base);
  const toml = one(objects, 'ConfigMap', 'rolter-config').data['rolter.toml'];
  const container = one(objects, 'Deployment', 'rolter-gateway').spec.template.spec.containers[0];
  const readiness = container.readinessProbe.httpGet;
  const liveness = container.livenessProbe.httpGet;
  const { rolter } = await startFleet(t, {
    engines: 1,
    simArgs: ['--ttft-ms', '0', '--token-ms', '25'],  // 80 tokens: a stream of 2 s
    config: (engines) => onLoopback(toml).replace('base_url = "http://engine:8000"', `base_url = "${engines[0].url}"`),
  });
  const metrics = Number(rolter.log.text.match(/metrics listening on http:\/\/127\.0\.0\.1:(\d+)/)?.[1]);
  const byName = { http: rolter.port, metrics };
  const res = await postJson(`${rolter.url}/v1/chat/completions`, {
    model: 'default', stream: true, messages: [{ role: 'user', content: 'x' }], max_tokens: 80,
  });
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  await reader.read();
  rolter.signal('SIGTERM');
  await rolter.log.waitFor(/draining/);
  const ready = await fetchWithin(`http://127.0.0.1:${byName[readiness.port]}${readiness.path}`);
  assert.equal(ready.status, 503, `${readiness.path} while draining: ${await ready.text()}`);
  const live = await fetchWithin(`http://127.0.0.1:${byName[liveness.port]}${liveness.path}`);
  assert.equal(live.status, 200, `${liveness.path} while draining: ${await live.text()}`);
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  assert.match(text, /data: \[DONE\]\n\n$/);
  const { code } = await rolter.waitForExit({ timeoutMs: 30000 });
  assert.equal(code, 0);
});

test('the vLLM example renders: a headless Service that the provider discovers, in the namespace it names', { skip }, async (t) => {
  const objects = render(vllmExample);
  const namespaces = new Set(objects.map((o) => o.metadata.namespace));
  assert.deepEqual([...namespaces], ['llm']);
  const toml = one(objects, 'ConfigMap', 'rolter-config').data['rolter.toml'];
  const discover = toml.match(/^discover\s*=\s*"dns:\/\/([^":]+):(\d+)"/m);
  assert.ok(discover, 'a provider discovers its instances by DNS');
  const [service, namespace, svc, cluster, local] = discover[1].split('.');
  assert.deepEqual([namespace, svc, cluster, local], ['llm', 'svc', 'cluster', 'local']);
  const headless = one(objects, 'Service', service);
  assert.equal(headless.spec.clusterIP, 'None', 'headless: DNS answers every ready replica');
  const vllm = objects.find((o) => o.kind === 'Deployment' &&
    Object.entries(headless.spec.selector).every(([k, v]) => o.spec.template.metadata.labels[k] === v));
  assert.ok(vllm, 'the headless Service selects the vLLM Deployment');
  const servicePort = headless.spec.ports.find((p) => p.port === Number(discover[2]));
  assert.ok(servicePort, `the headless Service has port ${discover[2]}`);
  const named = vllm.spec.template.spec.containers[0].ports.find((p) => p.name === servicePort.targetPort);
  assert.equal(named?.containerPort, Number(discover[2]), 'with DNS, the address is the pod, so its port is the container port');
  assert.equal(rolterContainers(objects).length, 2, 'the base comes along');
  const { code, output } = await check(toml);
  assert.equal(code, 0, output);
  assert.match(output, /each instance found at dns:\/\//, output);
});
