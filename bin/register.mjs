#!/usr/bin/env node
// The `register` CLI: runs the JavaScript build of cli/main.ts (build/register.mjs), building it first when a
// source changed since (or there is none yet), so a fresh clone needs nothing but `npm install`.
import { ensureBuilt } from '../scripts/build.mjs';

await ensureBuilt();
await import('../build/register.mjs');
