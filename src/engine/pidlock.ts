/**
 * A directory's pid lock: one file naming the process that holds the directory, so two
 * processes never write it together. Owns the lock's protocol — how the file is placed, how a
 * stale one (its process dead) is broken, how it is released — for every directory that has
 * one: the crawl's data directory (`DataDir`) and a URLFrontier server's (`urlfrontier.lock`).
 * Never: what the directory holds, or what a holder may do in it.
 *
 * The pid is written to `.<name>.<pid>.tmp` and hard-linked as `<name>` (EEXIST: held), so the
 * lock never exists without its pid: created empty and then written, a second process starting
 * in between read no pid, took the lock for a dead one's and broke it, and both wrote the
 * directory. A stale lock is broken under a guard, `<name>.break`, placed the same way:
 * breakers take turns, and each reads the lock's pid again under the guard before removing it.
 * A file system without hard links gets each file created exclusively and then written.
 */
import { readFileSync, readdirSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { diskIoInForce, isDiskFull, openToWrite, writeFully } from '../disk/io.js';
import { DiskFullError, InvalidStateError } from '../errors/index.js';

/** The guard stale-lock breakers take turns under: `<name>.break` (see `breakStaleLock`). */
const GUARD_SUFFIX = '.break';
/** Tries at taking the lock, `RETRY_MS` apart while another process breaks a stale one. */
const ATTEMPTS = 200;
const RETRY_MS = 5;

/**
 * Whether process `pid` is alive (signal 0 probes without sending anything). A zombie — killed,
 * not yet reaped by its parent — answers signal 0 but holds nothing: where /proc says so (Linux),
 * it is dead. (Seen for real: a crawl killed -9 under a parent that never reaps, as a container
 * whose PID 1 is a shell, left its lock "in use" by the zombie for as long as the parent lived.)
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
  const state = procState(pid);
  return state !== 'Z' && state !== 'X' && state !== 'x';
}

/** The state letter of `/proc/<pid>/stat` (after the command name, which may hold spaces and parentheses); '' where unreadable. */
function procState(pid: number): string {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return '';
  }
  const end = stat.lastIndexOf(')');
  return stat.slice(end + 2, end + 3);
}

/** The error a lock held by live process `pid` gives, `who` naming the directory's user ("Engine"). */
function inUse(who: string, dir: string, lock: string, pid: number): InvalidStateError {
  return new InvalidStateError(`${who}: ${JSON.stringify(dir)} is in use by process ${pid} (remove ${lock} if that is wrong)`);
}

/** Throws the error `takePidLock` would when a live process other than this one holds `dir`'s lock `name`. */
export function checkPidLock(dir: string, name: string, who: string): void {
  const lock = join(dir, name);
  const pid = readPid(lock);
  if (pid !== undefined && pid !== process.pid && processAlive(pid)) throw inUse(who, dir, lock, pid);
}

/**
 * Takes lock `name` in existing directory `dir` (a stale one is broken); returns its path.
 * Leftover pid files of dead processes' attempts are removed once it is held.
 *
 * @throws InvalidStateError when a live process holds it (or keeps holding the guard).
 * @throws DiskFullError when the device or quota is full.
 */
export function takePidLock(dir: string, name: string, who: string): string {
  const path = join(dir, name);
  const mine = join(dir, `.${name}.${process.pid}.tmp`);
  writePidFile(mine, 'w');
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        placeLock(mine, path);
        removeDeadAttempts(dir, name);
        return path;
      } catch (err) {
        if (isDiskFull(err)) throw new DiskFullError(path, 'the device or quota is full (taking the lock)', { cause: err });
        if ((err as { code?: string }).code !== 'EEXIST') throw err;
        checkPidLock(dir, name, who);
        // Found stale: broken under the guard, or another process is breaking it — wait a moment.
        if (!breakStaleLock(path, mine, who)) sleepSync(RETRY_MS);
      }
    }
  } finally {
    unlinkQuietly(mine);
  }
  throw new InvalidStateError(
    `${who}: could not lock ${JSON.stringify(dir)}: ${path}${GUARD_SUFFIX} names a live process breaking a stale lock (remove it if no meguri process is starting there)`,
  );
}

/** Releases a lock this process took: removed only while it names this process (one removed by hand and taken by another since is that process's). */
export function releasePidLock(path: string): void {
  if (readPid(path) === process.pid) unlinkQuietly(path);
}

/** Removes `.<name>.<pid>.tmp` files of dead processes (a kill between writing and linking leaves one); a live process's is its own. */
function removeDeadAttempts(dir: string, name: string): void {
  const prefix = `.${name}.`;
  for (const file of readdirSync(dir)) {
    if (!file.startsWith(prefix) || !file.endsWith('.tmp')) continue;
    const pid = Number(file.slice(prefix.length, -'.tmp'.length));
    if (Number.isInteger(pid) && pid > 0 && !processAlive(pid)) unlinkQuietly(join(dir, file));
  }
}

/**
 * Writes this process's pid to `file`, created anew ('w') or exclusively ('wx'), through the
 * disk seam (a test fills the device there); a failed write leaves no file.
 */
function writePidFile(file: string, flags: 'w' | 'wx'): void {
  const io = diskIoInForce();
  const fd = flags === 'w' ? openToWrite(io, file, 'w') : io.open(file, 'wx');
  let written = false;
  try {
    const pid = Buffer.from(`${process.pid}\n`);
    writeFully(io, fd, file, pid, pid.length, 0);
    written = true;
  } finally {
    io.close(fd);
    if (!written) unlinkQuietly(file);
  }
}

/**
 * Makes `lock` a link to `pidFile`; EEXIST when another holds it. A file system without hard
 * links (some network and FUSE mounts) gets the lock created exclusively and then written, as
 * before links: the narrow moment of an empty lock is the price there.
 */
function placeLock(pidFile: string, lock: string): void {
  const io = diskIoInForce();
  if (io.link !== undefined) {
    try {
      io.link(pidFile, lock);
      return;
    } catch (err) {
      if ((err as { code?: string }).code === 'EEXIST' || isDiskFull(err)) throw err;
    }
  }
  writePidFile(lock, 'wx');
}

/**
 * Removes the lock at `path`, found stale (its pid dead or unreadable), under a guard
 * (`<name>.break`, placed as the lock is, from `pidFile`): breakers take turns, and each reads
 * the lock's pid again under the guard before removing it. Only a breaker removes a lock that
 * names a dead process, and only a missing lock can be taken, so what the guard's holder reads
 * stays until it removes it: a process that broke the same stale lock a moment before and took
 * it is seen as live and its lock is kept (moved aside and read there instead, a third process
 * could take the lock in between, and two held it). Returns false when another live process
 * holds the guard (the caller waits and tries again); a guard a killed breaker left is removed.
 *
 * @throws InvalidStateError when the lock names a live process after all.
 */
export function breakStaleLock(path: string, pidFile: string, who = 'Engine'): boolean {
  const guard = `${path}${GUARD_SUFFIX}`;
  try {
    placeLock(pidFile, guard);
  } catch (err) {
    if ((err as { code?: string }).code !== 'EEXIST') throw err;
    const breaker = readPid(guard);
    if (breaker !== undefined && breaker !== process.pid && processAlive(breaker)) return false;
    // Left by a killed breaker (or one whose pid was not written yet: read again next time).
    if (breaker !== undefined) unlinkQuietly(guard);
    return false;
  }
  try {
    const pid = readPid(path);
    if (pid !== undefined && pid !== process.pid && processAlive(pid)) throw inUse(who, dirname(path), path, pid);
    unlinkQuietly(path);
    return true;
  } finally {
    unlinkQuietly(guard);
  }
}

/** The pid in lock file `file`, or undefined when it is missing, empty or not a pid. */
function readPid(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Blocks the thread for `ms` (taking a lock is synchronous; a turn of another process's breaking is microseconds). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // gone already
  }
}
