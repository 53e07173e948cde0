/**
 * Terminal output: colours only when the stream is a TTY (and NO_COLOR is unset), progress
 * drawn only on a TTY (stderr), machine output untouched.
 */
export type Writer = { write(s: string): unknown; isTTY?: boolean; columns?: number };

export type Term = {
  out: Writer;
  err: Writer;
  /** Colour functions for stdout / stderr (identity when not a TTY). */
  color: Palette;
  errColor: Palette;
  /** Whether progress bars are drawn (stderr is a TTY). */
  interactive: boolean;
};

export type Palette = Record<'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan', (s: string) => string>;

const CODES: Record<keyof Palette, [number, number]> = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
};

export function palette(enabled: boolean): Palette {
  const make = ([open, close]: [number, number]) =>
    enabled ? (s: string) => `\x1b[${open}m${s}\x1b[${close}m` : (s: string) => s;
  return Object.fromEntries(Object.entries(CODES).map(([k, v]) => [k, make(v)])) as Palette;
}

export function makeTerm(out: Writer, err: Writer, env: NodeJS.ProcessEnv = process.env): Term {
  const colour = (w: Writer) => Boolean(w.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
  return {
    out,
    err,
    color: palette(colour(out)),
    errColor: palette(colour(err)),
    interactive: Boolean(err.isTTY),
  };
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

export const formatCount = (n: number): string => n.toLocaleString('en-US');

/** A one-line status (progress bar or counters) on stderr, redrawn at most 10 times a second. */
export class StatusLine {
  private last = 0;
  private drawn = false;

  constructor(private readonly term: Term) {}

  /** Draws `text` (TTY only); `force` ignores the frame limit. */
  update(text: string, force = false): void {
    if (!this.term.interactive) return;
    const now = Date.now();
    if (!force && now - this.last < 100) return;
    this.last = now;
    const width = this.term.err.columns || 100; // 0 on a pseudo-terminal nobody sized
    const plain = stripColours(text);
    this.term.err.write(`\r\x1b[2K${plain.length >= width ? plain.slice(0, width - 1) : text}`);
    this.drawn = true;
  }

  /** Leaves the last drawing on its line and moves below it. */
  done(): void {
    if (this.drawn) this.term.err.write('\n');
    this.drawn = false;
  }
}

/** `label [██████░░░░] 60% detail`; `total` 0 or unknown shows the detail only. */
export function bar(term: Term, label: string, done: number, total: number, detail: string): string {
  if (!total) return `${label} ${detail}`;
  const width = 20;
  const ratio = Math.min(1, Math.max(0, done / total));
  const full = Math.round(ratio * width);
  const filled = term.errColor.green('█'.repeat(full)) + term.errColor.dim('░'.repeat(width - full));
  return `${label} [${filled}] ${String(Math.floor(ratio * 100)).padStart(3)}% ${detail}`;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour escapes are what is removed
export const stripColours = (s: string): string => s.replace(/\x1b\[[0-9;]*m/g, '');
