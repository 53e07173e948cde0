/**
 * A port picked free and taken before nats-server binds it (another process, or an outgoing
 * connection given the same ephemeral port) is told apart from every other start failure:
 * `PortTakenError`, which `startNatsServer` (own port) and `startNatsCluster` (the whole first
 * start) retry on fresh ports. Here the port is held by a listener, so every try meets it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PortTakenError, startNatsServer } from '../../platform/nats-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdp-port-taken-'));
let holder: Server;
let held: number;

beforeAll(async () => {
  holder = createServer();
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
  held = (holder.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((r) => holder.close(r));
  rmSync(dir, { recursive: true, force: true });
});

it('a taken client port is a PortTakenError', async () => {
  const started = startNatsServer({ storeDir: join(dir, 'client'), port: held });
  await expect(started).rejects.toBeInstanceOf(PortTakenError);
  await expect(started).rejects.toThrow(/address already in use/);
});

it('a taken route port is a PortTakenError, after the fresh-port retries', async () => {
  const started = startNatsServer({
    storeDir: join(dir, 'route'),
    extraArgs: [
      '--server_name',
      'n1',
      '--cluster_name',
      'taken',
      '--cluster',
      `nats://127.0.0.1:${held}`,
      '--routes',
      `nats-route://127.0.0.1:${held}`,
    ],
  });
  await expect(started).rejects.toBeInstanceOf(PortTakenError);
  await expect(started).rejects.toThrow(new RegExp(`router port: ${held}`));
});

it('a start failing for another reason is not retried as a taken port', async () => {
  const started = startNatsServer({ storeDir: join(dir, 'bad'), extraArgs: ['--no_such_flag'] });
  await expect(started).rejects.toThrow(/did not start/);
  await expect(started).rejects.not.toBeInstanceOf(PortTakenError);
});
