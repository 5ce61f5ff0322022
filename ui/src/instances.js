// Merges the live per-instance state every node reports (stats.instances) into one row per
// provider instance: health and breaker counted over nodes, in-flight summed, the worst KV-event
// stream state, the highest LMCache occupancy and engine load.

const BREAKER_RANK = { closed: 0, half_open: 1, open: 2 };
const KV_RANK = { live: 0, stale: 1, gap: 2, disconnected: 3 };

// The base URLs a provider entity serves from.
export function instanceUrls(provider) {
  if (Array.isArray(provider.instances) && provider.instances.length) {
    return provider.instances.map((i) => i.base_url);
  }
  return provider.base_url ? [provider.base_url] : [];
}

// nodes: /api/v1/cluster/nodes' data. Returns Map "provider@base_url" → merged state.
export function mergeInstances(nodes) {
  const merged = new Map();
  for (const node of nodes) {
    if (node.health === 'down') continue;
    for (const inst of node.stats?.instances ?? []) {
      // `endpoint` (the metrics' label); nodes of earlier versions call it `instance`.
      const key = inst.endpoint ?? inst.instance ?? `${inst.provider}@${inst.base_url}`;
      let m = merged.get(key);
      if (!m) {
        m = { nodes: 0, healthKnown: 0, healthy: 0, breaker: 'closed', breakerOpenOn: 0, parked: 0, in_flight: 0,
          kv_events: null, lmcache_occupancy: null, engine_load: null };
        merged.set(key, m);
      }
      m.nodes += 1;
      // null: the node has no such gauge (yet); it counts neither way.
      if (inst.healthy !== null && inst.healthy !== undefined) m.healthKnown += 1;
      if (inst.healthy === true) m.healthy += 1;
      if ((BREAKER_RANK[inst.breaker] ?? 0) > (BREAKER_RANK[m.breaker] ?? 0)) m.breaker = inst.breaker;
      if (inst.breaker && inst.breaker !== 'closed') m.breakerOpenOn += 1;
      if (inst.parked === true) m.parked += 1;
      m.in_flight += Number(inst.in_flight ?? 0);
      if (inst.kv_events !== null && inst.kv_events !== undefined) {
        if (m.kv_events === null || (KV_RANK[inst.kv_events] ?? 0) > (KV_RANK[m.kv_events] ?? 0)) m.kv_events = inst.kv_events;
      }
      if (typeof inst.lmcache_occupancy === 'number') {
        m.lmcache_occupancy = Math.max(m.lmcache_occupancy ?? 0, inst.lmcache_occupancy);
      }
      if (typeof inst.engine_load === 'number') m.engine_load = Math.max(m.engine_load ?? 0, inst.engine_load);
    }
  }
  return merged;
}
