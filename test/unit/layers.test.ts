/**
 * No arrow up the layers (ARCHITECTURE.md, Layout): contracts ← platform ← producers, consumers ←
 * gateways ← app. Every relative import of a product file is read from the source and checked:
 * none reaches a higher layer, producers and consumers do not import each other, and a transport
 * (gateways/<transport>/) imports only gateways/core and itself, never another transport.
 * The exceptions are listed here with their reason; a new one must be added on purpose.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const LAYER: Record<string, number> = {
  contracts: 0,
  platform: 1,
  producers: 2,
  consumers: 2,
  gateways: 3,
  app: 4,
};

/** Imports allowed against the rules, each with why. */
const EXCEPTIONS: Record<string, string> = {
  'consumers/generation/event-columns.ts -> producers/simulator/market.ts':
    'the generation worker runs the simulator’s pure market model (no I/O) window by window',
  'consumers/generation/window-task.ts -> producers/simulator/market.ts':
    'the generation worker runs the simulator’s pure market model (no I/O) window by window',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(`${dir}/${e.name}`)
      : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')
        ? [`${dir}/${e.name}`]
        : [],
  );
}

/** Every relative import and re-export of `file`, as a path from the project root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g))
    out.push(normalize(join(dirname(file), m[1] as string)));
  for (const m of text.matchAll(/\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g))
    out.push(normalize(join(dirname(file), m[1] as string)));
  return out;
}

/** Why `from` may not import `to`, or null when it may. */
function violation(from: string, to: string): string | null {
  const [fromTop, fromSub] = from.split('/');
  const [toTop, toSub] = to.split('/');
  const a = LAYER[fromTop as string];
  const b = LAYER[toTop as string];
  if (a === undefined) return null;
  if (b === undefined) return `outside the product (${toTop})`;
  if (b > a) return `upward: ${fromTop} → ${toTop}`;
  if (b === a && fromTop !== toTop) return `sideways: ${fromTop} → ${toTop}`;
  const isTransport = (s: string | undefined, rest: string[]) =>
    s !== undefined && s !== 'core' && rest.length > 2;
  if (
    fromTop === 'gateways' &&
    toTop === 'gateways' &&
    fromSub !== toSub &&
    isTransport(fromSub, from.split('/')) &&
    toSub !== 'core'
  )
    return `transport → transport: ${fromSub} → ${toSub}`;
  return null;
}

describe('layers', () => {
  const files = Object.keys(LAYER).flatMap(sourceFiles);

  it('reads the product’s files and their imports', () => {
    expect(files.length).toBeGreaterThan(300);
    expect(importsOf('gateways/core/subscribe.ts')).toContain('gateways/core/own-coins.ts');
  });

  it('has no import up the layers, sideways between producers and consumers, or between transports', () => {
    const found: string[] = [];
    for (const f of files)
      for (const to of importsOf(f)) {
        const why = violation(f, to);
        const key = `${f} -> ${to}`;
        if (why && !(key in EXCEPTIONS)) found.push(`${key} (${why})`);
      }
    expect(found).toEqual([]);
  });

  it('judges each kind of arrow', () => {
    expect(violation('producers/connectors/x.ts', 'gateways/core/y.ts')).toMatch(/^upward/);
    expect(violation('producers/status/x.ts', 'consumers/status/y.ts')).toMatch(/^sideways/);
    expect(violation('gateways/grpc/x.ts', 'gateways/unified/y.ts')).toMatch(/^transport/);
    expect(violation('gateways/grpc/x.ts', 'gateways/core/y.ts')).toBeNull();
    expect(violation('app/main.ts', 'gateways/grpc/app.ts')).toBeNull();
    expect(violation('contracts/x.ts', 'platform/y.ts')).toMatch(/^upward/);
  });

  it('lists only exceptions that still exist', () => {
    const all = new Set(files.flatMap((f) => importsOf(f).map((to) => `${f} -> ${to}`)));
    expect(Object.keys(EXCEPTIONS).filter((k) => !all.has(k))).toEqual([]);
  });
});
