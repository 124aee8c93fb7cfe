// Framing of the state journal and snapshot: one record per line, `<crc32 as 8 hex> <json>\n`, so a torn or
// corrupt record is recognised on recovery and everything before it is kept.

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE, as zlib) of `bytes`. Written out because zlib.crc32 only exists from Node 20.15. */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** One framed line for `value` (JSON.stringify never writes a raw newline, so the line ends where the record does). */
export function frameRecord(value: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(value), 'utf8');
  const out = Buffer.allocUnsafe(json.length + 10);
  out.write(crc32(json).toString(16).padStart(8, '0'), 0, 'latin1');
  out[8] = 0x20;
  json.copy(out, 9);
  out[out.length - 1] = 0x0a;
  return out;
}

/** Result of scanning framed records. */
export interface ScanResult {
  records: unknown[];
  /** Bytes of complete, valid records from the start; everything after is a torn or corrupt tail. */
  goodBytes: number;
  /** Whether the dropped tail holds more than one line (a sign of corruption rather than a torn last write). */
  tailHasMoreLines: boolean;
}

/** Reads complete, valid records from the start of `buf`, stopping at the first torn or corrupt one. */
export function scanRecords(buf: Buffer): ScanResult {
  const records: unknown[] = [];
  let off = 0;
  while (off < buf.length) {
    const nl = buf.indexOf(0x0a, off);
    if (nl < 0) break;
    const value = parseLine(buf, off, nl);
    if (value === undefined) break;
    records.push(value);
    off = nl + 1;
  }
  const next = buf.indexOf(0x0a, off);
  return { records, goodBytes: off, tailHasMoreLines: next >= 0 && next + 1 < buf.length };
}

function parseLine(buf: Buffer, start: number, nl: number): unknown {
  if (nl - start < 10 || buf[start + 8] !== 0x20) return undefined;
  const hex = buf.toString('latin1', start, start + 8);
  if (!/^[0-9a-f]{8}$/.test(hex)) return undefined;
  if (parseInt(hex, 16) !== crc32(buf, start + 9, nl)) return undefined;
  try {
    return JSON.parse(buf.toString('utf8', start + 9, nl));
  } catch {
    return undefined;
  }
}
