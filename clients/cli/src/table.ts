/** Plain-text tables (column widths ignore colour escapes). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour escapes are what is skipped
const visible = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '').length;

export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(visible(h), ...rows.map((r) => visible(r[i] ?? ''))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat((widths[i] ?? 0) - visible(c))))
      .join('  ')
      .trimEnd();
  return `${[line(head), ...rows.map(line)].join('\n')}\n`;
}
