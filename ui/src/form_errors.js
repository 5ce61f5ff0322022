// Shows an API validation error where it belongs: next to the input whose data-field equals the
// error's param (in the element data-error-for of the same name), or at the top of the form when
// no field matches.
import { h } from './dom.js';

export function clearErrors(form) {
  for (const el of form.querySelectorAll('[data-error-for]')) {
    el.textContent = '';
    el.hidden = true;
  }
  for (const el of form.querySelectorAll('.invalid')) el.classList.remove('invalid');
  const top = form.querySelector('.form-error');
  if (top) { top.textContent = ''; top.hidden = true; }
}

// An element to put under a field: its error, hidden until there is one.
export function errorSlot(field) {
  return h('p', { class: 'error', dataset: { errorFor: field }, role: 'alert', hidden: true });
}

// The box at the top of a form for errors that name no field.
export function formErrorSlot() {
  return h('div', { class: 'form-error', role: 'alert', hidden: true });
}

export function showError(form, err) {
  clearErrors(form);
  const param = err.param ?? null;
  if (param) {
    const slot = [...form.querySelectorAll('[data-error-for]')].find((el) => el.dataset.errorFor === param);
    if (slot) {
      slot.textContent = err.message;
      slot.hidden = false;
      const input = [...form.querySelectorAll('[data-field]')].find((el) => el.dataset.field === param);
      if (input) { input.classList.add('invalid'); input.focus(); }
      return;
    }
  }
  const top = form.querySelector('.form-error');
  if (top) {
    top.textContent = param ? `${param}: ${err.message}` : err.message;
    top.hidden = false;
  }
}
