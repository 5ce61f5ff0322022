// The box that shows a newly made secret (an API key or an admin token) once, with a copy button
// and the warning that it will not be shown again.
import { h } from './dom.js';

export function secretBox(title, secret) {
  const code = h('code', { class: 'secret-value' }, secret);
  const copied = h('span', { class: 'muted', role: 'status' });
  const copy = h('button', { type: 'button', class: 'primary' }, 'Copy');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(secret);
      copied.textContent = 'Copied.';
    } catch {
      // No clipboard access: select the text so the operator can copy it by hand.
      const range = document.createRange();
      range.selectNodeContents(code);
      const selection = getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      copied.textContent = 'Selected: press Ctrl+C to copy.';
    }
  });
  return h('div', { class: 'hint warn secret-box', role: 'status' },
    h('strong', {}, title),
    h('p', {}, 'Copy it now: it will not be shown again. Only a salted hash is kept.'),
    h('div', { class: 'secret' }, code, copy, copied));
}
