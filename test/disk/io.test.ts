/**
 * The disk tier's I/O helpers ask the file system for at most IO_PIECE bytes a call: node's
 * writeSync and readSync refuse 2 GiB and more, and a first row run at 10⁸ URLs is ~3.6 GB.
 * The DiskIo here only records what it is asked (no 3 GiB buffer is allocated).
 */
import { describe, expect, it } from 'vitest';
import { type DiskIo, IO_PIECE, readFully, writeFully } from '../../src/disk/io.js';

function recordingIo(asked: number[], perCall = Number.POSITIVE_INFINITY): DiskIo {
  const io = (_fd: number, _buf: Uint8Array, _offset: number, length: number): number => {
    asked.push(length);
    return Math.min(length, perCall);
  };
  return { open: () => 3, write: io, read: io, fsync: () => {}, close: () => {}, rename: () => {}, link: () => {}, truncate: () => {} };
}

describe('writeFully / readFully at sizes past 2 GiB', () => {
  const length = 3 * IO_PIECE + 12345;
  it('writeFully splits a 3 GiB write into pieces below 2³¹ that add up to it', () => {
    const asked: number[] = [];
    writeFully(recordingIo(asked), 3, 'x', new Uint8Array(1), length, 0);
    expect(asked).toEqual([IO_PIECE, IO_PIECE, IO_PIECE, 12345]);
    expect(Math.max(...asked)).toBeLessThan(2 ** 31);
  });
  it('readFully splits a 3 GiB read the same way and keeps going after short reads', () => {
    const asked: number[] = [];
    expect(readFully(recordingIo(asked, 2 ** 29), 3, new Uint8Array(1), length, 0)).toBe(length);
    expect(Math.max(...asked)).toBe(IO_PIECE);
    expect(asked.length).toBe(Math.ceil(length / 2 ** 29));
  });
});
