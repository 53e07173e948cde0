/** Event-loop utilisation, CPU and memory of this process over a measurement window. */
import { readFileSync } from 'node:fs';
import { constants, PerformanceObserver, performance } from 'node:perf_hooks';

export type ProcSnapshot = {
  elu: number;
  cpu_pct: number;
  /** CPU time (user + system, all threads) over the window. */
  cpu_ms: number;
  /** The kernel's part of `cpu_ms` (socket copies and syscalls). */
  sys_ms: number;
  rss_mb: number;
  heap_used_mb: number;
  /** Garbage collections over the window: young-generation (scavenges) and full, count and pause ms. */
  gc: { minor: number; minor_ms: number; major: number; major_ms: number };
};

const GC_MINOR = constants.NODE_PERFORMANCE_GC_MINOR;

export class ProcStats {
  private elu = performance.eventLoopUtilization();
  private cpu = process.cpuUsage();
  private t = performance.now();
  private gc = { minor: 0, minor_ms: 0, major: 0, major_ms: 0 };

  constructor() {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
        if (e.detail?.kind === GC_MINOR) {
          this.gc.minor++;
          this.gc.minor_ms += e.duration;
        } else {
          this.gc.major++;
          this.gc.major_ms += e.duration;
        }
      }
    }).observe({ entryTypes: ['gc'] });
  }

  reset(): void {
    this.elu = performance.eventLoopUtilization();
    this.cpu = process.cpuUsage();
    this.t = performance.now();
    this.gc = { minor: 0, minor_ms: 0, major: 0, major_ms: 0 };
  }

  read(): ProcSnapshot {
    const elu = performance.eventLoopUtilization(this.elu);
    const cpu = process.cpuUsage(this.cpu);
    const wallMs = performance.now() - this.t;
    const mem = process.memoryUsage();
    return {
      elu: Math.round(elu.utilization * 1_000) / 1_000,
      cpu_pct: Math.round(((cpu.user + cpu.system) / 1_000 / wallMs) * 1_000) / 10,
      cpu_ms: Math.round((cpu.user + cpu.system) / 1_000),
      sys_ms: Math.round(cpu.system / 1_000),
      rss_mb: Math.round(mem.rss / 1_048_576),
      heap_used_mb: Math.round(mem.heapUsed / 1_048_576),
      gc: {
        minor: this.gc.minor,
        minor_ms: Math.round(this.gc.minor_ms),
        major: this.gc.major,
        major_ms: Math.round(this.gc.major_ms),
      },
    };
  }
}

/** Wall clock in µs, as `publish_us` is stamped by the producer. */
export const wallUs = (): number => (performance.timeOrigin + performance.now()) * 1_000;

/** CPU time (user + system, ms) another process has used so far, from /proc (0 where there is none). */
export function pidCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command's closing parenthesis; utime and stime are the 14th and 15th.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1_000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** The kernel's clock ticks per second (USER_HZ): 100 on every Linux Node runs on. */
const CLOCK_TICKS = 100;
