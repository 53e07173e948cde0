import { api, attribution, errorText, header, notify, rememberReferrer } from './common.js';

header('register');
rememberReferrer();
document.getElementById('login-link').search = location.search;

document.getElementById('register-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const form = e.currentTarget;
  const button = form.querySelector('button');
  button.disabled = true;
  const from = attribution();
  try {
    await api('/register', {
      method: 'POST',
      body: {
        email: form.email.value,
        password: form.password.value,
        plan: form.plan.value,
        jp_access: form.jp_access.checked,
        ...from,
      },
    });
    location.assign(`/console?registered=1&${new URLSearchParams(location.search)}`);
  } catch (err) {
    notify('error', errorText(err));
    button.disabled = false;
  }
});
