#!/usr/bin/env node
// Runs one TypeScript script (benchmarks, soak runs) through tsx: `node bin/run-ts.mjs bench/run.ts [args]`.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
register();
const [script, ...rest] = process.argv.slice(2);
process.argv = [process.argv[0], resolve(script), ...rest];
await import(pathToFileURL(resolve(script)).href);
