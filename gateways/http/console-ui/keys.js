import { api, clearNotice, el, errorText, header, notify, requireSession, when } from './common.js';

const SCOPES = [
  'stream:read',
  'region:us',
  'region:jp',
  'chain:hyperliquid',
  'status:read',
  'generate',
  'stream',
  'metrics',
  'mcp',
];

const session = await requireSession();
const me = await api('/account');
header('keys', me.email);

const scopeBoxes = (container, prefix, checked = []) =>
  container.replaceChildren(
    ...SCOPES.map((s) =>
      el(
        'label',
        {},
        el('input', {
          type: 'checkbox',
          name: 'scope',
          value: s,
          id: `${prefix}-${s}`,
          checked: checked.includes(s),
        }),
        s,
      ),
    ),
  );
const checkedScopes = (container) => [...container.querySelectorAll('input:checked')].map((i) => i.value);
scopeBoxes(document.getElementById('create-scopes'), 'create');

let keys = [];

async function load() {
  keys = (await api('/keys')).keys;
  const body = document.getElementById('keys');
  document.getElementById('no-keys').hidden = keys.length > 0;
  body.replaceChildren(
    ...keys
      .slice()
      .reverse()
      .map((k) =>
        el(
          'tr',
          { 'data-key-id': k.key_id, 'data-status': k.status },
          el('td', { 'data-col': 'name' }, k.name),
          el('td', {}, el('code', {}, k.prefix, '…')),
          el('td', {}, k.tier),
          el(
            'td',
            { 'data-col': 'scopes' },
            k.scopes.length
              ? k.scopes.map((s) => el('span', { class: 'chip' }, s))
              : el('span', { class: 'muted' }, 'all of the plan'),
          ),
          el('td', {}, el('span', { class: `badge ${k.status}`, 'data-col': 'status' }, k.status)),
          el('td', {}, when(k.created_at)),
          el('td', { 'data-col': 'last-used' }, k.last_used_at ? when(k.last_used_at) : 'never'),
          el('td', {}, when(k.revoked_at)),
          el(
            'td',
            {},
            k.status === 'active'
              ? [
                  el(
                    'button',
                    { type: 'button', class: 'link', 'aria-label': `Edit ${k.name}`, onclick: () => edit(k) },
                    'Edit',
                  ),
                  el(
                    'button',
                    {
                      type: 'button',
                      class: 'link danger-text',
                      'aria-label': `Revoke ${k.name}`,
                      onclick: () => revoke(k),
                    },
                    'Revoke',
                  ),
                ]
              : null,
          ),
        ),
      ),
  );
}

document.getElementById('create-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const form = e.currentTarget;
  clearNotice();
  try {
    const created = await api('/keys', {
      method: 'POST',
      body: { name: form.name.value, scopes: checkedScopes(document.getElementById('create-scopes')) },
    });
    document.getElementById('new-key').textContent = created.key;
    document.getElementById('created').hidden = false;
    form.reset();
    await load();
  } catch (err) {
    notify('error', errorText(err));
  }
});

document.getElementById('copy-key').addEventListener('click', async (e) => {
  await navigator.clipboard?.writeText(document.getElementById('new-key').textContent).catch(() => {});
  e.currentTarget.textContent = 'Copied';
});
document.getElementById('done-key').addEventListener('click', () => {
  document.getElementById('new-key').textContent = '';
  document.getElementById('created').hidden = true;
  document.getElementById('copy-key').textContent = 'Copy';
});

const editDialog = document.getElementById('edit-dialog');
let editing = null;
function edit(k) {
  editing = k;
  document.getElementById('edit-name').value = k.name;
  scopeBoxes(document.getElementById('edit-scopes'), 'edit', k.scopes);
  editDialog.showModal();
}
document.getElementById('edit-cancel').addEventListener('click', () => editDialog.close());
document.getElementById('edit-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  try {
    await api(`/keys/${editing.key_id}`, {
      method: 'PATCH',
      body: {
        name: document.getElementById('edit-name').value,
        scopes: checkedScopes(document.getElementById('edit-scopes')),
      },
    });
    editDialog.close();
    // The list first, then the confirmation: when the page says "updated", the list shows it.
    await load();
    notify('success', `Key “${document.getElementById('edit-name').value}” updated.`);
  } catch (err) {
    editDialog.close();
    notify('error', errorText(err));
  }
});

const revokeDialog = document.getElementById('revoke-dialog');
let revoking = null;
function revoke(k) {
  revoking = k;
  document.getElementById('revoke-name').textContent = k.name;
  revokeDialog.showModal();
}
document.getElementById('revoke-cancel').addEventListener('click', () => revokeDialog.close());
document.getElementById('revoke-confirm').addEventListener('click', async () => {
  revokeDialog.close();
  try {
    await api(`/keys/${revoking.key_id}`, { method: 'DELETE' });
    await load();
    notify('success', `Key “${revoking.name}” revoked.`);
  } catch (err) {
    notify('error', errorText(err));
  }
});

void session;
await load();
document.body.dataset.ready = 'true';
