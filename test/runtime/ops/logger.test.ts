// The access log's writer: a line in pino's format (the one failure lines keep), lines written together within a
// fraction of a second on a quiet server too (not left waiting for a buffer to fill), and a pipe's reader that
// falls behind costing no line.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger, type AccessEntry } from '../../../runtime/ops/logger.ts';

const dir = mkdtempSync(join(tmpdir(), 'ir-logger-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const entry = (i: number): AccessEntry => ({
  method: 'GET', path: `/api/v1/entities/"odd\u2028${i}`, route: '/entities/{reep_id}', status: 200, duration_ms: 0.125, bytes: 1234, key_id: i % 2 ? null : 'ab12cd34', request_id: `r-${i}`,
  ...(i % 3 ? {} : { error: 'internal_error' }),
});
const lines = (file: string): string[] => readFileSync(file, 'utf8').split('\n').filter(Boolean);
const withoutTime = (line: string) => line.replace(/"time":"[^"]+"/, '"time":""');

describe('access log', () => {
  it("writes pino's line for the same fields, and a quiet server's lines within half a second", async () => {
    const ours = join(dir, 'ours.log');
    const theirs = join(dir, 'pino.log');
    const log = createLogger({ destination: ours });
    const reference = pino({ base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (l) => ({ level: l }) } }, pino.destination({ dest: theirs, sync: true }));
    for (let i = 0; i < 200; i++) {
      log.access(entry(i));
      const { error, ...rest } = entry(i);
      reference.info(error === undefined ? rest : { ...rest, error });
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(lines(ours).map(withoutTime)).toEqual(lines(theirs).map(withoutTime));
    log.error({ event: 'artefact_corrupt', file: 'x.pack' }, '[serve] artefact_corrupt: x.pack');
    await new Promise<void>((r) => log.flush(r));
    expect(JSON.parse(lines(ours).at(-1)!)).toMatchObject({ level: 'error', event: 'artefact_corrupt', file: 'x.pack', msg: '[serve] artefact_corrupt: x.pack' });
  });

  it('keeps every line when the pipe it writes to is full, and writes them once its reader catches up', async () => {
    // A child that holds its stdin (the pipe) unread for a while, then counts the lines.
    const child = spawn(process.execPath, ['-e', "setTimeout(() => { let n = 0, rest = ''; process.stdin.on('data', (d) => { const t = rest + d; const parts = t.split('\\n'); rest = parts.pop(); n += parts.length; }); process.stdin.on('end', () => console.log(n)); }, 300)"], { stdio: ['pipe', 'pipe', 'inherit'] });
    const fd = (child.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    const log = createLogger({ destination: fd });
    // ~2.5 MB: more than a pipe's buffer, so writes meet EAGAIN until the child reads.
    for (let i = 0; i < 10_000; i++) log.access(entry(i));
    await new Promise<void>((r) => log.flush(r));
    const counted = new Promise<string>((r) => child.stdout.on('data', (d: Buffer) => r(d.toString().trim())));
    child.stdin.end();
    expect(await counted).toBe('10000');
  }, 20_000);
});
