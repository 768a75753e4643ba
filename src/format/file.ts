/**
 * The Node-only half of src/format: reading and atomically writing `.meguri` files.
 *
 * A write goes to a temporary file beside the target, is fsynced, renamed over the target
 * and the directory is fsynced, so a crash leaves either the old file or the new one, never
 * a torn mix (the rename is atomic on POSIX file systems). `ensureDirectory` makes the
 * directories such files live in without Node's recursive mkdir, and `syncFile` makes another
 * process's appends to a file durable. Exported from
 * `src/index.ts` only; the byte codec in `./partition.ts` stays browser-safe.
 */
import { closeSync, copyFileSync, existsSync, fdatasyncSync, fstatSync, fsyncSync, linkSync, mkdirSync, openSync, readSync, readdirSync, renameSync, rmSync, rmdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, basename, join, resolve } from 'node:path';
import { type PartitionImage, decodePartition, encodePartition } from './partition.js';
import { CorruptPartitionError } from '../errors/index.js';

let tempCounter = 0;

const codeOf = (err: unknown): unknown => (err as { code?: unknown } | null)?.code;

/**
 * Makes `prev` the file `path` is now, before a new `path` is renamed over it: a hard link (no
 * bytes copied; the old contents live on under `prev` once the rename replaces `path`), or a
 * copy on a file system without links. Best effort — on any failure `prev` is removed and false
 * returned: a checkpoint's previous copy is a fallback, never a reason not to checkpoint. The
 * engine's data directory and the URLFrontier store both keep their previous checkpoint so.
 */
export function keepPreviousFile(path: string, prev: string): boolean {
  try {
    rmSync(prev, { force: true });
    if (!existsSync(path)) return false;
    try {
      linkSync(path, prev);
    } catch {
      copyFileSync(path, prev);
    }
    return true;
  } catch {
    rmSync(prev, { force: true });
    return false;
  }
}

/**
 * Creates directory `path` and its missing parents, one non-recursive `mkdir` per level,
 * and throws the first system error (naming the path) — `ENOTDIR` when a parent is a file.
 *
 * Why not `mkdirSync(path, { recursive: true })`: on Node 20 it retries forever, at 100 %
 * CPU and deaf to Ctrl-C, where a file system answers `mkdir` with ENOENT although the
 * parent exists — /proc and /sys do (issue 23: `--data /proc/x`). Here that answer is an
 * error at once, worded for what it is.
 */
export function ensureDirectory(path: string): void {
  walkDirectory(path, false);
}

/**
 * fdatasyncs the file at `path`, written by an earlier process, when it exists (true then): its
 * appended bytes may still be in the page cache. Cost: one fdatasync (nothing when clean).
 */
export function syncFile(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if (codeOf(err) === 'ENOENT') return false;
    throw err;
  }
  try {
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Why `ensureDirectory(path)` would fail, found without leaving anything behind: the
 * nearest existing ancestor must be a directory, and the first missing level is created and
 * removed again (one non-recursive probe). Undefined when `path` is, or can be made, a
 * directory. For validating a flag before anything runs.
 */
export function directoryProblem(path: string): string | undefined {
  try {
    walkDirectory(path, true);
    return undefined;
  } catch (err) {
    const m = err instanceof Error ? /^(E[A-Z]+): ([^,]+)(?:, \w+ '(.*)')?/.exec(err.message) : null;
    if (m === null) return err instanceof Error ? err.message : String(err);
    return `${m[2]} (${m[1]})${m[3] !== undefined && m[3] !== resolve(path) ? ` at ${m[3]}` : ''}`;
  }
}

function walkDirectory(path: string, probe: boolean): void {
  const missing: string[] = [];
  let at = resolve(path);
  for (;;) {
    let isDir: boolean;
    try {
      isDir = statSync(at).isDirectory();
    } catch (err) {
      // ENOTDIR: some ancestor is a file; walking up finds which, to name it.
      if (codeOf(err) !== 'ENOENT' && codeOf(err) !== 'ENOTDIR') throw err;
      const up = dirname(at);
      if (up === at) throw err;
      missing.push(at);
      at = up;
      continue;
    }
    if (!isDir) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${at}'`), { code: 'ENOTDIR', syscall: 'mkdir', path: at });
    break;
  }
  for (let i = missing.length - 1; i >= 0; i--) {
    const dir = missing[i]!;
    try {
      mkdirSync(dir);
      if (probe) {
        rmdirSync(dir);
        return;
      }
    } catch (err) {
      const code = codeOf(err);
      if (code === 'EEXIST' && statSync(dir).isDirectory()) continue; // made by someone else meanwhile
      if (code === 'ENOENT') {
        // The parent exists (made or found just above): the file system refuses directories here.
        throw Object.assign(new Error(`ENOENT: this file system does not allow creating a directory here, mkdir '${dir}'`), { code, syscall: 'mkdir', path: dir });
      }
      throw err;
    }
  }
}

/** Whether process `pid` is alive (signal 0 probes without signalling; EPERM means it exists). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return codeOf(err) === 'EPERM';
  }
}

/**
 * Removes the temp files a killed writer left beside `path` (`.<name>.<pid>.<n>.tmp` of a
 * process no longer alive); returns their paths. Temp files of this process or of a live
 * one are never touched, so it is safe without holding any lock. Run by every
 * `writePartition`, so a checkpoint after a kill -9 (the engine writes one on open) tidies
 * up the previous run's.
 */
export function removeStaleTemps(path: string): string[] {
  const dir = dirname(path);
  const prefix = `.${basename(path)}.`;
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const m = /^(\d+)\.\d+\.tmp$/.exec(name.slice(prefix.length));
    if (m === null) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || alive(pid)) continue;
    try {
      unlinkSync(join(dir, name));
      removed.push(join(dir, name));
    } catch {
      // gone already, or not ours to remove: leave it
    }
  }
  return removed;
}

/**
 * Writes a partition to `path` atomically (temp file, fsync, rename, directory fsync).
 * `partition` is an image or already-encoded bytes (e.g. `Frontier#checkpointBytes()`).
 * Returns the number of bytes written. Temp files of writers killed earlier are removed
 * first (`removeStaleTemps`).
 */
export function writePartition(path: string, partition: PartitionImage | Uint8Array): number {
  const bytes = partition instanceof Uint8Array ? partition : encodePartition(partition);
  const dir = dirname(path);
  removeStaleTemps(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${tempCounter++}.tmp`);
  const fd = openSync(temp, 'w', 0o644);
  let open = true;
  let renamed = false;
  try {
    writeWhole(fd, bytes);
    fsyncSync(fd);
    open = false;
    closeSync(fd);
    renameSync(temp, path);
    renamed = true;
  } finally {
    if (!renamed) {
      // Close only if still ours: worker threads share the fd table, so closing a number
      // twice could close a file another thread opened in between.
      if (open) {
        try {
          closeSync(fd);
        } catch {
          // nothing more to release
        }
      }
      try {
        unlinkSync(temp);
      } catch {
        // nothing to clean
      }
    }
  }
  // Make the rename itself durable. Some platforms cannot open a directory; the data is
  // already safe on disk there, only the name may lag.
  try {
    const dfd = openSync(dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    // directory fsync unsupported
  }
  return bytes.length;
}

/**
 * Writes all of `bytes` to `fd` in pieces of at most `chunk` bytes: `writeSync` refuses a
 * length over 2³¹ − 1 (ERR_OUT_OF_RANGE), and the Engine's checkpoint of a budgeted frontier of
 * 10⁸ URLs over 10⁶ hosts was 3.6 GB (29 M resident rows; issue 20's run).
 */
export function writeWhole(fd: number, bytes: Uint8Array, chunk = IO_CHUNK): void {
  let at = 0;
  while (at < bytes.length) at += writeSync(fd, bytes, at, Math.min(chunk, bytes.length - at));
}

/**
 * Reads and validates the partition at `path`. Throws `CorruptPartitionError` for a damaged
 * file (see `decodePartition`); file-system errors propagate as Node raised them.
 */
export function readPartition(path: string): PartitionImage {
  return decodePartition(readWhole(path));
}

/** Bytes a single `readSync` or `writeSync` asks for (they refuse lengths of 2 GiB and more). */
const IO_CHUNK = 1 << 30;

/**
 * The whole file at `path`, read in pieces of at most `chunk` bytes. `readFileSync` refuses
 * files over 2 GiB (ERR_FS_FILE_TOO_LARGE), and a budgeted frontier's checkpoint of 10⁸ URLs
 * over 10⁶ hosts holds ~2 GiB of resident rows (issue 20); a Buffer may hold up to 4 GiB.
 * A file that shrinks while being read throws rather than returning zeros.
 */
export function readWhole(path: string, chunk = IO_CHUNK): Buffer {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    while (at < size) {
      const n = readSync(fd, out, at, Math.min(chunk, size - at), at);
      if (n === 0) throw new CorruptPartitionError('file', `${path} ended at byte ${at} of the ${size} it had when opened`);
      at += n;
    }
    return out;
  } finally {
    closeSync(fd);
  }
}
