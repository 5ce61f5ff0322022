// The list-and-editor screen shared by routes and provider groups: a table of every entity;
// `?edit=NAME` opens its editor (or its read-only details), `?new=1` the editor for a new one.
import { api, list, seg } from './api.js';
import { h, clear, table, badge, emptyState, section } from './dom.js';
import { entityEditor, entityDetails } from './entity_editor.js';
import { defaultStrategy } from './strategy_picker.js';

export function entityScreen(kind) {
  return {
    async render(root, ctx) {
      const editing = ctx.params.get('edit');
      const creating = ctx.params.get('new') === '1' && ctx.canWrite;
      const back = () => ctx.navigate(`#/${kind.path}`);
      if (editing !== null || creating) {
        const [entity, strategies, providers] = await Promise.all([
          creating ? null : api.get(`${kind.collection}/${seg(editing)}`),
          list('/strategies'),
          list('/providers'),
        ]);
        if (!ctx.alive()) return;
        if (entity && (entity.read_only || !ctx.canWrite)) {
          clear(root, entityDetails(kind, entity, strategies), h('div', {}, h('a', { href: `#/${kind.path}` }, '← All ' + kind.plural)));
          return;
        }
        const form = entityEditor(kind, {
          entity, strategies, providers,
          onSaved: (saved) => { if (creating) ctx.navigate(`#/${kind.path}?edit=${encodeURIComponent(saved[kind.nameKey])}`); },
          onDeleted: back,
          onCancel: back,
        });
        clear(root, section(creating ? `New ${kind.noun}` : `${kind.Noun} ${entity[kind.nameKey]}`, form));
        return;
      }
      const [entities, strategies] = await Promise.all([list(kind.collection), list('/strategies')]);
      if (!ctx.alive()) return;
      const unset = defaultStrategy(strategies);
      const columns = [
        { label: 'Name' }, { label: 'Strategy' }, { label: kind.listKey === 'members' ? 'Members' : 'Targets' },
        { label: 'Source' }, { label: '' },
      ];
      const rows = entities.map((e) => {
        const name = e[kind.nameKey];
        const href = `#/${kind.path}?edit=${encodeURIComponent(name)}`;
        const editable = ctx.canWrite && !e.read_only;
        const targets = (e[kind.listKey] ?? []).map((t) => (t[kind.modelKey] ? `${t.provider}/${t[kind.modelKey]}` : t.provider)).join(', ');
        return h('tr', { dataset: { entity: name } },
          h('td', {}, h('a', { href }, name)),
          h('td', {}, e.strategy ?? unset),
          h('td', { class: 'muted' }, targets),
          h('td', {}, e.read_only ? badge('rolter.toml') : badge('store')),
          h('td', { class: 'actions' }, editable
            ? h('a', { href, class: 'button-link', dataset: { write: '' } }, 'Edit')
            : h('a', { href }, 'View')));
      });
      const newButton = ctx.canWrite
        ? h('button', { type: 'button', class: 'primary', dataset: { write: '' } }, `New ${kind.noun}`)
        : null;
      newButton?.addEventListener('click', () => ctx.navigate(`#/${kind.path}?new=1`));
      clear(root, section(null,
        h('div', { class: 'toolbar' }, h('span', { class: 'muted' }, kind.blurb), h('span', { class: 'spacer' }), newButton),
        entities.length
          ? table(columns, rows)
          : emptyState(`No ${kind.plural} yet.`, ctx.canWrite ? `Create one with “New ${kind.noun}”.` : '')));
    },
  };
}
