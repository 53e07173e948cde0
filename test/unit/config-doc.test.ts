/**
 * docs/configuration.md is what scripts/gen-config-doc.ts makes of platform/config.ts: every
 * variable of ConfigSchema with its default, allowed values and the comment above it. A variable
 * added, removed, re-defaulted or re-described without `npm run docs:config` fails here, and so
 * does a variable without a comment of its own.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../platform/config.ts';
import { CONFIG_DOC, CONFIG_SOURCE, renderConfigDoc } from '../../scripts/gen-config-doc.ts';

describe('docs/configuration.md', () => {
  it('is what `npm run docs:config` writes from platform/config.ts', () => {
    expect(readFileSync(CONFIG_DOC, 'utf8')).toBe(renderConfigDoc());
  });

  it('has one row per variable of ConfigSchema', () => {
    const doc = readFileSync(CONFIG_DOC, 'utf8');
    const rows = [...doc.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]);
    expect(rows.sort()).toEqual(Object.keys(ConfigSchema.shape).sort());
  });

  it('refuses a variable without a comment of its own, naming it', () => {
    const source = readFileSync(CONFIG_SOURCE, 'utf8');
    const stripped = source.replace(/ {2}\/\*\* Seed of the live simulator\. \*\/\n/, '');
    expect(stripped).not.toBe(source);
    expect(() => renderConfigDoc(stripped)).toThrow(/SIM_SEED has no comment of its own/);
  });

  it('changes when a description changes', () => {
    const source = readFileSync(CONFIG_SOURCE, 'utf8');
    const changed = source.replace('Seed of the live simulator.', 'Seed of the live simulator (changed).');
    expect(renderConfigDoc(changed)).not.toBe(readFileSync(CONFIG_DOC, 'utf8'));
  });
});
