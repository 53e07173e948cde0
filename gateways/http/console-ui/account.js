import { api, el, errorText, header, notify, requireSession, when } from './common.js';

await requireSession();
const facts = (id, rows) =>
  document
    .getElementById(id)
    .replaceChildren(...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
const describe = (a) =>
  Object.entries(a ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(' · ') || '—';

try {
  const a = await api('/account');
  header('account', a.email);
  facts('plan', [
    ['Plan', el('span', { 'data-testid': 'plan' }, a.plan)],
    ['Japan access', a.jp_access ? 'yes' : 'no'],
    ['Regions', a.regions.join(', ').toUpperCase()],
    ['Account id', el('code', {}, a.account_id)],
  ]);
  facts('registration', [
    ['Email', a.email],
    ['Registered', when(a.created_at)],
    ['Attribution', el('span', { 'data-testid': 'registration-attribution' }, describe(a.attribution))],
  ]);
  document.getElementById('logins').replaceChildren(
    ...a.logins
      .slice()
      .reverse()
      .map((l) => el('tr', {}, el('td', {}, when(l.at)), el('td', {}, describe(l.attribution)))),
  );
} catch (err) {
  notify('error', errorText(err));
}
document.body.dataset.ready = 'true';
