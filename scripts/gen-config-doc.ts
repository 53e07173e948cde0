/**
 * Writes docs/configuration.md from platform/config.ts: every environment variable of
 * `ConfigSchema`, its default and allowed values (read from the zod schema itself) and its meaning
 * (the `/** … *\/` comment right above it in the source). A variable without its own comment is an
 * error, so the document always covers every variable. `npm run docs:config` writes the file;
 * `--check` exits 1 when the file differs from what the source gives (test/unit/config-doc.test.ts
 * asserts the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigSchema } from '../platform/config.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CONFIG_SOURCE = join(root, 'platform/config.ts');
export const CONFIG_DOC = join(root, 'docs/configuration.md');

/** Each variable's comment, in source order, read from the `ConfigSchema = z.object({ … })` literal. */
export function variableComments(source: string): { name: string; comment: string | null }[] {
  const lines = source.split('\n');
  const start = lines.findIndex((l) => /^export const ConfigSchema = z\.object\(\{\s*$/.test(l));
  if (start < 0) throw new Error('platform/config.ts: `export const ConfigSchema = z.object({` not found');
  const out: { name: string; comment: string | null }[] = [];
  for (let i = start + 1; i < lines.length && !/^\}\);/.test(lines[i] as string); i++) {
    const m = /^ {2}([A-Z][A-Z0-9_]*):/.exec(lines[i] as string);
    if (!m) continue;
    let comment: string | null = null;
    if ((lines[i - 1] as string).trim().endsWith('*/')) {
      let j = i - 1;
      while (j > start && !(lines[j] as string).trim().startsWith('/**')) j--;
      comment = lines
        .slice(j, i)
        .map((l) =>
          l
            .trim()
            .replace(/^\/\*\*\s?/, '')
            .replace(/\s?\*\/$/, '')
            .replace(/^\*\s?/, ''),
        )
        .filter(Boolean)
        .join(' ');
    }
    out.push({ name: m[1] as string, comment });
  }
  return out;
}

type Def = { type: string; innerType?: Zod; in?: Zod; format?: string };
type Zod = {
  def: Def;
  minValue?: number | null;
  maxValue?: number | null;
  options?: string[];
  safeParse: (v: unknown) => { success: boolean; data?: unknown };
};

/** The schema under its default, optional and transform wrappers. */
function innermost(schema: Zod): Zod {
  let s = schema;
  for (;;) {
    const d = s.def;
    if ((d.type === 'default' || d.type === 'optional') && d.innerType) s = d.innerType;
    else if (d.type === 'pipe' && d.in) s = d.in;
    else return s;
  }
}

const SIZE_UNITS: [number, string][] = [
  [1024 ** 3, 'GiB'],
  [1024 ** 2, 'MiB'],
  [1024, 'KiB'],
];

function formatDefault(name: string, value: unknown): string {
  if (value === undefined) return 'unset';
  if (Array.isArray(value)) return value.length ? `\`${value.join(',')}\`` : 'empty';
  if (typeof value === 'number' && name.endsWith('_BYTES') && value > 0) {
    const unit = SIZE_UNITS.find(([n]) => value % n === 0);
    return unit ? `\`${value}\` (${value / unit[0]} ${unit[1]})` : `\`${value}\``;
  }
  return `\`${String(value)}\``;
}

function formatAllowed(schema: Zod): string {
  const inner = innermost(schema);
  if (inner.options) return inner.options.map((o) => `\`${o}\``).join(' \\| ');
  if (inner.def.type === 'number') {
    const min = inner.minValue ?? Number.MIN_SAFE_INTEGER;
    const max = inner.maxValue ?? Number.MAX_SAFE_INTEGER;
    if (max >= Number.MAX_SAFE_INTEGER) return `≥ ${min}`;
    return `${min}–${max}`;
  }
  if (inner.def.format === 'url') return 'URL';
  return 'text';
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

/** The whole of docs/configuration.md for this source. */
export function renderConfigDoc(source: string = readFileSync(CONFIG_SOURCE, 'utf8')): string {
  const shape = ConfigSchema.shape as unknown as Record<string, Zod>;
  const vars = variableComments(source);
  const documented = new Set(vars.map((v) => v.name));
  const missing = [
    ...vars.filter((v) => !v.comment).map((v) => `${v.name} has no comment of its own`),
    ...Object.keys(shape)
      .filter((k) => !documented.has(k))
      .map((k) => `${k} was not found in the source`),
  ];
  if (missing.length) throw new Error(`platform/config.ts: ${missing.join('; ')}`);
  const rows = vars.map(({ name, comment }) => {
    const schema = shape[name] as Zod;
    const parsed = schema.safeParse(undefined);
    const def = parsed.success ? formatDefault(name, parsed.data) : 'required';
    return `| \`${name}\` | ${cell(def)} | ${formatAllowed(schema)} | ${cell(comment as string)} |`;
  });
  return [
    '# Configuration',
    '',
    '<!-- Generated from platform/config.ts by `npm run docs:config`: edit the comments there, not this file. -->',
    '',
    'Environment variables, read only by `platform/config.ts` (zod-validated: a bad value stops the',
    'process with a message naming it). `npm start` sets `NODE_ENV=development`. The meaning of each',
    'variable is the comment above it in `platform/config.ts`; `test/unit/config-doc.test.ts` fails',
    'when this file differs from what `npm run docs:config` writes.',
    '',
    '| Variable | Default | Allowed | Meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

const invokedDirectly =
  process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const text = renderConfigDoc();
  if (process.argv.includes('--check')) {
    const current = readFileSync(CONFIG_DOC, 'utf8');
    if (current !== text) {
      process.stderr.write('docs/configuration.md is stale: run `npm run docs:config`\n');
      process.exit(1);
    }
  } else {
    writeFileSync(CONFIG_DOC, text);
    process.stdout.write(`wrote ${CONFIG_DOC}\n`);
  }
}
