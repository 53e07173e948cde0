import { api, attribution, errorText, header, notify, rememberReferrer } from './common.js';

header('login');
rememberReferrer();
const q = new URLSearchParams(location.search);
document.getElementById('register-link').search = location.search;
if (q.has('logged_out')) notify('success', 'You are logged out.');
if (q.has('registered')) notify('success', 'Account created. Log in to continue.');

document.getElementById('login-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const form = e.currentTarget;
  const button = form.querySelector('button');
  button.disabled = true;
  try {
    await api('/session', {
      method: 'POST',
      body: { email: form.email.value, password: form.password.value, ...attribution() },
    });
    const next = q.get('next');
    location.assign(next?.startsWith('/console/') ? next : '/console/keys');
  } catch (err) {
    notify('error', errorText(err));
    button.disabled = false;
  }
});
