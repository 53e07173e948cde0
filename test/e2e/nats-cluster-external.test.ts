/**
 * An external NATS cluster from configuration: three nats-server nodes that require a user and
 * password, given to a real gateway process as a comma-separated NATS_URL (with a dead address in
 * the list) plus NATS_USER / NATS_PASSWORD. It connects, serves /healthz 200, and after a kill -9
 * of every node it may have been connected to but one (each in turn, restarted) it is still 200;
 * with a wrong password it stops at start with exit code 1 and says so, never hangs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../platform/free-port.ts';
import { type NatsCluster, startNatsCluster } from '../../platform/nats-cluster.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { killAll, type ServiceProcess, startService, startUnifiedGateways } from '../support/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdp-ext-cluster-'));
const auth = { user: 'mdp', pass: `pw-${Date.now()}` };
const config = testConfig();
let cluster: NatsCluster;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  cluster = await startNatsCluster({
    baseDir: dir,
    extraArgs: ['--user', auth.user, '--pass', auth.pass],
    auth,
  });
}, 120_000);

afterAll(async () => {
  await killAll(services);
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('a comma-separated NATS_URL with credentials: serves, and survives losing any one node', {
  timeout: 240_000,
}, async () => {
  const natsUrl = `nats://127.0.0.1:${await freePort()},${cluster.url}`;
  const [url] = (await startUnifiedGateways(1, natsUrl, config.API_KEY_SECRET, services, {
    NATS_USER: auth.user,
    NATS_PASSWORD: auth.pass,
    STREAM_REPLICAS: '3',
  })) as [string];
  const healthz = () => url.replace('/api/v1/unified/stream', '/healthz');
  const healthy = async () => (await fetch(healthz()).catch(() => null))?.status === 200;
  await eventually(healthy, 60_000, 'healthy on the cluster');
  for (const i of [0, 1, 2]) {
    await cluster.kill(i);
    await eventually(healthy, 60_000, `healthy without node ${i + 1}`);
    await cluster.start(i);
    await cluster.ready();
  }
});

it('a wrong password: exit code 1 at start, with the reason', { timeout: 120_000 }, async () => {
  const service = startService(['gateway', 'unified', '--region', 'us'], {
    NATS_URL: cluster.url,
    NATS_USER: auth.user,
    NATS_PASSWORD: 'wrong-password',
    NODE_ENV: 'test',
    API_KEY_SECRET: config.API_KEY_SECRET,
    UNIFIED_PORT_US: '0',
  });
  services.push(service);
  expect(await service.exited).toBe(1);
  expect(service.output()).toMatch(/fatal: .*(auth|Authorization)/i);
});
