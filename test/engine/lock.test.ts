/**
 * Taking a data directory's lock: the lock appears with its pid in it (written to a file of its
 * own, then hard-linked), a full device is a `DiskFullError` that leaves nothing behind, and of
 * processes starting together on one directory exactly one holds it.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CountingIo, setDiskIo } from '../../src/disk/io.js';
import { DataDir, breakStaleLock } from '../../src/engine/datadir.js';
import { DiskFullError } from '../../src/errors/index.js';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'meguri-lock-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => setDiskIo(undefined));

const openFds = (): number => readdirSync('/proc/self/fd').length;
/** A pid no process has (pid_max is at most 2²² on Linux). */
const DEAD_PID = 4_194_999;

describe('DataDir.lock', () => {
  it('writes the pid before the lock exists, and leaves no file of its own beside it', () => {
    const dir = join(root, 'plain');
    const d = new DataDir(dir);
    d.lock();
    expect(readFileSync(join(dir, 'lock'), 'utf8')).toBe(`${process.pid}\n`);
    expect(readdirSync(dir)).toEqual(['lock']);
    d.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a device out of space or inodes when creating the lock is DiskFullError; nothing is left and no descriptor leaks', () => {
    const dir = join(root, 'full-create');
    mkdirSync(dir);
    const io = new CountingIo();
    io.failCreates = /\.lock\./;
    setDiskIo(io);
    const fds = openFds();
    expect(() => new DataDir(dir).lock()).toThrow(DiskFullError);
    expect(openFds()).toBe(fds);
    expect(readdirSync(dir)).toEqual([]);
    setDiskIo(undefined);
    const d = new DataDir(dir);
    d.lock();
    expect(readFileSync(join(dir, 'lock'), 'utf8')).toBe(`${process.pid}\n`);
    d.release();
  });

  it('a full device when writing the pid is DiskFullError; the descriptor is closed and no empty lock is left', () => {
    const dir = join(root, 'full-write');
    mkdirSync(dir);
    const io = new CountingIo();
    io.failWritesAfter = 0;
    setDiskIo(io);
    const fds = openFds();
    let thrown: unknown;
    try {
      new DataDir(dir).lock();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(DiskFullError);
    expect(openFds()).toBe(fds);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('on a file system without hard links the lock is created exclusively and written; a held one is still refused', () => {
    const dir = join(root, 'no-links');
    mkdirSync(dir);
    const io = new CountingIo();
    io.failLinks = true;
    setDiskIo(io);
    const d = new DataDir(dir);
    d.lock();
    expect(readFileSync(join(dir, 'lock'), 'utf8')).toBe(`${process.pid}\n`);
    expect(readdirSync(dir)).toEqual(['lock']);
    d.release();
    writeFileSync(join(dir, 'lock'), `${process.ppid}\n`);
    expect(() => new DataDir(dir).lock()).toThrow(/in use by process/);
    expect(readFileSync(join(dir, 'lock'), 'utf8')).toBe(`${process.ppid}\n`);
  });

  it('a stale lock is broken under the guard; one that names a live process when read there is kept', () => {
    const dir = join(root, 'stale');
    mkdirSync(dir);
    const lock = join(dir, 'lock');
    writeFileSync(lock, `${DEAD_PID}\n`);
    const d = new DataDir(dir);
    d.lock();
    expect(readFileSync(lock, 'utf8')).toBe(`${process.pid}\n`);
    d.release();
    // The moment between reading a dead holder's pid and breaking its lock, as a second process
    // sees it when another has just broken the same stale lock and taken it: read again under
    // the guard, the lock names a live process and is kept.
    const mine = join(dir, `.lock.${process.pid}.tmp`);
    writeFileSync(mine, `${process.pid}\n`);
    writeFileSync(lock, `${process.ppid}\n`);
    expect(() => breakStaleLock(lock, mine)).toThrow(/in use by process/);
    expect(readFileSync(lock, 'utf8')).toBe(`${process.ppid}\n`);
    expect(readdirSync(dir).sort()).toEqual([`.lock.${process.pid}.tmp`, 'lock']);
    writeFileSync(lock, `${DEAD_PID}\n`);
    expect(breakStaleLock(lock, mine)).toBe(true);
    expect(readdirSync(dir)).toEqual([`.lock.${process.pid}.tmp`]);
  });

  it('while another live process holds the guard nothing is broken; a guard a killed breaker left is removed', () => {
    const dir = join(root, 'guard');
    mkdirSync(dir);
    const lock = join(dir, 'lock');
    writeFileSync(lock, `${DEAD_PID}\n`);
    writeFileSync(join(dir, 'lock.break'), `${process.ppid}\n`);
    expect(() => new DataDir(dir).lock()).toThrow(/could not lock/);
    expect(readFileSync(lock, 'utf8')).toBe(`${DEAD_PID}\n`);
    writeFileSync(join(dir, 'lock.break'), `${DEAD_PID}\n`);
    const d = new DataDir(dir);
    d.lock();
    expect(readFileSync(lock, 'utf8')).toBe(`${process.pid}\n`);
    expect(readdirSync(dir)).toEqual(['lock']);
    d.release();
  });

  it('release removes the lock only while it names this process', () => {
    const dir = join(root, 'release');
    const d = new DataDir(dir);
    d.lock();
    // removed by hand and taken by another process since
    writeFileSync(join(dir, 'lock'), `${process.ppid}\n`);
    d.release();
    expect(readFileSync(join(dir, 'lock'), 'utf8')).toBe(`${process.ppid}\n`);
  });

  it('a lock file left by a killed process taking the lock is removed by the next holder; a live one is left', () => {
    const dir = join(root, 'leftover');
    mkdirSync(dir);
    writeFileSync(join(dir, `.lock.${DEAD_PID}.tmp`), `${DEAD_PID}\n`);
    writeFileSync(join(dir, `.lock.${process.ppid}.tmp`), `${process.ppid}\n`);
    const d = new DataDir(dir);
    d.lock();
    expect(readdirSync(dir).sort()).toEqual([`.lock.${process.ppid}.tmp`, 'lock']);
    d.release();
  });

  it('of eight processes starting together on a directory with a stale lock, exactly one holds it (2 rounds)', async () => {
    // Each child loads, says 'ready', and tries the lock on 'go' (sent to all at once when all
    // are ready); the holder keeps it until 'done', sent once every child answered — so a late
    // starter cannot take a lock released meanwhile and be counted as a second holder.
    const script = `
      const { DataDir } = await import(${JSON.stringify(new URL('../../src/engine/datadir.ts', import.meta.url).pathname)});
      const d = new DataDir(process.argv[1]);
      process.on('message', (m) => {
        if (m === 'go') {
          try { d.lock(); } catch { console.log('refused'); process.disconnect(); return; }
          console.log('held');
        } else if (m === 'done') { d.release(); process.disconnect(); }
      });
      console.log('ready');
    `;
    for (let round = 0; round < 2; round++) {
      const dir = join(root, `race-${round}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'lock'), `${DEAD_PID}\n`);
      const children = Array.from({ length: 8 }, () => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dir], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
        const lines: string[] = [];
        let buf = '';
        child.stdout!.on('data', (b: Buffer) => {
          buf += b.toString();
          const parts = buf.split('\n');
          buf = parts.pop()!;
          lines.push(...parts);
        });
        return { child, lines, closed: new Promise<void>((resolve) => child.on('close', () => resolve())) };
      });
      const waitFor = async (ok: () => boolean): Promise<void> => {
        for (let i = 0; i < 6000 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
      };
      await waitFor(() => children.every((c) => c.lines.includes('ready')));
      for (const c of children) c.child.send('go', () => undefined);
      await waitFor(() => children.every((c) => c.lines.length >= 2));
      const answers = children.map((c) => c.lines[1]);
      for (const c of children) if (c.child.connected) c.child.send('done', () => undefined); // a refused child may be gone
      await Promise.all(children.map((c) => c.closed));
      expect(answers.filter((a) => a === 'held')).toHaveLength(1);
      expect(answers.filter((a) => a === 'refused')).toHaveLength(7);
    }
  }, 120_000);
});
