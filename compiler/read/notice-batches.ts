// Reads and checks the private notice batches (private/notices/<provider>.json) field by field against the contract's
// ProviderNoticeFinding. The files are private: a refusal names the file and a JSON path, never a value from it.
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { RegisterError } from '../../common/errors.ts';
import { MAX_NOTICE_DEPTH, MAX_NOTICE_FILE_BYTES } from '../../common/limits.ts';
import { ID_CAP, overCap, TEXT_CAP, type CellCap } from './cell-caps.ts';
import type { NoticeBatch, NoticeFindingRecord } from '../../common/dist-layout.ts';
import { firstInvalidUtf8, isUtf8Range } from './utf8-check.ts';

/** A listed notice file: where it is and how messages name it (its path in the release). */
export interface NoticeFile {
  path: string;
  label: string;
}

/**
 * Reads and checks every file of `files` in path order, handing each batch to `use` (which may write it out) before
 * the next is read, so one batch is held at a time. Each is checked: at most MAX_NOTICE_FILE_BYTES, UTF-8, JSON,
 * every field of the batch and its findings present with the contract's type (strings within their caps), finding
 * IDs unique. Then across files: one file per provider, each named after its provider (`<provider>.json`,
 * percent-encoding allowed). Returns the number of batches.
 */
export async function forEachNoticeBatch(files: readonly NoticeFile[], use: (batch: NoticeBatch) => Promise<void> | void): Promise<number> {
  const sorted = files.slice().sort((a, b) => cmp(a.label, b.label));
  const providers: string[] = [];
  for (const file of sorted) {
    const batch = checkBatch(parseJson(await readCapped(file), file.label), file.label);
    providers.push(batch.provider);
    await use(batch);
  }
  // Two files for one provider would overwrite each other's batch; found before the names are checked, so both are named.
  const fileOf = new Map<string, string>();
  for (const [i, provider] of providers.entries()) {
    const first = fileOf.get(provider);
    if (first !== undefined) throw new RegisterError('compile', `$.provider is also the provider of ${first}: one notice file per provider`, sorted[i].label);
    fileOf.set(provider, sorted[i].label);
  }
  for (const [i, provider] of providers.entries()) {
    if (providerOfName(sorted[i].label) !== provider) throw new RegisterError('compile', '$.provider does not match the file name (<provider>.json)', sorted[i].label);
  }
  return sorted.length;
}

/** The provider a notice file's name stands for: its name without `.json`, percent-decoded; null when undecodable. */
function providerOfName(label: string): string | null {
  try {
    return decodeURIComponent(basename(label, '.json'));
  } catch {
    return null;
  }
}

/** The file's bytes, refused unread past the cap, and refused when they are not UTF-8. */
async function readCapped(file: NoticeFile): Promise<Buffer> {
  const h = await open(file.path, 'r');
  try {
    const { size } = await h.stat();
    if (size > MAX_NOTICE_FILE_BYTES) throw new RegisterError('compile', overCap(size, FILE_CAP), file.label);
    const bytes = await h.readFile();
    // Again as read: a file that grew since its stat is held to the same cap.
    if (bytes.length > MAX_NOTICE_FILE_BYTES) throw new RegisterError('compile', overCap(bytes.length, FILE_CAP), file.label);
    if (!isUtf8Range(bytes, 0, bytes.length)) throw new RegisterError('compile', `not valid UTF-8 (byte ${Math.max(0, firstInvalidUtf8(bytes, 0, bytes.length)) + 1})`, file.label);
    return bytes;
  } finally {
    await h.close();
  }
}

/** The parsed JSON; a syntax error is reported by position only (the parser's own message quotes the text). */
function parseJson(bytes: Buffer, label: string): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    const at = /position (\d+)/.exec(String((e as Error)?.message))?.[1];
    throw new RegisterError('compile', `not valid JSON${at === undefined ? '' : ` (at character ${Number(at) + 1})`}`, label);
  }
}

const FILE_CAP: CellCap = { bytes: MAX_NOTICE_FILE_BYTES, name: 'MAX_NOTICE_FILE_BYTES' };

const BATCH_FIELDS = ['provider', 'batch_id', 'generated_at', 'findings'];
const FINDING_FIELDS = [
  'finding_id', 'provider', 'kind', 'title', 'provider_ref', 'source', 'observed', 'expected', 'severity', 'suggested_action', 'payload',
  'payload_hash', 'first_seen_at', 'last_seen_at',
];

/** Checks one parsed batch; returns it as the dist stores it (findings by ID, fields in contract order). */
function checkBatch(raw: unknown, label: string): NoticeBatch {
  const fail = (path: string, why: string): never => {
    throw new RegisterError('compile', `${path}: ${why}`, label);
  };
  const b = record(raw, '$', BATCH_FIELDS, fail);
  const provider = text(b.provider, '$.provider', ID_CAP, fail, true);
  if (!Number.isSafeInteger(b.batch_id) || (b.batch_id as number) < 0) fail('$.batch_id', 'expected a non-negative integer');
  const generatedAt = textOrNull(b.generated_at, '$.generated_at', TEXT_CAP, fail);
  if (!Array.isArray(b.findings)) fail('$.findings', 'expected an array');
  const indexOf = new Map<string, number>();
  const findings = (b.findings as unknown[]).map((value, i): NoticeFindingRecord => {
    const at = `$.findings[${i}]`;
    const f = record(value, at, FINDING_FIELDS, fail);
    const findingId = text(f.finding_id, `${at}.finding_id`, ID_CAP, fail, true);
    const before = indexOf.get(findingId);
    if (before !== undefined) fail(`${at}.finding_id`, `repeats the finding_id of $.findings[${before}]`);
    indexOf.set(findingId, i);
    if (text(f.provider, `${at}.provider`, ID_CAP, fail, true) !== provider) fail(`${at}.provider`, 'differs from $.provider');
    return {
      finding_id: findingId,
      provider,
      kind: text(f.kind, `${at}.kind`, TEXT_CAP, fail, true),
      title: text(f.title, `${at}.title`, TEXT_CAP, fail),
      provider_ref: textOrNull(f.provider_ref, `${at}.provider_ref`, TEXT_CAP, fail),
      source: freeForm(f.source, `${at}.source`, fail),
      observed: textOrNull(f.observed, `${at}.observed`, TEXT_CAP, fail),
      expected: textOrNull(f.expected, `${at}.expected`, TEXT_CAP, fail),
      severity: text(f.severity, `${at}.severity`, TEXT_CAP, fail, true),
      suggested_action: textOrNull(f.suggested_action, `${at}.suggested_action`, TEXT_CAP, fail),
      payload: freeForm(f.payload, `${at}.payload`, fail),
      payload_hash: text(f.payload_hash, `${at}.payload_hash`, TEXT_CAP, fail),
      first_seen_at: textOrNull(f.first_seen_at, `${at}.first_seen_at`, TEXT_CAP, fail),
      last_seen_at: textOrNull(f.last_seen_at, `${at}.last_seen_at`, TEXT_CAP, fail),
    };
  });
  findings.sort((x, y) => cmp(x.finding_id, y.finding_id));
  return { provider, batch_id: b.batch_id as number, generated_at: generatedAt, findings };
}

type Fail = (path: string, why: string) => never;

/** `value` as an object holding exactly `fields`: a missing one is named; an extra one by position, not by name. */
function record(value: unknown, path: string, fields: readonly string[], fail: Fail): Record<string, unknown> {
  if (!isObject(value)) fail(path, 'expected an object');
  const o = value as Record<string, unknown>;
  for (const f of fields) if (!Object.hasOwn(o, f)) fail(`${path}.${f}`, 'missing');
  const keys = Object.keys(o);
  if (keys.length !== fields.length) {
    const extra = keys.findIndex((k) => !fields.includes(k));
    fail(path, `its field number ${extra + 1} is not one of ${fields.join(', ')}`);
  }
  return o;
}

/** A string of at most `cap` UTF-8 bytes (and not empty when `nonEmpty`). */
function text(value: unknown, path: string, cap: CellCap, fail: Fail, nonEmpty = false): string {
  if (typeof value !== 'string') fail(path, 'expected a string');
  const s = value as string;
  if (nonEmpty && s === '') fail(path, 'expected a non-empty string');
  const bytes = Buffer.byteLength(s);
  if (bytes > cap.bytes) fail(path, overCap(bytes, cap));
  return s;
}

function textOrNull(value: unknown, path: string, cap: CellCap, fail: Fail): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') fail(path, 'expected a string or null');
  return text(value, path, cap, fail);
}

/** A free-form object (`source`, `payload`), nested no deeper than MAX_NOTICE_DEPTH, so writing it out cannot overflow the stack. */
function freeForm(value: unknown, path: string, fail: Fail): Record<string, unknown> {
  if (!isObject(value)) fail(path, 'expected an object');
  // Depth-first without recursion: a hostile file may nest millions deep.
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > MAX_NOTICE_DEPTH) fail(path, `nests deeper than ${MAX_NOTICE_DEPTH} levels, the cap MAX_NOTICE_DEPTH (docs/limits.md)`);
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return value as Record<string, unknown>;
}

const isObject = (v: unknown): boolean => v !== null && typeof v === 'object' && !Array.isArray(v);
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
