// The `register` command line: a usage mistake gets a one-line reason and the usage text, never a stack trace.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const register = (...args: string[]) => {
  const r = spawnSync(process.execPath, [join(process.cwd(), 'bin/register.mjs'), ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stderr: r.stderr };
};

describe('register usage', () => {
  it('prints the usage and exits 0 for --help, before or after a command', () => {
    for (const args of [['--help'], ['compile', '--help'], ['serve', '-h']]) {
      const r = register(...args);
      expect(r.status, args.join(' ')).toBe(0);
      expect(r.stderr).toMatch(/^usage: register <command>/);
    }
  });

  it('refuses an unknown command with the usage and exit 2', () => {
    const r = register('complie');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^usage: register/);
  });

  it('names an unknown or incomplete option, exits 2 and prints no stack trace', () => {
    const unknown = register('compile', '--bogus');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^register compile: Unknown option '--bogus'/);
    expect(unknown.stderr).not.toMatch(/\n\s+at /);
    const missing = register('serve', '--port');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^register serve: Option '--port <value>' argument missing/);
    expect(missing.stderr).not.toMatch(/\n\s+at /);
  });
});
