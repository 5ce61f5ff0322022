// Admin tokens (superadmin): the tokens that open this API and the dashboard; list, create (the
// token is shown once) and revoke.
import { api, list, seg } from '../api.js';
import { h, clear, table, badge, emptyState, section, timestamp } from '../dom.js';
import { clearErrors, errorSlot, formErrorSlot, showError } from '../form_errors.js';
import { secretBox } from '../secret.js';

export default {
  async render(root, ctx) {
    const listBox = h('div');
    const shown = h('div');
    async function load() {
      const tokens = await list('/admin-tokens');
      if (!ctx.alive()) return;
      const rows = tokens.map((t) => {
        let revoke = null;
        if (!t.revoked) {
          let armed = false;
          revoke = h('button', { type: 'button', class: 'small danger', dataset: { write: '' } }, 'Revoke');
          revoke.addEventListener('click', async () => {
            if (!armed) { armed = true; revoke.textContent = `Confirm: revoke ${t.name}`; return; }
            try {
              await api.del(`/admin-tokens/${seg(String(t.id))}`);
              await load();
            } catch (err) {
              ctx.banner(err.message);
            }
          });
        }
        return h('tr', { dataset: { token: String(t.id) } },
          h('td', { class: 'mono' }, String(t.id)),
          h('td', {}, t.name),
          h('td', {}, badge(t.role)),
          h('td', { class: 'mono' }, timestamp(t.created_ms)),
          h('td', {}, t.revoked ? badge('revoked', 'bad') : badge('active', 'ok')),
          h('td', { class: 'actions' }, revoke));
      });
      clear(listBox, tokens.length
        ? table([{ label: 'Id' }, { label: 'Name' }, { label: 'Role' }, { label: 'Created' }, { label: 'State' }, { label: '' }], rows)
        : emptyState('No admin tokens in the store.', 'ROLTER_ADMIN_TOKEN still opens everything as superadmin.'));
    }
    const name = h('input', { id: 'token-name', dataset: { field: 'name', write: '' }, autocomplete: 'off', spellcheck: 'false' });
    const role = h('select', { id: 'token-role', dataset: { field: 'role', write: '' } },
      ['viewer', 'admin', 'superadmin'].map((r) => h('option', { value: r }, r)));
    const form = h('form', { class: 'form', novalidate: true },
      formErrorSlot(),
      h('div', { class: 'fields-row' },
        h('div', { class: 'field' }, h('label', { for: 'token-name' }, 'Name'), name, errorSlot('name')),
        h('div', { class: 'field' }, h('label', { for: 'token-role' }, 'Role'), role, errorSlot('role'))),
      h('div', { class: 'toolbar' }, h('button', { type: 'submit', class: 'primary', dataset: { write: '' } }, 'Create token')));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      clearErrors(form);
      try {
        const created = await api.post('/admin-tokens', { name: name.value.trim(), role: role.value });
        clear(shown, secretBox(`Token ${created.name} (${created.role}) created`, created.token));
        name.value = '';
        await load();
      } catch (err) {
        showError(form, err);
      }
    });
    clear(root, section(null, listBox), section('New admin token', shown, form));
    await load();
  },
};
