/** Presets: named, described, and each one a valid generation manifest. */
import { describe, expect, it } from 'vitest';
import { SimulationManifest, validateManifest } from '../../contracts/manifest.ts';
import { GENERATE_DATASET, toolListing } from '../../contracts/mcp-tools.ts';
import {
  findPreset,
  INSTRUMENT_TYPES,
  PRESET_NAMES,
  PRESET_VENUES,
  PRESETS,
} from '../../contracts/presets.ts';

describe('presets', () => {
  it('include calm, volatile, flash-crash and funding-squeeze, each named once in kebab-case', () => {
    expect(PRESET_NAMES).toEqual(
      expect.arrayContaining(['calm', 'volatile', 'flash-crash', 'funding-squeeze']),
    );
    expect(new Set(PRESET_NAMES).size).toBe(PRESETS.length);
    for (const name of PRESET_NAMES) expect(name).toMatch(/^[a-z]+(-[a-z]+)*$/);
  });

  it.each(PRESETS.map((p) => [p.name, p] as const))('%s is a valid SimulationManifest', (_name, preset) => {
    expect(() => SimulationManifest.parse(preset.manifest)).not.toThrow();
    const validation = validateManifest(preset.manifest);
    expect(validation.errors).toEqual([]);
    expect(validation.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('list venue, instrument type and a description for each', () => {
    for (const p of PRESETS) {
      expect(PRESET_VENUES).toContain(p.venue);
      expect(INSTRUMENT_TYPES).toContain(p.type);
      expect(p.description.length).toBeGreaterThan(20);
    }
  });

  it('have distinct manifests (distinct hashes)', () => {
    const hashes = PRESETS.map((p) => validateManifest(p.manifest).hash);
    expect(new Set(hashes).size).toBe(PRESETS.length);
  });

  it("are exactly the values generate_dataset's preset argument accepts", () => {
    const props = toolListing(GENERATE_DATASET).inputSchema.properties as Record<string, { enum?: string[] }>;
    expect(props.preset?.enum).toEqual(PRESET_NAMES);
    expect(findPreset('calm')?.name).toBe('calm');
    expect(findPreset('nope')).toBeUndefined();
  });
});
