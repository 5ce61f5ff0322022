// The admin API client: keeps the token in sessionStorage and turns every answer into either the
// parsed body or an ApiError carrying the status and the error's message, param and code.

const TOKEN_KEY = 'rolter.admin_token';

export class ApiError extends Error {
  constructor(status, message, param = null, code = null) {
    super(message);
    this.status = status;
    this.param = param;
    this.code = code;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// Fired when the API refuses the token, so the shell can go back to the login form.
export const unauthorized = new EventTarget();

async function call(method, path, body, bearer = token()) {
  const headers = { authorization: `Bearer ${bearer}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(`/api/v1${path}`, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
  } catch (err) {
    throw new ApiError(0, `cannot reach the control plane (${err.message})`);
  }
  const text = await res.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = null; }
  if (!res.ok) {
    const e = parsed?.error ?? {};
    const err = new ApiError(res.status, e.message ?? `HTTP ${res.status}`, e.param ?? null, e.code ?? null);
    if (res.status === 401) unauthorized.dispatchEvent(new Event('unauthorized'));
    throw err;
  }
  return parsed;
}

export const api = {
  get: (path) => call('GET', path),
  post: (path, body) => call('POST', path, body),
  put: (path, body) => call('PUT', path, body),
  del: (path) => call('DELETE', path),
  // Checks a token before it is kept.
  whoami: (bearer) => call('GET', '/whoami', undefined, bearer),
};

// One path segment, escaped (names may hold '/').
export const seg = (name) => encodeURIComponent(name);

// A list endpoint's entities.
export async function list(path) {
  const body = await api.get(path);
  return Array.isArray(body?.data) ? body.data : [];
}
