// A per-stamp ETag is hashed once per release and request target and cached (runtime/response-headers.ts
// perStampEtag): what is cached must be what would be derived, and never one release's tag for another's answer.
import { describe, expect, it } from 'vitest';
import { perStampEtag } from '../../runtime/response-headers.ts';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const url = 'http://127.0.0.1/api/v1/entities/rp-1?include=bridges,aliases';
const query = new URLSearchParams('include=bridges,aliases');
const params = { reep_id: 'rp-1' };

describe('cached per-stamp ETags', () => {
  it('give the tag a fresh derivation gives, by release: asked again, the same; in another release, another', () => {
    const first = perStampEtag('1\u0000', A, '/entities/{reep_id}', url, params, query);
    expect(first).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(perStampEtag('1\u0000', A, '/entities/{reep_id}', url, params, query)).toBe(first);
    // Another opened release (another scope) over another manifest: its own tag, not the cached one.
    const other = perStampEtag('2\u0000', B, '/entities/{reep_id}', url, params, query);
    expect(other).not.toBe(first);
    // The include set's order changes no body, so no tag: a second target for the same answer has the same tag.
    const reordered = 'http://127.0.0.1/api/v1/entities/rp-1?include=aliases,bridges';
    expect(perStampEtag('1\u0000', A, '/entities/{reep_id}', reordered, params, new URLSearchParams('include=aliases,bridges'))).toBe(first);
  });
});
