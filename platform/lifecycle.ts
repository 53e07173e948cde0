/**
 * How a process stops: once, whatever asks first (a signal, an unhandled rejection, an uncaught
 * exception). Parts stop in reverse start order while NATS is still up, then `finally` (drain
 * NATS, stop the embedded server) runs last. A fault is logged and counted and stops with exit
 * code 1; a stop that overruns its deadline exits with code 1 naming the part that was stopping.
 */
import type { Logger } from './logger.ts';
import { processFaults } from './metrics.ts';

/** Something that runs until stopped; stopped in reverse start order. */
export type Stoppable = { name: string; stop(): Promise<void> };

export type Lifecycle = {
  /** Parts started so far (start order). */
  readonly parts: Stoppable[];
  stop(reason: string, exitCode: number): Promise<void>;
  /** Installs SIGTERM, SIGINT, unhandledRejection and uncaughtException handlers on `proc`. */
  install(proc: NodeJS.EventEmitter): void;
};

export type LifecycleOptions = {
  log: Logger;
  deadlineMs: number;
  /** Runs after every part has stopped (drain NATS, stop the embedded server). */
  finally: () => Promise<void>;
  /** Called when a deadline passes, before exiting. */
  onDeadline?: () => void;
  exit: (code: number) => void;
};

export function createLifecycle(opts: LifecycleOptions): Lifecycle {
  const { log } = opts;
  const parts: Stoppable[] = [];
  let stopping = false;

  const stop = async (reason: string, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    const startedAt = Date.now();
    let current = 'start-up';
    const deadline = setTimeout(() => {
      log.error({ reason, part: current, deadline_ms: opts.deadlineMs }, 'shutdown deadline passed');
      opts.onDeadline?.();
      opts.exit(1);
    }, opts.deadlineMs);
    deadline.unref();
    log.info({ reason }, 'shutting down');
    for (const p of [...parts].reverse()) {
      current = p.name;
      await p.stop().catch((err) => log.error({ err: String(err), part: p.name }, 'stop failed'));
    }
    current = 'finally';
    await opts.finally().catch((err) => log.error({ err: String(err) }, 'stop failed'));
    clearTimeout(deadline);
    log.info({ reason, duration_ms: Date.now() - startedAt }, 'stopped');
    opts.exit(exitCode);
  };

  const fault = (kind: 'unhandled_rejection' | 'uncaught_exception') => (err: unknown) => {
    processFaults.inc({ kind });
    log.error(
      { kind, err: err instanceof Error ? (err.stack ?? err.message) : String(err) },
      'process fault',
    );
    void stop(kind, 1);
  };

  return {
    parts,
    stop,
    install(proc) {
      proc.on('unhandledRejection', fault('unhandled_rejection'));
      proc.on('uncaughtException', fault('uncaught_exception'));
      proc.on('SIGTERM', () => void stop('SIGTERM', 0));
      proc.on('SIGINT', () => void stop('SIGINT', 0));
    },
  };
}
