// Shared by every console page: the header, API calls with the cookie session and its CSRF token,
// error display (catalogue message + request id) and attribution from the page's URL.
const API = '/api/v1/console';
let csrf = null;

const NAV = [
  ['keys', 'API keys'],
  ['market', 'Live market'],
  ['account', 'Account'],
  ['status', 'Status'],
];

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat())
    if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
}

export class ApiFailure extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
  get text() {
    const field = this.body?.details?.field
      ? ` (${this.body.details.field}: ${this.body.details.reason})`
      : '';
    const id = this.body?.request_id ? ` · request id ${this.body.request_id}` : '';
    return `${this.message}${field}${id}`;
  }
}

/** A JSON call to the console API; state-changing calls carry the CSRF token of the cookie session. */
export async function api(path, { method = 'GET', body } = {}) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['x-csrf-token'] = csrf;
  const res = await fetch(`${API}${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (!res.ok) throw new ApiFailure(res.status, data);
  return data;
}

export function setCsrf(token) {
  csrf = token;
}

/** The session of this page, or a redirect to the login page. */
export async function requireSession() {
  try {
    const s = await api('/session');
    setCsrf(s.csrf_token);
    return s;
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) {
      location.assign(`/console?next=${encodeURIComponent(location.pathname)}`);
      return new Promise(() => {});
    }
    throw err;
  }
}

/** The page header: brand, navigation (current page marked), the account, and log out. */
export function header(current, email) {
  const bar = document.getElementById('topbar');
  const nav = el(
    'nav',
    { 'aria-label': 'Console' },
    NAV.map(([page, label]) =>
      el('a', { href: `/console/${page}`, 'aria-current': page === current ? 'page' : null }, label),
    ),
    el('a', { href: '/docs' }, 'API docs'),
  );
  const inner = el(
    'div',
    { class: 'inner' },
    el(
      'a',
      { class: 'brand', href: '/console/keys' },
      el('img', { src: '/console/assets/logo.svg', alt: '', width: 26, height: 26 }),
      'Market Data Console',
    ),
    email === undefined ? null : nav,
    email ? el('span', { class: 'who', 'data-testid': 'who', title: email }, email) : null,
    email === undefined
      ? null
      : el('button', { class: 'secondary', id: 'logout', type: 'button', onclick: logout }, 'Log out'),
  );
  bar.replaceChildren(inner);
}

async function logout() {
  try {
    await api('/logout', { method: 'POST' });
  } finally {
    location.assign('/console?logged_out=1');
  }
}

/** Shows a message in the page's alert region (`role=alert` / `status` for assistive tech). */
export function notify(kind, text) {
  const box = document.getElementById('notice');
  box.className = `alert ${kind}`;
  box.hidden = false;
  box.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  box.textContent = text;
}

export function clearNotice() {
  const box = document.getElementById('notice');
  box.hidden = true;
  box.textContent = '';
}

export const errorText = (err) => (err instanceof ApiFailure ? err.text : String(err?.message ?? err));

const UTM = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'];

/** What the API records about where a visitor came from: utm_* of the URL, the referrer, source=web. */
export function attribution() {
  const q = new URLSearchParams(location.search);
  const out = { source: 'web' };
  for (const k of [...UTM, 'campaign']) {
    const v = q.get(k)?.trim();
    if (v) out[k] = v.slice(0, 128);
  }
  const ref = q.get('referrer') || sessionStorage.getItem('mdp_referrer') || document.referrer;
  if (ref && !ref.startsWith(location.origin)) out.referrer = ref.slice(0, 512);
  return out;
}

/** Keeps the first outside referrer of the visit for the registration that may follow. */
export function rememberReferrer() {
  if (
    document.referrer &&
    !document.referrer.startsWith(location.origin) &&
    !sessionStorage.getItem('mdp_referrer')
  )
    sessionStorage.setItem('mdp_referrer', document.referrer);
}

export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
