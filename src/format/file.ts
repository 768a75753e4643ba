/**
 * The Node-only half of src/format: reading and atomically writing `.meguri` files.
 *
 * A write goes to a temporary file beside the target, is fsynced, renamed over the target
 * and the directory is fsynced, so a crash leaves either the old file or the new one, never
 * a torn mix (the rename is atomic on POSIX file systems). Exported from `src/index.ts`
 * only; the byte codec in `./partition.ts` stays browser-safe.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { type PartitionImage, decodePartition, encodePartition } from './partition.js';

let tempCounter = 0;

/**
 * Writes a partition to `path` atomically (temp file, fsync, rename, directory fsync).
 * `partition` is an image or already-encoded bytes (e.g. `Frontier#checkpointBytes()`).
 * Returns the number of bytes written.
 */
export function writePartition(path: string, partition: PartitionImage | Uint8Array): number {
  const bytes = partition instanceof Uint8Array ? partition : encodePartition(partition);
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${tempCounter++}.tmp`);
  const fd = openSync(temp, 'w', 0o644);
  let open = true;
  let renamed = false;
  try {
    let at = 0;
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
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
 * Reads and validates the partition at `path`. Throws `CorruptPartitionError` for a damaged
 * file (see `decodePartition`); file-system errors propagate as Node raised them.
 */
export function readPartition(path: string): PartitionImage {
  return decodePartition(readFileSync(path));
}
