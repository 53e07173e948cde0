/**
 * compose/docker-compose.yml as Docker Compose itself reads it (`docker compose config`, or the
 * standalone `docker-compose` that `.ci/run` installs from Debian; no engine is needed to
 * validate): valid with every required variable set, refused naming the variable when a secret
 * is missing; and Prometheus (compose/prometheus.yml) scrapes every edge replica on the port its
 * METRICS_PORT opens. The two-region overlay (docker-compose.regions.yml) validates on top of it,
 * needing NATS_LEAF_PASSWORD, and the NATS configurations it adds pass nats-server's own check (`-t`).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { findNatsServer } from '../../platform/nats-server.ts';

const dir = join(import.meta.dirname, '..', '..', 'compose');
const file = join(dir, 'docker-compose.yml');
const plugin = spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0;
const standalone = spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0;

/** Every `${NAME:?…}` the file requires, set to a placeholder (the secret file: /dev/null). */
const required = {
  API_KEY_SECRET: 'placeholder',
  GRAFANA_ADMIN_PASSWORD: 'placeholder',
  MDP_METRICS_API_KEY_FILE: '/dev/null',
  NATS_ACCOUNTS_PASSWORD: 'placeholder',
  NATS_ADMIN_PASSWORD: 'placeholder',
  NATS_GATEWAY_PASSWORD: 'placeholder',
  NATS_PRODUCER_PASSWORD: 'placeholder',
  NATS_WORKER_PASSWORD: 'placeholder',
};

function config(env: Record<string, string>, files: string[] = [file]) {
  const [cmd, args] = plugin ? ['docker', ['compose']] : ['docker-compose', []];
  return spawnSync(cmd, [...args, ...files.flatMap((f) => ['-f', f]), 'config', '-q'], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
  });
}

it.skipIf(!plugin && !standalone)('docker compose config validates the topology', () => {
  const ok = config(required);
  expect(ok.stderr).toBe('');
  expect(ok.status).toBe(0);
  const { API_KEY_SECRET: _, ...missing } = required;
  const refused = config(missing);
  expect(refused.status).not.toBe(0);
  expect(refused.stderr).toContain('API_KEY_SECRET');
});

it.skipIf(!plugin && !standalone)(
  'the two-region overlay validates, and its NATS configurations pass nats-server -t',
  () => {
    const overlay = [file, join(dir, 'docker-compose.regions.yml')];
    const ok = config({ ...required, NATS_LEAF_PASSWORD: 'placeholder' }, overlay);
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    const refused = config(required, overlay);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('NATS_LEAF_PASSWORD');
    const natsServer = findNatsServer();
    for (const conf of ['nats-home.conf', 'nats-jp.conf']) {
      const checked = spawnSync(natsServer, ['-t', '-c', conf], {
        cwd: dir,
        encoding: 'utf8',
        env: {
          ...required,
          NATS_LEAF_PASSWORD: 'placeholder',
          NATS_NAME: 'nats1',
          PATH: process.env.PATH ?? '',
        },
      });
      expect(`${checked.stdout}${checked.stderr}`, conf).toContain('is valid');
    }
  },
);

it('Prometheus scrapes every edge replica on its METRICS_PORT', () => {
  const compose = readFileSync(file, 'utf8');
  const edges = [...compose.matchAll(/^ {2}((?:unified|jsonrpc|grpc|disksync)-[a-z0-9-]+):(.*)$/gm)];
  expect(edges.length).toBe(16);
  for (const [, , line] of edges) expect(line).toContain('METRICS_PORT: "9464"');
  const targets = [...readFileSync(join(dir, 'prometheus.yml'), 'utf8').matchAll(/([a-z0-9-]+):9464/g)];
  expect(targets.map((m) => m[1]).sort()).toEqual(edges.map((m) => m[1]).sort());
});

it('every balancer backend sends PROXY v2, and the gateways trust exactly the balancer', () => {
  const haproxy = readFileSync(join(dir, 'haproxy.cfg'), 'utf8');
  const servers = haproxy.split('\n').filter((l) => /^\s+server\s/.test(l));
  expect(servers.length).toBe(18);
  for (const s of servers) expect(s).toMatch(/\ssend-proxy-v2(\s|$)/);
  const compose = readFileSync(file, 'utf8');
  const trusted = /^\s+TRUSTED_PROXIES: (\S+)$/m.exec(compose)?.[1];
  const lb = /ipv4_address: ([\d.]+)/.exec(compose)?.[1];
  expect(trusted).toBeDefined();
  expect(trusted).toBe(lb);
  // No other container can be given the balancer's address: it lies outside the dynamic range.
  const range = /ip_range: ([\d.]+)\/(\d+)/.exec(compose);
  const octet = Number(lb?.split('.')[3]);
  expect(range?.[2]).toBe('25');
  expect(octet).toBeGreaterThanOrEqual(128);
});
