/**
 * `npm run bench -- <name>`: runs `bench/<name>.ts` (which exports `async function run()`) and
 * prints its result as one JSON document on stdout; progress goes to stderr. Helpers and worker
 * processes live in `bench/lib/` and are not benchmarks.
 */
import '../platform/v8-flags.ts';
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));

function available(): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('.d.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
}

async function main(): Promise<void> {
  const name = process.argv[2];
  const names = available();
  if (!name || !names.includes(name)) {
    process.stderr.write(
      `${name ? `unknown benchmark "${name}"\n` : ''}usage: npm run bench -- <name>\navailable: ${names.join(', ')}\n`,
    );
    process.exit(2);
  }
  const mod = (await import(pathToFileURL(`${dir}${name}.ts`).href)) as { run?: () => Promise<unknown> };
  if (typeof mod.run !== 'function') {
    process.stderr.write(`bench/${name}.ts does not export run()\n`);
    process.exit(2);
  }
  const result = await mod.run();
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  // Stray handles (sockets, timers of libraries) must not keep a finished benchmark alive.
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
