/**
 * One window as a unit of work: its events from the model, written as part files. The same
 * function runs in-process and in worker threads, so both paths produce identical parts.
 */
import { join } from 'node:path';
import type { ModelConfig } from '../../contracts/model-config.ts';
import { rowsBetween } from '../../producers/simulator/market.ts';
import type { ParquetPartWriter } from './part-writer.ts';
import type { GenerationWindow } from './windows.ts';

/** Everything a window needs; plain data, so it crosses to a worker thread by structured clone. */
export type WindowTask = {
  readonly config: ModelConfig;
  readonly window: GenerationWindow;
  /** Directory of the job's part files. */
  readonly partDir: string;
  /** 0 for the first try, n for the n-th retry. */
  readonly attempt: number;
  /** Test hook: fail this attempt after its first batch is staged (a mid-window failure). */
  readonly injectFailure?: boolean;
  readonly rowsPerPart?: number;
};

/** A written window: its rows and part files in order. */
export type WindowResult = { readonly index: number; readonly rows: number; readonly parts: string[] };

/** Raised by the failure-injection hook. */
export class InjectedWindowFailure extends Error {
  override name = 'InjectedWindowFailure';
}

/** Path of part `segment` of window `windowIndex`; zero-padded so names sort in merge order. */
export function partPath(partDir: string, windowIndex: number, segment: number): string {
  const name = `w${String(windowIndex).padStart(6, '0')}-${String(segment).padStart(4, '0')}.parquet`;
  return join(partDir, name);
}

/**
 * Writes one window. A retry rewrites the same deterministic part names, so a failed attempt's
 * leftovers are overwritten or, past the successful attempt's last part, never listed.
 */
export async function runWindowTask(writer: ParquetPartWriter, task: WindowTask): Promise<WindowResult> {
  const { config, window } = task;
  const { rows, parts } = await writer.write({
    events: rowsBetween(config, window.fromMs, window.toMs),
    constants: { symbol: config.symbol, source: 'synthetic' },
    partPath: (segment) => partPath(task.partDir, window.index, segment),
    levelsHint: config.book_depth,
    ...(task.rowsPerPart === undefined ? {} : { rowsPerPart: task.rowsPerPart }),
    afterBatch: () => {
      if (task.injectFailure) {
        throw new InjectedWindowFailure(
          `injected failure in window ${window.index}, attempt ${task.attempt}`,
        );
      }
    },
  });
  return { index: window.index, rows, parts };
}
