// The crash drills' file seam: a DiskIo over the real file system that SIGKILLs this process at
// the K-th write made while `phase()` names the drilled phase — half of that write reaching the
// file first, a torn tail — or, for phase 'rename', right after the K-th rename.
import { CountingIo, type DiskIo } from '../../src/disk/index.js';

export function killingIo(drilled: string, killAt: number, phase: () => string): DiskIo {
  const inner = new CountingIo();
  let writes = 0;
  let renames = 0;
  return {
    open: (p, f) => inner.open(p, f),
    read: (fd, b, o, l, p) => inner.read(fd, b, o, l, p),
    fsync: (fd) => inner.fsync(fd),
    close: (fd) => inner.close(fd),
    truncate: (fd, l) => inner.truncate(fd, l),
    link: (e, p) => inner.link(e, p),
    write(fd, b, o, l, p) {
      if (phase() === drilled && ++writes === killAt) {
        inner.write(fd, b, o, Math.max(1, l >> 1), p);
        process.kill(process.pid, 'SIGKILL');
      }
      return inner.write(fd, b, o, l, p);
    },
    rename(from, to) {
      inner.rename(from, to);
      if (drilled === 'rename' && ++renames === killAt) process.kill(process.pid, 'SIGKILL');
    },
  };
}
