#!/usr/bin/env node
// Loads the pre-warmed `register serve` (standby-entry.ts) through tsx, as bin/register.mjs loads cli/main.ts.
import { register } from 'tsx/esm/api';

register();
await import('./standby-entry.ts');
