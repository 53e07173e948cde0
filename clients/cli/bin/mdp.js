#!/usr/bin/env node
// Entry point of `mdp`. Installed (`npm install @mdp/cli`), the package has no src/: it runs the
// compiled dist/main.js. In the repository it runs the TypeScript sources through tsx (a
// development dependency), with the repository's tsconfig.json `paths` resolving @mdp/client and
// @mdp/contracts to their sources too, so that no build is needed and none can be stale.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../src/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register({ tsconfig: fileURLToPath(new URL('../../../tsconfig.json', import.meta.url)) });
  await import(source.href);
} else {
  await import('../dist/main.js');
}
