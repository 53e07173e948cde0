/**
 * A loopback port that was free a moment ago, for a server that is told its port (a nats-server,
 * a cluster node's routes, a proxy that must come back on the same port).
 *
 * Picked below the kernel's ephemeral range (Linux: `ip_local_port_range`), where the kernel never
 * hands out a port by itself: neither to a `listen(0)` nor to an outgoing connection. A port taken
 * from that range (bind to 0, read it, release it) could be given to another process's outgoing
 * connection before the server binds it, or while a killed server is down before its restart on
 * the same port (a cluster's live nodes keep dialing its route port meanwhile). Each candidate is
 * bound once to check it is free; where the range cannot be read, or no candidate is free, the
 * kernel picks (bind to 0).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Lowest port picked: clear of the well-known and registered ports services usually listen on. */
const PICK_FROM = 10_000;
const CANDIDATES = 50;

/** The first port of the kernel's ephemeral range, or null where it cannot be read. */
function ephemeralStart(): number | null {
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return Number.isInteger(first) && first > PICK_FROM + 1_000 ? first : null;
  } catch {
    return null;
  }
}

const below = ephemeralStart();

/** Binds `port` (0: the kernel picks) on loopback and releases it; the port, or null if taken. */
function tryBind(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(null));
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : null));
    });
  });
}

export async function freePort(): Promise<number> {
  if (below !== null)
    for (let i = 0; i < CANDIDATES; i++) {
      const port = await tryBind(PICK_FROM + Math.floor(Math.random() * (below - PICK_FROM)));
      if (port !== null) return port;
    }
  const port = await tryBind(0);
  if (port === null) throw new Error('no free port on 127.0.0.1');
  return port;
}
