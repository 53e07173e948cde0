/** Every command of `mdp`, in help order. */
import type { Command } from '../command.ts';
import { barsCommand } from './bars.ts';
import { cacheExport, cacheLs, cacheReplay, cacheRm } from './cache.ts';
import { exportCommand } from './export.ts';
import { generateCommand } from './generate.ts';
import { keysCreate, keysLs, keysRevoke } from './keys.ts';
import { loginCommand, logoutCommand } from './login.ts';
import { normalizeCommand } from './normalize.ts';
import { streamCommand } from './stream.ts';
import { syncCommand } from './sync.ts';

export const COMMANDS: Command[] = [
  streamCommand,
  syncCommand,
  generateCommand,
  exportCommand,
  barsCommand,
  normalizeCommand,
  cacheLs,
  cacheExport,
  cacheReplay,
  cacheRm,
  keysLs,
  keysCreate,
  keysRevoke,
  loginCommand,
  logoutCommand,
];
