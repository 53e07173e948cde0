import { ApiFailure, el, errorText, header, notify, when } from './common.js';

// The status page is public: the header shows navigation only when a session exists.
const session = await fetch('/api/v1/console/session', { credentials: 'same-origin' }).then((r) =>
  r.ok ? r.json() : null,
);
header('status', session ? '' : undefined);

function list(id, items, render, empty) {
  const box = document.getElementById(id);
  box.replaceChildren(...(items.length ? items.map(render) : [el('p', { class: 'muted' }, empty)]));
}

try {
  const res = await fetch('/api/v1/public/status');
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new ApiFailure(res.status, body);
  document
    .getElementById('overall')
    .replaceChildren(
      el('span', { class: `badge ${body.status}`, 'data-testid': 'overall' }, body.status),
      ` · as of ${when(body.generated_at)}`,
    );
  list(
    'transports',
    body.transports,
    (t) =>
      el(
        'div',
        { class: 'tile' },
        el('span', {}, `${t.region ? t.region.toUpperCase() : '{base_url}'} · ${t.transport}`),
        el('span', { class: `badge ${t.state}` }, t.state),
      ),
    'No transports reported.',
  );
  list(
    'incidents',
    body.incidents,
    (i) =>
      el(
        'div',
        { class: 'alert warning' },
        el('strong', {}, i.title),
        ` · ${i.status} · ${i.impact ?? ''} · since ${when(i.created_at)}`,
        ...(i.updates ?? [])
          .slice(-3)
          .map((u) => el('div', { class: 'hint' }, `${when(u.at)}: ${u.message}`)),
      ),
    'No open incidents.',
  );
  const windows = [...body.maintenance.active, ...body.maintenance.upcoming];
  list(
    'maintenance',
    windows,
    (w) =>
      el(
        'div',
        { class: 'tile' },
        el('span', {}, `${w.message} (${w.regions.join(', ')} · ${w.transports.join(', ')})`),
        el(
          'span',
          { class: `badge ${w.state === 'active' ? 'maintenance' : 'ok'}` },
          `${w.state}: ${when(w.starts_at)} → ${when(w.ends_at)}`,
        ),
      ),
    'No maintenance scheduled.',
  );
} catch (err) {
  notify('error', `Status unavailable: ${errorText(err)}`);
}
document.body.dataset.ready = 'true';
