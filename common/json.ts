// Canonical JSON: objects are built in contract field order, so plain JSON.stringify gives the canonical bytes
// (no whitespace; V8 never writes `1.0`). These helpers keep that in one place.

const enc = new TextEncoder();

export const jsonText = (value: unknown): string => JSON.stringify(value);
export const jsonBytes = (value: unknown): Uint8Array => enc.encode(JSON.stringify(value));
export const utf8 = (s: string): Uint8Array => enc.encode(s);
