/**
 * `freePort` picks below the kernel's ephemeral range, where neither a `listen(0)` nor an outgoing
 * connection is ever given a port, and the port it gives is free to bind.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { expect, it } from 'vitest';
import { freePort } from '../../platform/free-port.ts';

const RANGE = '/proc/sys/net/ipv4/ip_local_port_range';

it('gives bindable ports outside the ephemeral range', async () => {
  const first = existsSync(RANGE) ? Number(readFileSync(RANGE, 'utf8').trim().split(/\s+/)[0]) : null;
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
  for (const port of ports) {
    if (first !== null) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(first);
    }
    const srv = createServer();
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((r) => srv.close(r));
  }
  // A kernel-picked port (what an outgoing connection would get) is never one of these.
  const kernel = createServer();
  await new Promise<void>((r) => kernel.listen(0, '127.0.0.1', r));
  const picked = (kernel.address() as { port: number }).port;
  await new Promise((r) => kernel.close(r));
  if (first !== null) expect(picked).toBeGreaterThanOrEqual(first);
});
