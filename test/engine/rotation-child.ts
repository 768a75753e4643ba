/**
 * Crash-drill child for the data directory's checkpoint rotation (src/engine/datadir.ts), run
 * with `--import tsx`: argv `dir kill completed`. It opens the crawl in `dir` as a resume does
 * (lock, recover) and writes the next checkpoint (`completed` records in it) through a `DiskIo`
 * that SIGKILLs this process right after the K-th rename of that checkpoint (`rename:K`) or half
 * way through its K-th write (`write:K`: a journal's header). The link and the checkpoint file's
 * own write go through node:fs; every other step of the rotation goes through the seam. With
 * `none` nothing is killed, and it prints how many renames and writes the checkpoint made.
 */
import { DataDir } from '../../src/engine/datadir.js';
import { type DiskIo, setDiskIo } from '../../src/disk/io.js';
import { loadCoreSync } from '../../src/index.js';
import { killingIo } from '../disk/kill-io.js';
import { NOW, image, state } from './datadir-fixtures.js';

const [dir, kill, completed] = process.argv.slice(2);
loadCoreSync();
const [kind, at] = kill === 'none' ? ['none', 0] : [kill!.split(':')[0]!, Number(kill!.split(':')[1])];
const d = new DataDir(dir!);
d.lock();
const r = d.recover(NOW)!;
let phase = '';
const inner = killingIo(kind === 'rename' ? 'rename' : 'checkpoint', kind === 'none' ? 0 : at, () => phase);
let renames = 0;
let writes = 0;
const io: DiskIo = {
  ...inner,
  rename: (from, to) => {
    renames++;
    inner.rename(from, to);
  },
  write: (fd, b, o, l, p) => {
    writes++;
    return inner.write(fd, b, o, l, p);
  },
};
setDiskIo(io);
phase = 'checkpoint';
d.checkpoint(image(), state(r.generation + 1, Number(completed)), 0);
phase = '';
setDiskIo(undefined);
d.release();
process.stdout.write(`${renames} ${writes}\n`);
