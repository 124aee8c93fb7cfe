// A running server picks up a newly compiled release and an edited keys file without a restart.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAll } from '../../compiler/compile.ts';
import { addKey, revokeKey } from '../../runtime/keys/key-file.ts';
import { writeHandRelease } from '../fixtures/hand-release.ts';
import { client } from '../helpers/api-client.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';
import { eventually } from '../helpers/eventually.ts';
import { expectBySecondCheck, keyChecksOf } from '../helpers/key-checks.ts';
import { makeHandWorld, STAMPS, type World } from '../fixtures/hand-world.ts';

let world: World;
let rt: InProcessRuntime;
const keysFile = () => join(world.root, 'keys.json');

beforeAll(async () => {
  world = await makeHandWorld();
  rt = await openInProcess({ dist: world.dist, keys: (await addKey({ file: join(world.root, 'keys.json'), name: 'first' }), keysFile()), state: join(world.root, 'state') });
});
afterAll(async () => {
  await rt?.close();
});


describe('live reload', () => {
  it('serves a newly compiled stamp without a restart', async () => {
    const { key } = await addKey({ file: keysFile(), name: 'reader', quota: 1000, rate: 1000 });
    const next = client(rt.url + '/api/next', key);
    await eventually('the new key', async () => (await next('/meta')).status === 200); // seen within a poll
    expect((await next('/meta')).json.release.stamp).toBe(STAMPS[2]);
    writeHandRelease(world.releases, '20261022T000000Z', { entities: [['rt00000000000fff', 'team', 'active', 'Newcomers', '', '', '', '', '']] }, { publishable: true });
    await compileAll({ releases: world.releases, dist: world.dist, progress: false });
    await eventually('the new stamp', async () => (await next('/meta')).json.release.stamp === '20261022T000000Z');
    const v1 = client(rt.url + '/api/v1', key);
    expect((await v1('/entities/rt00000000000fff')).json.name_en).toBe('Newcomers');
  });

  it('serves a stamp compiled again with other bytes once index.json vouches for its new manifest', async () => {
    const { key } = await addKey({ file: keysFile(), name: 'recompiled', quota: 1000, rate: 1000 });
    const next = client(rt.url + '/api/next', key);
    await eventually('the new key', async () => (await next('/meta')).status === 200);
    const stamp = (await next('/meta')).json.release.stamp as string;
    expect((await next('/entities/rt00000000000ffe')).status).toBe(404);
    // The same stamp again, with one more entity: new manifests, new content-addressed packs, a new index entry.
    writeHandRelease(world.releases, stamp, { entities: [['rt00000000000fff', 'team', 'active', 'Newcomers', '', '', '', '', ''], ['rt00000000000ffe', 'team', 'active', 'Latecomers', '', '', '', '', '']] }, { publishable: true });
    await compileAll({ releases: world.releases, dist: world.dist, stamp, progress: false });
    await eventually('the recompiled stamp', async () => (await next('/entities/rt00000000000ffe')).status === 200);
    expect((await next('/entities/rt00000000000ffe')).json.name_en).toBe('Latecomers');
    expect((await next('/meta')).json.release.stamp).toBe(stamp);
  });

  it('refuses a revoked key by its second key check (within a second)', async () => {
    const { key, record } = await addKey({ file: keysFile(), name: 'soon revoked', quota: 1000, rate: 1000 });
    const call = client(rt.url + '/api/v1', key);
    await eventually('the new key', async () => (await call('/key')).status === 200);
    await revokeKey(record.id, { file: keysFile() });
    await expectBySecondCheck(() => keyChecksOf(rt.url), async () => (await call('/key')).status === 401, 'the revocation');
    expect((await call('/key')).json.error).toBe('revoked_key');
  });
});
