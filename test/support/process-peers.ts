/**
 * Which local TCP ports a child process is connected to, read from Linux /proc: its socket inodes
 * (/proc/<pid>/fd) matched with the established connections of /proc/net/tcp{,6}. The fault tests
 * use it to find the NATS node a gateway process is on (nats.js shuffles the URLs it is given),
 * so the node they kill is one the gateways really lose. Empty where /proc cannot be read.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

const ESTABLISHED = '01';

export function connectedPorts(pid: number): number[] {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m?.[1]) inodes.add(m[1]);
      } catch {} // the fd closed meanwhile
    }
  } catch {
    return [];
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    // Columns: sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const [remote, state, inode] = [cols[2], cols[3], cols[9]];
      if (!remote || state !== ESTABLISHED || !inode || !inodes.has(inode)) continue;
      ports.push(Number.parseInt(remote.split(':').at(-1) as string, 16));
    }
  }
  return ports;
}

/**
 * The index of the port in `ports` most of `pids` are connected to (ties: the lowest index; `fallback`
 * when none is seen), and how many of `pids` are.
 */
export function mostConnected(
  pids: number[],
  ports: number[],
  fallback = 0,
): { index: number; processes: number } {
  const counts = ports.map(() => 0);
  for (const pid of pids)
    for (const p of new Set(connectedPorts(pid))) {
      const i = ports.indexOf(p);
      if (i >= 0) counts[i] = (counts[i] ?? 0) + 1;
    }
  const best = Math.max(...counts);
  return { index: best > 0 ? counts.indexOf(best) : fallback, processes: best };
}
