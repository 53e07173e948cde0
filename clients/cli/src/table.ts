/** Plain-text tables (column widths ignore colour escapes). */
import { stripColours } from './term.ts';

const visible = (s: string) => stripColours(s).length;

export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(visible(h), ...rows.map((r) => visible(r[i] ?? ''))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat((widths[i] ?? 0) - visible(c))))
      .join('  ')
      .trimEnd();
  return `${[line(head), ...rows.map(line)].join('\n')}\n`;
}
