// Crash-drill child for the durable OPIC credits of spilled URLs: a budgeted frontier with the
// prioritizer seeds 6,000 URLs over 200 hosts, fetches pages whose links rediscover URLs that
// are on disk (each rediscovery credits cash beside the spilled key), writes an incremental
// checkpoint and, beside it, the full image as it was then (`expected.bin`, the oracle); then
// fetches more (more credits) and SIGKILLs itself at the K-th disk-tier write of the next
// checkpoint (its row runs, credit log or manifest), half-writing it. An optional third argument
// bounds the rows of a row run (`rowRunRows`: the checkpoint then writes several runs); with K = 0
// nothing is killed and the child prints the checkpoint's disk-tier writes and runs written.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killingIo } from '../disk/kill-io.js';
import { type FetchRequest, Frontier, type Outcome, type SeedSpec, loadCoreSync, writePartition } from '../../src/index.js';

const [dir, at, runRows] = process.argv.slice(2);
loadCoreSync();
let current = '';
const io = killingIo(at!.startsWith('rename') ? 'rename' : 'checkpoint', Number(at!.replace('rename', '')), () => current);
// Writes of the drilled checkpoint, counted for the K = 0 run.
let writes = 0;
const counted: typeof io = { ...io, write: (fd, b, o, l, p) => (current === 'checkpoint' && writes++, io.write(fd, b, o, l, p)) };
const f = new Frontier(0, 0, { prioritizer: true, memoryBudget: 96 * 1024, storeDir: join(dir!, 'disk'), spillWindow: 8, diskIo: counted, ...(runRows === undefined ? {} : { rowRunRows: Number(runRows) }) });
const HOSTS = 200;
const seeds: SeedSpec[] = [];
for (let i = 0; i < 30; i++) for (let h = 0; h < HOSTS; h++) seeds.push({ url: `https://h${h}.example/p/${i}`, host: `h${h}.example`, priority: (i * 7 + h) % 5, firstSeen: 0, nextDue: 0, crawlDelay: 0 });
f.seedBatch(seeds);
// Each page links to three URLs of other hosts deep in their queues: most are on disk.
const fetch = (r: FetchRequest): Outcome => {
  const m = /h(\d+)\.example\/p\/(\d+)/.exec(r.url)!;
  const h = Number(m[1]);
  const i = Number(m[2]);
  const links = [1, 2, 3].map((d) => ({ url: `https://h${(h + d * 17) % HOSTS}.example/p/${29 - ((i + d) % 10)}` }));
  return { row: r.row, url: r.url, status: 200, links };
};
let clock = 0;
const step = (n: number): void => {
  const log = f.drain(clock, fetch, n);
  if (log.length > 0) clock = log[log.length - 1]!.atMs + 1;
};
step(800);
const image = f.checkpointIncremental();
writePartition(join(dir!, 'frontier.meguri'), image);
writeFileSync(join(dir!, 'expected.bin'), f.checkpointBytes());
step(800);
current = 'checkpoint';
f.checkpointIncremental();
process.stdout.write(`done ${writes} ${f.diskTier()!.lastRuns}\n`);
