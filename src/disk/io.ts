/**
 * The disk tier's file-system seam: every byte the disk tier reads or writes goes through one
 * `DiskIo`, so tests can inject ENOSPC at an exact byte and count bytes and read positions
 * (the "sequential I/O" and "bytes written per key" assertions), and nothing else in src/disk
 * touches `node:fs` for data. Synchronous on purpose: merges are large sequential batches run
 * between dispatch steps, and a sync call keeps a merge atomic with respect to the event loop.
 * The journal (src/journal) opens its file through the `DiskIo` in force too, so one seam
 * reaches every durable write a crawl makes outside the checkpoint file itself.
 */
import { closeSync, fsyncSync, ftruncateSync, linkSync, openSync, readSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { DiskFullError } from '../errors/index.js';

/** The file operations the disk tier uses. Every method may throw the `node:fs` error. */
export interface DiskIo {
  /** Opens `path` with node:fs `flags` ('r', 'r+', 'w', 'a+'…); returns a descriptor. */
  open(path: string, flags: string): number;
  /** Writes `length` bytes of `buf` from `offset` at file `position`; returns bytes written. */
  write(fd: number, buf: Uint8Array, offset: number, length: number, position: number): number;
  /** Reads up to `length` bytes at `position` into `buf` at `offset`; returns bytes read. */
  read(fd: number, buf: Uint8Array, offset: number, length: number, position: number): number;
  fsync(fd: number): void;
  close(fd: number): void;
  rename(from: string, to: string): void;
  /**
   * Makes `path` a hard link to `existing` (EEXIST when `path` exists). Optional: without it
   * (an implementation written before it, a file system without links) the data directory's
   * lock is created exclusively and then written.
   */
  link?(existing: string, path: string): void;
  /** Shrinks (or extends with zeros) the file to `length` bytes. */
  truncate(fd: number, length: number): void;
}

/** The real file system. */
export const nodeIo: DiskIo = {
  open: (path, flags) => openSync(path, flags),
  write: (fd, buf, offset, length, position) => writeSync(fd, buf, offset, length, position),
  read: (fd, buf, offset, length, position) => readSync(fd, buf, offset, length, position),
  fsync: (fd) => fsyncSync(fd),
  close: (fd) => closeSync(fd),
  rename: (from, to) => renameSync(from, to),
  link: (existing, path) => linkSync(existing, path),
  truncate: (fd, length) => ftruncateSync(fd, length),
};

let inForce: DiskIo = nodeIo;

/**
 * Internal test seam: the `DiskIo` a disk tier opened without its own `diskIo` writes through,
 * and every journal opened while it is in force (default the real file system; `undefined`
 * restores it). It reaches tiers and journals the Engine and the CLI open, which take no
 * `DiskIo` option, so a test can inject ENOSPC at a chosen write of a whole crawl
 * (test/engine/disk-full.test.ts). Not exported from the package.
 */
export function setDiskIo(io: DiskIo | undefined): void {
  inForce = io ?? nodeIo;
}

/** The `DiskIo` in force for tiers opened without their own (see `setDiskIo`). */
export function diskIoInForce(): DiskIo {
  return inForce;
}

/** Whether `err` is the file system saying the device or quota is full. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * Bytes one `write` or `read` call asks for: node's writeSync and readSync refuse lengths of
 * 2 GiB and more, and a first row run at 10⁸ URLs (issue 20) is ~3.6 GB. Keep in sync with
 * src/format/file.ts's IO_CHUNK (the .meguri file's own reader and writer).
 */
export const IO_PIECE = 1 << 30;

/**
 * Opens `path` to create (or truncate) it; ENOSPC or EDQUOT (a device out of space or inodes, a
 * quota) becomes `DiskFullError`, as a write's does: before, a full device met while creating a
 * segment, a row run, a log or the manifest was a plain error (the crawl exited 1, not 4, with
 * no "free space" hint).
 */
export function openToWrite(io: DiskIo, path: string, flags: 'w' | 'w+'): number {
  try {
    return io.open(path, flags);
  } catch (err) {
    if (isDiskFull(err)) throw new DiskFullError(path, 'the device or quota is full (creating the file)', { cause: err });
    throw err;
  }
}

/** Writes all of `buf[0, length)` at `position` of `path`'s descriptor; ENOSPC becomes `DiskFullError`. */
export function writeFully(io: DiskIo, fd: number, path: string, buf: Uint8Array, length: number, position: number): void {
  let off = 0;
  try {
    while (off < length) off += io.write(fd, buf, off, Math.min(IO_PIECE, length - off), position + off);
  } catch (err) {
    if (isDiskFull(err)) throw new DiskFullError(path, `${length - off} of ${length} bytes unwritten at offset ${position + off}`, { cause: err });
    throw err;
  }
}

/** fsync that turns a late ENOSPC (delayed allocation) into `DiskFullError` too. */
export function syncFully(io: DiskIo, fd: number, path: string): void {
  try {
    io.fsync(fd);
  } catch (err) {
    if (isDiskFull(err)) throw new DiskFullError(path, 'fsync reported the device full', { cause: err });
    throw err;
  }
}

/**
 * fsyncs directory `dir`, which makes a rename or a file creation in it durable (the file's own
 * fsync covers its bytes, not its name). A platform that cannot open or fsync a directory is left
 * as it is: the name is as durable as it allows.
 */
export function syncDirectory(io: DiskIo, dir: string): void {
  let fd: number | undefined;
  try {
    fd = io.open(dir, 'r');
    io.fsync(fd);
  } catch {
    // Some platforms cannot open or fsync a directory.
  } finally {
    if (fd !== undefined) io.close(fd);
  }
}

/**
 * Replaces the file at `path` with `bytes` atomically and durably: written to `<path>.tmp`,
 * fsynced, renamed over `path`, and the directory fsynced — a crash leaves the old file or the
 * new one, never an empty or torn one (without the fsyncs a power loss after the rename can
 * leave the name pointing at no data). ENOSPC becomes `DiskFullError` naming the temp file.
 */
export function replaceFileDurably(io: DiskIo, path: string, bytes: Uint8Array): void {
  const tmp = `${path}.tmp`;
  const fd = openToWrite(io, tmp, 'w');
  try {
    writeFully(io, fd, tmp, bytes, bytes.length, 0);
    syncFully(io, fd, tmp);
  } finally {
    io.close(fd);
  }
  io.rename(tmp, path);
  syncDirectory(io, dirname(path));
}

/** Reads exactly `length` bytes at `position`; returns how many were available (short at end of file). */
export function readFully(io: DiskIo, fd: number, buf: Uint8Array, length: number, position: number): number {
  let off = 0;
  while (off < length) {
    const n = io.read(fd, buf, off, Math.min(IO_PIECE, length - off), position + off);
    if (n === 0) break;
    off += n;
  }
  return off;
}

/** Counters a `CountingIo` keeps: the figures the complexity tests and the benchmark assert. */
export interface IoCounters {
  bytesWritten: number;
  bytesRead: number;
  writes: number;
  reads: number;
  fsyncs: number;
  /** Reads that did not start where the previous read of the same descriptor ended. */
  seeks: number;
}

/**
 * Wraps a `DiskIo`, counting bytes, calls and non-sequential reads; `failWritesAfter` (bytes)
 * makes every write past that budget throw an ENOSPC error, as a full disk would.
 */
export class CountingIo implements DiskIo {
  readonly counters: IoCounters = { bytesWritten: 0, bytesRead: 0, writes: 0, reads: 0, fsyncs: 0, seeks: 0 };
  /** Bytes of writes still allowed before ENOSPC; Infinity = never fail. */
  failWritesAfter = Infinity;
  /** Opens that create a file ('w', 'w+') throw ENOSPC, as on a device out of space or inodes: all of them, or those whose path matches. */
  failCreates: boolean | RegExp = false;
  /** Hard links fail with EPERM, as on a file system without them (some network and FUSE mounts). */
  failLinks = false;
  private readonly nextRead = new Map<number, number>();

  constructor(private readonly inner: DiskIo = nodeIo) {}

  open(path: string, flags: string): number {
    const fails = this.failCreates instanceof RegExp ? this.failCreates.test(path) : this.failCreates;
    if (fails && (flags === 'w' || flags === 'w+')) throw Object.assign(new Error(`ENOSPC: no space left on device, open '${path}'`), { code: 'ENOSPC', syscall: 'open' });
    const fd = this.inner.open(path, flags);
    this.nextRead.delete(fd);
    return fd;
  }

  write(fd: number, buf: Uint8Array, offset: number, length: number, position: number): number {
    if (length > this.failWritesAfter) {
      // A full disk accepts what fits, then refuses: write the part that fits, then fail.
      const fit = Math.max(0, Math.floor(this.failWritesAfter));
      if (fit > 0) {
        this.failWritesAfter = 0;
        const n = this.inner.write(fd, buf, offset, fit, position);
        this.counters.bytesWritten += n;
        return n;
      }
      const err = new Error('ENOSPC: no space left on device, write') as Error & { code: string };
      err.code = 'ENOSPC';
      throw err;
    }
    const n = this.inner.write(fd, buf, offset, length, position);
    this.failWritesAfter -= n;
    this.counters.bytesWritten += n;
    this.counters.writes++;
    return n;
  }

  read(fd: number, buf: Uint8Array, offset: number, length: number, position: number): number {
    const expected = this.nextRead.get(fd);
    if (expected !== undefined && expected !== position) this.counters.seeks++;
    const n = this.inner.read(fd, buf, offset, length, position);
    this.nextRead.set(fd, position + n);
    this.counters.bytesRead += n;
    this.counters.reads++;
    return n;
  }

  fsync(fd: number): void {
    this.counters.fsyncs++;
    this.inner.fsync(fd);
  }

  close(fd: number): void {
    this.nextRead.delete(fd);
    this.inner.close(fd);
  }

  rename(from: string, to: string): void {
    this.inner.rename(from, to);
  }

  link(existing: string, path: string): void {
    if (this.failLinks || this.inner.link === undefined) throw Object.assign(new Error(`EPERM: operation not permitted, link '${existing}' -> '${path}'`), { code: 'EPERM', syscall: 'link' });
    this.inner.link(existing, path);
  }

  truncate(fd: number, length: number): void {
    // A truncated file is read again from its start: a new pass, not a seek.
    this.nextRead.delete(fd);
    this.inner.truncate(fd, length);
  }
}
