/**
 * Output directories the file system will not create (issue 23, finding 4): Node 20's
 * recursive mkdir spins at 100 % CPU on /proc, deaf to Ctrl-C. Each flag is checked with
 * non-recursive calls before anything runs and refused with exit 2 and the reason. Run as
 * child processes (a spinning mkdir would hang an in-process test), each given 20 s.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AGENT, STACK_LINE, startCli } from './helpers.js';

async function within(args: string[], ms = 20_000) {
  const run = startCli(args);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), ms);
  try {
    return await run.done;
  } finally {
    clearTimeout(timer);
  }
}

describe('output directories that cannot be created', () => {
  const dir = mkdtempSync(join(tmpdir(), 'meguri-cli-dirs-'));
  const file = join(dir, 'a-file');
  writeFileSync(file, 'x');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cases: [string, string[], RegExp][] = [
    ['crawl --data under /proc', ['crawl', 'http://a.test/', '--data', '/proc/meguri-test/data', '--agent', AGENT], /^meguri: --data: cannot create directory "\/proc\/meguri-test\/data": this file system does not allow creating a directory here \(ENOENT\) at \/proc\/meguri-test$/m],
    ['crawl --warc under /proc', ['crawl', 'http://a.test/', '--data', join(dir, 'd1'), '--warc', '/proc/meguri-warc', '--agent', AGENT], /^meguri: --warc: cannot create directory "\/proc\/meguri-warc": this file system does not allow creating a directory here \(ENOENT\)$/m],
    ['demo --out under /proc', ['demo', '--out', '/proc/meguri-demo'], /^meguri: --out: cannot create directory "\/proc\/meguri-demo": this file system does not allow creating a directory here \(ENOENT\)$/m],
    ['crawl --data below a file', ['crawl', 'http://a.test/', '--data', join(file, 'sub'), '--agent', AGENT], /^meguri: --data: cannot create directory ".*a-file\/sub": not a directory \(ENOTDIR\) at .*a-file$/m],
    ['demo --out FILE (as crawl --data FILE)', ['demo', '--out', file], /^meguri: --out: ".*a-file" is a file, expected a directory$/m],
  ];
  it.each(cases)('%s: exit 2 with the reason, nothing created', async (_name, args, message) => {
    const r = await within(args);
    expect(r.signal, 'killed: the command hung').toBeNull();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(STACK_LINE);
    expect(existsSync(join(dir, 'd1'))).toBe(false);
  });
});
