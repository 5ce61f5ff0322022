// Audit log: every change, newest first (who, what, when, before and after), with a search box
// and paging.
import { api } from '../api.js';
import { h, clear, table, emptyState, section, timestamp } from '../dom.js';

const PAGE = 50;

function details(entry) {
  if (entry.before === null && entry.after === null) return '';
  const box = h('details', {},
    h('summary', {}, 'before / after'),
    h('div', { class: 'grid-2' },
      h('div', {}, h('strong', {}, 'Before'), h('pre', {}, entry.before === null ? '—' : JSON.stringify(entry.before, null, 2))),
      h('div', {}, h('strong', {}, 'After'), h('pre', {}, entry.after === null ? '—' : JSON.stringify(entry.after, null, 2)))));
  return box;
}

export default {
  async render(root, ctx) {
    let q = ctx.params.get('q') ?? '';
    let offset = Number(ctx.params.get('offset') ?? 0) || 0;
    const search = h('input', { type: 'search', id: 'audit-q', class: 'search-input', value: q, placeholder: 'Search actor, action or subject', autocomplete: 'off' });
    const prev = h('button', { type: 'button' }, '← Newer');
    const next = h('button', { type: 'button' }, 'Older →');
    const pageInfo = h('span', { class: 'muted' });
    const results = h('div');
    const form = h('form', { class: 'toolbar', role: 'search' },
      h('label', { for: 'audit-q' }, 'Search'), search, h('button', { type: 'submit' }, 'Search'),
      h('span', { class: 'spacer' }), pageInfo, prev, next);
    clear(root, section(null, form, results));

    async function load() {
      const params = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
      if (q) params.set('q', q);
      const answer = await api.get(`/audit?${params}`);
      if (!ctx.alive()) return;
      const rows = (answer?.data ?? []).map((e) => h('tr', { dataset: { auditId: String(e.id) } },
        h('td', { class: 'num' }, String(e.id)),
        h('td', { class: 'mono' }, timestamp(e.at_ms)),
        h('td', {}, e.actor),
        h('td', { class: 'mono' }, e.action),
        h('td', {}, e.subject),
        h('td', {}, details(e))));
      prev.disabled = offset === 0;
      next.disabled = rows.length < PAGE;
      pageInfo.textContent = rows.length ? `${offset + 1}–${offset + rows.length}` : '';
      clear(results, rows.length || offset > 0
        ? table([{ label: '#', num: true }, { label: 'When' }, { label: 'Actor' }, { label: 'Action' }, { label: 'Subject' }, { label: 'Change' }], rows,
          { empty: 'No more entries.' })
        : emptyState(q ? `No change matches “${q}”.` : 'No changes recorded yet.'));
    }

    form.addEventListener('submit', (event) => {
      event.preventDefault();
      q = search.value.trim();
      offset = 0;
      load().catch((err) => ctx.banner(err.message));
    });
    prev.addEventListener('click', () => { offset = Math.max(0, offset - PAGE); load().catch((err) => ctx.banner(err.message)); });
    next.addEventListener('click', () => { offset += PAGE; load().catch((err) => ctx.banner(err.message)); });
    await load();
  },
};
