/**
 * compose/haproxy.cfg read as text (no HAProxy here): every section is named once, every line is a
 * section header, a comment or an indented directive, each bind address is used once, each
 * frontend has a default_backend and every backend it names exists, each backend is used and
 * balances over two replicas (or answers itself), and
 * every server it names is a service of compose/docker-compose.yml.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const dir = join(import.meta.dirname, '..', '..', 'compose');
const lines = readFileSync(join(dir, 'haproxy.cfg'), 'utf8').split('\n');
const services = new Set(
  [...readFileSync(join(dir, 'docker-compose.yml'), 'utf8').matchAll(/^ {2}([a-z0-9-]+):/gm)].map(
    (m) => m[1],
  ),
);

type Section = { kind: string; name: string; body: string[] };

function sections(): Section[] {
  const out: Section[] = [];
  for (const line of lines) {
    const header = /^(global|defaults|frontend|backend)\b\s*(\S*)$/.exec(line);
    if (header) out.push({ kind: header[1] as string, name: header[2] as string, body: [] });
    else if (/^\s+\S/.test(line)) out.at(-1)?.body.push(line.trim());
    else expect(line === '' || line.startsWith('#'), `not a directive: ${line}`).toBe(true);
  }
  return out;
}

it('every frontend reaches a backend of two compose replicas; nothing named twice', () => {
  const all = sections();
  const names = all.map((s) => `${s.kind} ${s.name}`);
  expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  const backends = all.filter((s) => s.kind === 'backend');
  const frontends = all.filter((s) => s.kind === 'frontend');
  const binds = frontends.flatMap((f) =>
    f.body.filter((d) => d.startsWith('bind ')).map((d) => d.split(/\s+/)[1]),
  );
  expect(binds.filter((b, i) => binds.indexOf(b) !== i)).toEqual([]);
  const backendNames = backends.map((b) => b.name);
  const used = frontends.flatMap((f) => {
    const targets = f.body
      .filter((d) => d.startsWith('default_backend ') || d.startsWith('use_backend '))
      .map((d) => d.split(/\s+/)[1] as string);
    expect(
      f.body.some((d) => d.startsWith('default_backend ')),
      `frontend ${f.name}`,
    ).toBe(true);
    for (const t of targets) expect(backendNames, `frontend ${f.name}`).toContain(t);
    return targets;
  });
  for (const b of backends) {
    expect(used, `backend ${b.name} unused`).toContain(b.name);
    const servers = b.body
      .filter((d) => d.startsWith('server '))
      .map((d) => d.split(/\s+/)[2]?.split(':')[0]);
    // A backend either answers itself (an unknown host name) or balances over two replicas.
    if (b.body.some((d) => d.startsWith('http-request return '))) continue;
    expect(servers.length, `backend ${b.name}`).toBeGreaterThanOrEqual(2);
    for (const host of servers) expect(services, `backend ${b.name}`).toContain(host);
  }
});
