#!/usr/bin/env node
// The `register` CLI entry: loads the TypeScript sources through tsx, then hands over to cli/main.ts.
import { register } from 'tsx/esm/api';
register();
await import('../cli/main.ts');
