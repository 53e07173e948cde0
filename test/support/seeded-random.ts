/**
 * Random inputs a failure can replay: a Lehmer generator seeded from `TEST_SEED` when set, else
 * from a fresh random seed; when the calling test fails it prints the seed (`TEST_SEED=<n>` replays
 * the same cuts). Call inside a test.
 */
import { onTestFailed } from 'vitest';

const MODULUS = 2_147_483_647;

export function seededRandom(what: string): { seed: number; random: () => number } {
  const seed = Number(process.env.TEST_SEED ?? 1 + Math.floor(Math.random() * (MODULUS - 2)));
  let state = seed % MODULUS || 1;
  onTestFailed(() => console.error(`${what}: seed ${seed} (replay with TEST_SEED=${seed})`));
  return {
    seed,
    random: () => {
      state = (state * 48_271) % MODULUS;
      return state / MODULUS;
    },
  };
}
