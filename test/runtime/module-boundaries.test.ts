// The runtime's module boundaries, read from the sources: no route imports another route (what two routes share is
// a module of its own), the read layers (release/, source/) never make an HTTP answer (ApiError) nor know a route,
// and no …Now twin of a read or NOT_AT_HAND sentinel comes back (one call per read, runtime/interfaces.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const RUNTIME = join(import.meta.dirname, '../../runtime');
const sources = (dir: string): string[] =>
  readdirSync(join(RUNTIME, dir), { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));
const text = (file: string): string => readFileSync(join(RUNTIME, file), 'utf8');
const imports = (file: string): string[] => [...text(file).matchAll(/^import[^;]*?from '([^']+)'/gms)].map((m) => m[1]);

describe('runtime module boundaries', () => {
  it('no route module imports another route module; routes/index.ts alone lists them', () => {
    const isRoute = (file: string) => /RouteDef\[\]/.test(text(file));
    const offending: string[] = [];
    for (const file of sources('routes')) {
      if (file === join('routes', 'index.ts')) continue;
      for (const spec of imports(file)) {
        if (!spec.startsWith('./')) continue;
        const target = join('routes', spec.slice(2));
        if (isRoute(target)) offending.push(`${file} → ${target}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it('release/ and source/ throw domain errors only: they import neither ApiError nor a route', () => {
    const offending = [...sources('release'), ...sources('source')].flatMap((file) =>
      imports(file).filter((spec) => /api-error|routes\/|\/route\.ts$/.test(spec)).map((spec) => `${file} → ${spec}`),
    );
    expect(offending).toEqual([]);
  });

  it('the signature code runs in the browser and at the edge: common/signing.ts imports nothing and uses no Node global', () => {
    const signing = readFileSync(join(RUNTIME, '../common/signing.ts'), 'utf8');
    expect([...signing.matchAll(/^import[^;]*?from '([^']+)'/gms)].map((m) => m[1])).toEqual([]);
    expect(signing.match(/\b(Buffer|process|require)\b|node:/g)).toBeNull();
  });

  it('the router core imports no route, and hands routes a typed request: the adapter casts nothing to Request', () => {
    const core = ['app.ts', 'route.ts', 'response-headers.ts', 'api-error.ts'];
    expect(core.flatMap((file) => imports(file).filter((spec) => /routes\//.test(spec)).map((spec) => `${file} → ${spec}`))).toEqual([]);
    expect(text('node-adapter.ts')).not.toMatch(/as unknown as Request/);
  });

  it('the one app stays Web-standard: its core, the operational and page routes import nothing from node:', () => {
    // Files that already used node: before the edge work are left to it (response-headers.ts, routes/changes.ts).
    const neutral = ['app.ts', 'route.ts', 'api-error.ts', 'openapi-json.ts', 'ops/ops-routes.ts', 'ops/operations.ts', 'pages/page-routes.ts', 'routes/index.ts'];
    expect(neutral.flatMap((file) => imports(file).filter((spec) => spec.startsWith('node:')).map((spec) => `${file} → ${spec}`))).toEqual([]);
    expect(neutral.filter((file) => /\b(Buffer|process)\./.test(text(file)))).toEqual([]);
  });

  it('has one call per read: no NOT_AT_HAND and no …Now twin of a read', () => {
    const offending = sources('.').filter((file) => /NOT_AT_HAND|\b(entity|readRange|getNow|forNamespace|liveEntity)Now\b/.test(text(file)));
    expect(offending).toEqual([]);
  });
});
