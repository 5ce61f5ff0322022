// Keys: the API keys clients send to the gateway; list, create (the key is shown once) and
// revoke.
import { api, list, seg } from '../api.js';
import { h, clear, table, badge, emptyState, section } from '../dom.js';
import { clearErrors, errorSlot, formErrorSlot, showError } from '../form_errors.js';
import { secretBox } from '../secret.js';

const splitList = (text) => text.split(',').map((s) => s.trim()).filter(Boolean);

export default {
  async render(root, ctx) {
    const listBox = h('div');
    const shown = h('div');
    async function load() {
      const keys = await list('/keys');
      if (!ctx.alive()) return;
      const rows = keys.map((k) => {
        let revoke = null;
        if (ctx.canWrite && !k.read_only) {
          let armed = false;
          revoke = h('button', { type: 'button', class: 'small danger', dataset: { write: '' } }, 'Revoke');
          revoke.addEventListener('click', async () => {
            if (!armed) { armed = true; revoke.textContent = `Confirm: revoke ${k.name}`; return; }
            try {
              await api.del(`/keys/${seg(k.name)}`);
              await load();
            } catch (err) {
              ctx.banner(err.message);
            }
          });
        }
        return h('tr', { dataset: { key: k.name } },
          h('td', {}, k.name),
          h('td', {}, (k.routes ?? []).length ? k.routes.join(', ') : h('span', { class: 'muted' }, 'every route')),
          h('td', {}, (k.providers ?? []).length ? k.providers.join(', ') : h('span', { class: 'muted' }, 'every provider')),
          h('td', {}, k.read_only ? badge('rolter.toml') : badge('store')),
          h('td', { class: 'actions' }, revoke));
      });
      clear(listBox, keys.length
        ? table([{ label: 'Name' }, { label: 'Routes' }, { label: 'Providers' }, { label: 'Source' }, { label: '' }], rows)
        : emptyState('No keys: the gateway is open to every client.', ctx.canWrite ? 'Create a key to require one.' : ''));
    }

    let createCard = null;
    if (ctx.canWrite) {
      const name = h('input', { id: 'key-name', dataset: { field: 'name', write: '' }, autocomplete: 'off', spellcheck: 'false', placeholder: 'team-a' });
      const routes = h('input', { id: 'key-routes', dataset: { field: 'routes', write: '' }, autocomplete: 'off', spellcheck: 'false', placeholder: 'qwen3, fleet/*' });
      const providers = h('input', { id: 'key-providers', dataset: { field: 'providers', write: '' }, autocomplete: 'off', spellcheck: 'false', placeholder: 'all when empty' });
      const form = h('form', { class: 'form', novalidate: true },
        formErrorSlot(),
        h('div', { class: 'fields-row' },
          h('div', { class: 'field' }, h('label', { for: 'key-name' }, 'Name'), name, errorSlot('name')),
          h('div', { class: 'field' }, h('label', { for: 'key-routes' }, 'Routes (comma-separated, empty = all)'), routes, errorSlot('routes')),
          h('div', { class: 'field' }, h('label', { for: 'key-providers' }, 'Providers (comma-separated, empty = all)'), providers, errorSlot('providers'))),
        h('div', { class: 'toolbar' }, h('button', { type: 'submit', class: 'primary', dataset: { write: '' } }, 'Create key')));
      form.addEventListener('submit', async (event) => {
        event.preventDefault();
        clearErrors(form);
        const body = { name: name.value.trim() };
        if (splitList(routes.value).length) body.routes = splitList(routes.value);
        if (splitList(providers.value).length) body.providers = splitList(providers.value);
        try {
          const created = await api.post('/keys', body);
          clear(shown, secretBox(`Key ${created.name} created`, created.key));
          name.value = ''; routes.value = ''; providers.value = '';
          await load();
        } catch (err) {
          showError(form, err);
        }
      });
      createCard = section('New key', shown, form);
    }
    clear(root, section(null, listBox), createCard);
    await load();
  },
};
