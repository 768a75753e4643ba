import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { Frontier, readPartition, writePartition } from '../../src/index.js';
import { readWhole, writeWhole } from '../../src/format/file.js';
import { closeSync as closeFd, openSync as openFd } from 'node:fs';

/** Which step of the write the mocked file system fails, if any. */
const failAt = vi.hoisted(() => ({ step: '' as '' | 'write' | 'fsync' | 'rename', opened: [] as number[], closed: [] as number[] }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const fail = (step: string): void => {
    if (failAt.step === step) throw Object.assign(new Error(`injected ${step} failure`), { code: 'EIO' });
  };
  return {
    ...fs,
    openSync: ((...args: Parameters<typeof fs.openSync>) => {
      const fd = fs.openSync(...args);
      failAt.opened.push(fd);
      return fd;
    }) as typeof fs.openSync,
    closeSync: (fd: number) => {
      failAt.closed.push(fd);
      fs.closeSync(fd);
    },
    writeSync: ((...args: Parameters<typeof fs.writeSync>) => {
      fail('write');
      return fs.writeSync(...args);
    }) as typeof fs.writeSync,
    fsyncSync: (fd: number) => {
      fail('fsync');
      fs.fsyncSync(fd);
    },
    renameSync: (from: import('node:fs').PathLike, to: import('node:fs').PathLike) => {
      fail('rename');
      fs.renameSync(from, to);
    },
  };
});

/** A small partition whose bytes differ with `n`. */
function partition(n: number): Uint8Array {
  const f = new Frontier(n, 480_000);
  for (let i = 0; i < n; i++) f.seed(`https://h${i}.example/p`, `h${i}.example`, 1, 480_000, 480_000);
  return f.checkpointBytes();
}

describe('writePartition is atomic', () => {
  const dir = mkdtempSync(join(tmpdir(), 'meguri-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => {
    failAt.step = '';
    failAt.opened.length = 0;
    failAt.closed.length = 0;
  });
  const v1 = partition(2);
  const v2 = partition(3);

  it.each(['write', 'fsync', 'rename'] as const)('a %s failure leaves the previous file whole and no temp file behind', (step) => {
    const path = join(dir, `p-${step}.meguri`);
    writePartition(path, v1);
    failAt.step = step;
    failAt.opened.length = 0;
    failAt.closed.length = 0;
    expect(() => writePartition(path, v2)).toThrow(`injected ${step} failure`);
    failAt.step = '';
    // Every descriptor it opened is closed exactly once (a second close could hit another thread's file).
    expect(failAt.closed.filter((fd) => failAt.opened.includes(fd)).sort()).toEqual([...failAt.opened].sort());
    expect(readdirSync(dir).filter((f) => f.includes(`p-${step}`))).toEqual([`p-${step}.meguri`]);
    expect(new Uint8Array(readFileSync(path))).toEqual(v1);
    expect(readPartition(path).rows).toBe(2);
    // And the next write goes through.
    writePartition(path, v2);
    expect(readPartition(path).rows).toBe(3);
  });

  it('refuses a directory that does not exist without touching anything', () => {
    expect(() => writePartition(join(dir, 'missing-dir', 'x.meguri'), v1)).toThrow(/ENOENT/);
    expect(readdirSync(dir).some((f) => f.includes('.tmp'))).toBe(false);
  });
});

describe('readWhole (readPartition past readFileSync\'s 2 GiB)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'meguri-file-read-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a file in pieces of any size, byte for byte, and closes it', () => {
    // The 1 GiB pieces of a real read scaled down: 7 B pieces cross every section boundary.
    const bytes = partition(40);
    const path = join(dir, 'p.meguri');
    writePartition(path, bytes);
    for (const chunk of [1, 7, bytes.length - 1, bytes.length, bytes.length + 1]) {
      failAt.opened.length = 0;
      failAt.closed.length = 0;
      expect(new Uint8Array(readWhole(path, chunk))).toEqual(bytes);
      expect(failAt.closed).toEqual(failAt.opened);
    }
    expect(readPartition(path).rows).toBe(40);
  });

  it('writes a file in pieces of any size (writeSync refuses 2 GiB and more in one call)', () => {
    const bytes = partition(40);
    for (const chunk of [1, 7, bytes.length - 1, bytes.length + 1]) {
      const path = join(dir, `w-${chunk}.meguri`);
      const fd = openFd(path, 'w');
      writeWhole(fd, bytes, chunk);
      closeFd(fd);
      expect(new Uint8Array(readFileSync(path))).toEqual(bytes);
    }
  });
});
