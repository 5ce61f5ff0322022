// Model catalog: every route and provider group with its targets, and each target's share of
// traffic where the strategy reads weights (otherwise a note that the strategy ignores them).
import { list } from '../api.js';
import { h, clear, table, badge, emptyState, section, num, percent } from '../dom.js';

function entryCard(entry) {
  const showsShare = entry.targets.some((t) => t.share !== null && t.share !== undefined);
  const columns = [
    { label: 'Provider' }, { label: 'Model' }, { label: 'Weight', num: true },
    ...(showsShare ? [{ label: 'Share', num: true }] : []),
    { label: 'Instances', num: true },
  ];
  const rows = entry.targets.map((t) => {
    const share = t.share === null || t.share === undefined
      ? { value: '', num: true }
      : { value: percent(t.share), num: true, attrs: { dataset: { share: String(t.share) } } };
    return h('tr', { dataset: { provider: t.provider, model: t.model ?? '' } },
      h('td', {}, t.provider),
      h('td', {}, t.model ?? h('span', { class: 'muted' }, 'as requested')),
      h('td', { class: 'num' }, num(t.weight, 3)),
      showsShare ? h('td', { class: 'num', ...share.attrs }, share.value) : null,
      h('td', { class: 'num' }, String(t.instances ?? '—')));
  });
  const card = section(null,
    h('h2', {},
      h('span', {}, entry.kind === 'provider_group' ? `${entry.name}/*` : entry.name),
      badge(entry.kind === 'provider_group' ? 'provider group' : 'route'),
      badge(entry.strategy, 'strategy'),
      entry.read_only ? badge('from rolter.toml') : null),
    table(columns, rows, { empty: 'No targets.' }),
    showsShare ? null : h('p', { class: 'note', dataset: { weightsNote: '' } },
      `weights are ignored by ${entry.strategy}`));
  card.dataset.entry = entry.name;
  card.dataset.kind = entry.kind;
  return card;
}

export default {
  async render(root) {
    const entries = await list('/catalog');
    const routes = entries.filter((e) => e.kind === 'route');
    const groups = entries.filter((e) => e.kind === 'provider_group');
    if (entries.length === 0) {
      clear(root, emptyState('No routes or provider groups yet.', 'Create a route to publish a model name.'));
      return;
    }
    clear(root,
      h('p', { class: 'muted' }, 'The model names clients can ask for, where each one goes, and how traffic is split.'),
      routes.length ? h('h2', { class: 'section-title' }, `Routes (${routes.length})`) : null,
      routes.map(entryCard),
      groups.length ? h('h2', { class: 'section-title' }, `Provider groups (${groups.length})`) : null,
      groups.map(entryCard));
  },
};
