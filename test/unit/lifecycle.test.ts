import { EventEmitter } from 'node:events';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLifecycle } from '../../platform/lifecycle.ts';
import { metricsRegistry } from '../../platform/metrics.ts';

/** A logger whose lines the test can read. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines };
}

const faults = async (kind: string) =>
  (await metricsRegistry.getSingleMetric('mdp_process_faults_total')?.get())?.values.find(
    (v) => v.labels.kind === kind,
  )?.value ?? 0;

/** A lifecycle on a fake process emitter, recording stop order and the exit code. */
function harness(deadlineMs = 2_000) {
  const { log, lines } = capture();
  const order: string[] = [];
  let resolveExit: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => {
    resolveExit = resolve;
  });
  const lc = createLifecycle({
    log,
    deadlineMs,
    finally: async () => void order.push('nats'),
    exit: (code) => resolveExit(code),
  });
  const proc = new EventEmitter();
  lc.install(proc);
  return { lc, proc, lines, order, exited };
}

describe('process lifecycle', () => {
  it('stops parts in reverse order, NATS last, once, and exits 0 on SIGINT', async () => {
    const h = harness();
    for (const name of ['producer', 'guard', 'gateway'])
      h.lc.parts.push({ name, stop: async () => void h.order.push(name) });
    h.proc.emit('SIGINT');
    h.proc.emit('SIGTERM');
    expect(await h.exited).toBe(0);
    expect(h.order).toEqual(['gateway', 'guard', 'producer', 'nats']);
  });

  it('logs, counts and exits 1 after draining on an unhandled rejection', async () => {
    const before = await faults('unhandled_rejection');
    const h = harness();
    h.lc.parts.push({ name: 'gateway', stop: async () => void h.order.push('gateway') });
    h.proc.emit('unhandledRejection', new Error('boom'));
    expect(await h.exited).toBe(1);
    expect(h.order).toEqual(['gateway', 'nats']);
    expect(await faults('unhandled_rejection')).toBe(before + 1);
    const line = h.lines.find((l) => l.msg === 'process fault');
    expect(line).toMatchObject({ kind: 'unhandled_rejection' });
    expect(String(line?.err)).toContain('boom');
  });

  it('exits 1 naming the part still stopping when the deadline passes', async () => {
    const h = harness(100);
    h.lc.parts.push({ name: 'stuck', stop: () => new Promise<void>(() => {}) });
    h.proc.emit('SIGTERM');
    expect(await h.exited).toBe(1);
    expect(h.lines.find((l) => l.msg === 'shutdown deadline passed')).toMatchObject({ part: 'stuck' });
    expect(h.order).toEqual([]);
  });
});
