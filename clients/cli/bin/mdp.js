#!/usr/bin/env node
// Entry point of `mdp`: runs the TypeScript command line through tsx (a runtime dependency).
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
