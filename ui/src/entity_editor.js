// The editor shared by routes and provider groups: name, strategy (through the strategy picker)
// and the target list. It starts from the entity as fetched and sends every key back, changing
// only the fields the operator touched (PUT replaces the whole entity); API validation errors
// appear next to the field their param names.
import { api, seg } from './api.js';
import { h, clear, badge, section } from './dom.js';
import { defaultStrategy, strategyPicker } from './strategy_picker.js';
import { clearErrors, errorSlot, formErrorSlot, showError } from './form_errors.js';

// kind: { collection: '/routes', nameKey: 'name', listKey: 'targets', modelKey: 'model',
//         noun: 'route', modelLabel, modelPlaceholder }
export function entityEditor(kind, { entity, strategies, providers, onSaved, onDeleted, onCancel }) {
  const creating = !entity;
  const original = entity ? structuredClone(entity) : {};
  delete original.read_only;
  const providersByName = new Map(providers.map((p) => [p.name, p]));
  const form = h('form', { class: 'form entity-editor', novalidate: true, dataset: { entity: original[kind.nameKey] ?? '' } });
  const rows = [];
  const tbody = h('tbody');

  const nameInput = creating
    ? h('input', { id: 'entity-name', dataset: { field: kind.nameKey, write: '' }, required: true, spellcheck: 'false', autocomplete: 'off' })
    : null;

  let picker = null;
  const targetsNote = h('div');
  function refreshHints() {
    picker?.refresh();
  }

  function addRow(orig) {
    const row = { orig: orig ? structuredClone(orig) : null, dirty: new Set(), tr: null };
    const providerSelect = h('select', {});
    const known = orig?.provider;
    if (known !== undefined && !providersByName.has(known)) {
      providerSelect.append(h('option', { value: known }, `${known} (unknown)`));
    }
    for (const p of providers) providerSelect.append(h('option', { value: p.name }, p.name));
    if (!orig && providers.length === 0) providerSelect.append(h('option', { value: '' }, 'no providers yet'));
    providerSelect.value = known ?? providers[0]?.name ?? '';
    const modelInput = h('input', { value: orig?.[kind.modelKey] ?? '', placeholder: kind.modelPlaceholder, spellcheck: 'false', autocomplete: 'off' });
    const weightInput = h('input', { type: 'number', step: 'any', value: orig?.weight ?? '', placeholder: '1', inputmode: 'decimal' });
    const removeButton = h('button', { type: 'button', class: 'small danger', dataset: { write: '' }, title: 'Remove this target' }, 'Remove');
    row.inputs = { provider: providerSelect, [kind.modelKey]: modelInput, weight: weightInput };
    for (const [key, input] of Object.entries(row.inputs)) {
      input.dataset.write = '';
      input.addEventListener(input.tagName === 'SELECT' ? 'change' : 'input', () => {
        row.dirty.add(key);
        if (key === 'provider') refreshHints();
      });
    }
    removeButton.addEventListener('click', () => {
      rows.splice(rows.indexOf(row), 1);
      row.tr.remove();
      renumber();
      refreshHints();
    });
    row.errorCells = {};
    const cell = (key, cls) => {
      const slot = errorSlot('');
      row.errorCells[key] = slot;
      return h('td', { class: cls }, row.inputs[key], slot);
    };
    row.tr = h('tr', {}, cell('provider'), cell(kind.modelKey), cell('weight', 'weight'), h('td', { class: 'actions' }, removeButton));
    rows.push(row);
    tbody.append(row.tr);
    renumber();
  }

  // Field names follow the API's params: targets[0].weight, members[1].provider, ...
  function renumber() {
    rows.forEach((row, i) => {
      for (const [key, input] of Object.entries(row.inputs)) {
        const field = `${kind.listKey}[${i}].${key}`;
        input.dataset.field = field;
        input.setAttribute('aria-label', `${kind.listKey} ${i + 1} ${key}`);
        row.errorCells[key].dataset.errorFor = field;
      }
    });
  }

  function targetValue(row, key) {
    const raw = row.inputs[key].value.trim();
    if (key === 'provider') return raw;
    if (key === 'weight') {
      if (raw === '') return undefined;
      const n = Number(raw);
      return Number.isFinite(n) ? n : raw;
    }
    return raw === '' ? undefined : raw;
  }

  // The body to send: the fetched entity with the touched fields changed.
  function body() {
    const out = structuredClone(original);
    if (creating) out[kind.nameKey] = nameInput.value.trim();
    const strategy = picker.value();
    if (strategy === undefined) delete out.strategy;
    else out.strategy = strategy;
    const list = rows.map((row) => {
      const t = row.orig ? structuredClone(row.orig) : {};
      for (const key of Object.keys(row.inputs)) {
        if (row.orig && !row.dirty.has(key)) continue;
        const v = targetValue(row, key);
        if (v === undefined) delete t[key];
        else t[key] = v;
      }
      return t;
    });
    if (list.length || original[kind.listKey] !== undefined) out[kind.listKey] = list;
    return out;
  }

  const status = h('div', { class: 'success', role: 'status', hidden: true });
  const saveButton = h('button', { type: 'submit', class: 'primary', dataset: { write: '' } }, creating ? `Create ${kind.noun}` : 'Save');
  const addButton = h('button', { type: 'button', dataset: { write: '', action: 'add-target' } }, `Add ${kind.listKey === 'members' ? 'member' : 'target'}`);
  addButton.addEventListener('click', () => addRow(null));
  const cancelButton = h('button', { type: 'button' }, creating ? 'Cancel' : 'Back to the list');
  cancelButton.addEventListener('click', () => onCancel?.());

  let deleteButton = null;
  if (!creating) {
    let armed = false;
    deleteButton = h('button', { type: 'button', class: 'danger', dataset: { write: '' } }, `Delete ${kind.noun}`);
    deleteButton.addEventListener('click', async () => {
      if (!armed) {
        armed = true;
        deleteButton.textContent = `Confirm: delete ${original[kind.nameKey]}`;
        return;
      }
      deleteButton.disabled = true;
      try {
        await api.del(`${kind.collection}/${seg(original[kind.nameKey])}`);
        onDeleted?.();
      } catch (err) {
        showError(form, err);
        deleteButton.disabled = false;
      }
    });
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    status.hidden = true;
    saveButton.disabled = true;
    try {
      const sent = body();
      const saved = creating
        ? await api.post(kind.collection, sent)
        : await api.put(`${kind.collection}/${seg(original[kind.nameKey])}`, sent);
      status.textContent = creating ? `${kind.noun} ${saved[kind.nameKey]} created.` : 'Saved.';
      status.hidden = false;
      onSaved?.(saved);
    } catch (err) {
      showError(form, err);
    } finally {
      saveButton.disabled = false;
    }
  });

  picker = strategyPicker({
    strategies,
    current: creating ? undefined : original.strategy,
    providersByName,
    targetProviders: () => rows.map((r) => r.inputs.provider.value),
  });

  for (const t of original[kind.listKey] ?? []) addRow(t);
  if (creating) addRow(null);

  const extraKeys = Object.keys(original).filter((k) => ![kind.nameKey, 'strategy', kind.listKey].includes(k));
  clear(form,
    formErrorSlot(),
    creating
      ? h('div', { class: 'field' }, h('label', { for: 'entity-name' }, kind.nameLabel), nameInput, errorSlot(kind.nameKey))
      : null,
    picker.element,
    original.strategy === 'policy'
      ? h('p', { class: 'hint' }, 'Plugin weights of this policy route: ',
          h('a', { href: `#/policy?route=${encodeURIComponent(original[kind.nameKey])}` }, 'Policy mode'), '.')
      : null,
    h('div', {},
      h('label', {}, kind.listKey === 'members' ? 'Members' : 'Targets'),
      h('table', { class: 'grid targets' },
        h('thead', {}, h('tr', {},
          h('th', {}, 'Provider'), h('th', {}, kind.modelLabel), h('th', {}, 'Weight'), h('th', {}))),
        tbody),
      errorSlot(kind.listKey),
      targetsNote),
    extraKeys.length
      ? h('p', { class: 'muted' }, `Kept as they are: ${extraKeys.join(', ')}.`)
      : null,
    status,
    h('div', { class: 'toolbar' }, saveButton, addButton, cancelButton, h('span', { class: 'spacer' }), deleteButton));
  return form;
}

// A read-only view of an entity: its strategy, targets and the rest of its keys.
export function entityDetails(kind, entity, strategies) {
  const list = entity[kind.listKey] ?? [];
  const rest = structuredClone(entity);
  for (const k of [kind.nameKey, 'strategy', kind.listKey, 'read_only']) delete rest[k];
  return section(null,
    h('h2', {}, entity[kind.nameKey], badge(entity.strategy ?? defaultStrategy(strategies)), entity.read_only ? badge('from rolter.toml') : null),
    entity.read_only ? h('p', { class: 'muted' }, 'Defined in rolter.toml: read-only here. Change it in the file.') : null,
    h('table', { class: 'grid' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Provider'), h('th', {}, kind.modelLabel), h('th', { class: 'num' }, 'Weight'))),
      h('tbody', {}, list.map((t) => h('tr', {},
        h('td', {}, t.provider), h('td', {}, t[kind.modelKey] ?? '—'), h('td', { class: 'num' }, t.weight ?? '—'))))),
    Object.keys(rest).length ? h('pre', {}, JSON.stringify(rest, null, 2)) : null);
}
