/**
 * `npm run build`: the TypeScript compiled to JavaScript, so that production runs `node` on it
 * with no loader (compose/Dockerfile, `npm run start:prod`).
 *
 * - the packages, in dependency order, each to its own dist/ (what its package.json exports):
 *   contracts/ (`@mdp/contracts`, with declarations), clients/typescript/ (`@mdp/client`, with
 *   declarations) and clients/cli/ (`@mdp/cli`); each resolves the one before by package name;
 * - the server (tsconfig.build.json) to dist/, in the layout of the sources, and beside it the
 *   files its modules read relative to themselves (contracts/proto/price.proto,
 *   gateways/http/console-ui/): every file of the server's folders that is not TypeScript or prose.
 *   consumers/generation/worker-entry.mjs registers tsx before importing worker.ts; its built copy
 *   imports worker.js.
 *
 * `--packages`: the packages only (test/e2e/packages.test.ts packs them).
 *
 * Plain JavaScript, so that building needs only typescript (no tsx).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

const PACKAGES = ['contracts', 'clients/typescript', 'clients/cli'];
const SERVER_DIRS = ['app', 'platform', 'producers', 'consumers', 'gateways', 'contracts'];
const NOT_COPIED = /(\.ts|\.md|\/package\.json|\/tsconfig[^/]*\.json)$/;
const WORKER_ENTRY = 'consumers/generation/worker-entry.mjs';

const packagesOnly = process.argv.includes('--packages');
const started = Date.now();
for (const dir of [...(packagesOnly ? [] : ['dist']), ...PACKAGES.map((p) => join(p, 'dist'))])
  rmSync(join(root, dir), { recursive: true, force: true });

const projects = PACKAGES.map((p) => join(p, 'tsconfig.build.json'));
if (!packagesOnly) projects.push('tsconfig.build.json');
for (const project of projects)
  execFileSync(process.execPath, [tsc, '-p', join(root, project)], { cwd: root, stdio: 'inherit' });
if (packagesOnly) {
  console.log(`built ${PACKAGES.join(', ')} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(0);
}

/** Every file under `dir` (relative to the root), without dist/ and node_modules/. */
function filesUnder(dir) {
  const out = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'dist' && entry.name !== 'node_modules') out.push(...filesUnder(path));
    } else if (entry.isFile()) out.push(path);
  }
  return out;
}

let copied = 0;
for (const dir of SERVER_DIRS)
  for (const file of filesUnder(dir))
    if (!NOT_COPIED.test(file)) {
      cpSync(join(root, file), join(root, 'dist', file));
      copied++;
    }

const entry = readFileSync(join(root, WORKER_ENTRY), 'utf8');
if (!entry.includes("import('./worker.ts')"))
  throw new Error(`${WORKER_ENTRY} no longer imports ./worker.ts: update scripts/build.mjs`);
writeFileSync(
  join(root, 'dist', WORKER_ENTRY),
  `// Built by scripts/build.mjs from ${WORKER_ENTRY}: the worker is compiled, no loader to register.\nawait import('./worker.js');\n`,
);

for (const must of ['dist/app/main.js', 'dist/contracts/proto/price.proto', 'clients/cli/dist/main.js'])
  if (!existsSync(join(root, must))) throw new Error(`build: ${must} is missing`);
console.log(
  `built ${PACKAGES.join(', ')} and the server to dist/ (${copied} files copied beside it) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
