// Bootstrap of the generation worker thread. A worker does not inherit the parent's TS loader
// under every runner (vitest executes tests in its own module runner), so register tsx here,
// from this file's own node_modules resolution, and then load the TS worker.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
