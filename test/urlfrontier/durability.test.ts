// Durability: control state, leases and URLs survive a restart (checkpoint) and a kill -9
// (journal); a damaged checkpoint is refused with a coded error, never misread.
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { startUrlFrontierServer } from '../../src/urlfrontier/index.js';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { parseJournal } from '../../src/journal/index.js';
import { encodeCheckpoint } from '../../src/urlfrontier/codec.js';
import { CHECKPOINT_FILE, FrontierLog, PREV_CHECKPOINT_FILE, loadFrontierDir } from '../../src/urlfrontier/persist.js';
import { UrlFrontierStore, itemBytes } from '../../src/urlfrontier/store.js';
import {
  type Client,
  type Harness,
  type Msg,
  ManualClock,
  call,
  connect,
  discovered,
  getUrls,
  known,
  putDiscovered,
  putUrls,
  removeDir,
  serverChild,
  start,
  stream,
  tempDir,
} from './helpers.js';

const dirs: string[] = [];
const children: ChildProcess[] = [];
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) removeDir(d);
});

function dir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

describe('restart', () => {
  it('keeps URLs, leases, delays, blocks, limits and the active flag', async () => {
    const data = dir();
    const clock = new ManualClock();
    h = await start({ dataDir: data, defaultDelayMs: 0 }, clock);
    await putUrls(h.client, [1, 2, 3].flatMap((i) => [discovered(`https://a.example/${i}`), discovered(`https://b.example/${i}`)]));
    await putUrls(h.client, [known('https://c.example/done', 0)]);
    expect(await getUrls(h.client, { key: 'a.example', max_urls_per_queue: 1, delay_requestable: 100 })).toEqual(['https://a.example/1']);
    await call(h.client, 'SetDelay', { key: 'a.example', delay_requestable: 50 });
    await call(h.client, 'SetDelay', { key: '', delay_requestable: 7, crawlID: 'other' });
    await call(h.client, 'BlockQueueUntil', { key: 'b.example', time: clock.sec + 20 });
    await call(h.client, 'BlockQueueUntil', { key: 'nourl.example', time: clock.sec + 20 });
    await call(h.client, 'SetCrawlLimit', { key: 'c.example', limit: 5 });
    await call(h.client, 'SetActive', { state: false });
    await h.close();

    h = await start({ dataDir: data, defaultDelayMs: 0 }, clock);
    expect((await call<{ state: boolean }>(h.client, 'GetActive', {})).state).toBe(false);
    expect(await getUrls(h.client, {})).toEqual([]);
    await call(h.client, 'SetActive', { state: true });
    const stats = await call<Record<string, unknown>>(h.client, 'GetStats', {});
    // nourl.example, known only by its block, is no queue of the crawl until a URL comes.
    expect(stats).toMatchObject({ size: 6, inProcess: 1, numberOfQueues: 3 });
    expect(stats['counts']).toMatchObject({ completed: 1 });
    expect((await call<{ values: string[] }>(h.client, 'ListQueues', { include_inactive: true })).values).toEqual(['a.example', 'b.example', 'c.example']);
    await putUrls(h.client, [discovered('https://nourl.example/1')]);
    // a: its delay (50 s) runs from the serving before the restart; b and nourl: blocked for 20 s
    // (nourl's block set before its first URL, kept through the restart)
    expect(await getUrls(h.client, {})).toEqual([]);
    clock.advance(20_000);
    expect(await getUrls(h.client, { max_urls_per_queue: 1 })).toEqual(['https://b.example/1', 'https://nourl.example/1']);
    clock.advance(30_000);
    expect(await getUrls(h.client, { key: 'a.example', max_urls_per_queue: 2 })).toEqual(['https://a.example/2']);
    // the lease from before the restart (100 s) still holds a/1
    const queues = await call<{ values: string[] }>(h.client, 'ListQueues', { include_inactive: true });
    expect(queues.values).toEqual(['a.example', 'b.example', 'c.example', 'nourl.example']);
    clock.advance(50_000); // a/1's 100 s lease and a/2's 30 s one have both run out now
    expect(await getUrls(h.client, { key: 'a.example' })).toEqual(['https://a.example/1', 'https://a.example/2', 'https://a.example/3']);
    await h.close();
    h = await start({ dataDir: data, defaultDelayMs: 0 }, clock);
    await putUrls(h.client, [known('https://c.example/more', clock.sec)]);
    await call(h.client, 'SetCrawlLimit', { key: 'c.example', limit: 1 });
    expect(await getUrls(h.client, { key: 'c.example' })).toEqual([]); // 1 completed ≥ limit 1
    // The current journal and the previous checkpoint's (the fallback for a damaged checkpoint).
    expect(readdirSync(data).filter((f) => f.endsWith('.journal')).length).toBe(2);
    expect(readdirSync(data)).toContain(PREV_CHECKPOINT_FILE);
  });

  it('rotates checkpoints under load and loses nothing', async () => {
    const data = dir();
    h = await start({ dataDir: data, checkpointBytes: 64 * 1024 });
    const items: Msg[] = [];
    for (let i = 0; i < 5000; i++) items.push(discovered(`https://h${i % 50}.example/page/${i}`, { metadata: { n: { values: [String(i)] } } }));
    const acks = await putUrls(h.client, items);
    expect(acks.every((a) => a.status === 'OK')).toBe(true);
    const gen = readdirSync(data).find((f) => f.endsWith('.journal'))!;
    expect(Number(/(\d+)/.exec(gen)![1])).toBeGreaterThan(3);
    await h.close();
    h = await start({ dataDir: data });
    expect((await call<{ value: number }>(h.client, 'CountURLs', {})).value).toBe(5000);
    const st = await call<{ known: { info: { metadata: Record<string, { values: string[] }> } } }>(h.client, 'GetURLStatus', { url: 'https://h7.example/page/4007' });
    expect(st.known.info.metadata).toEqual({ n: { values: ['4007'] } });
  });

  it('one server per data directory: a second open is MEGURI_ERR_INVALID_STATE, free again after close', async () => {
    const data = dir();
    h = await start({ dataDir: data });
    await expect(startUrlFrontierServer({ port: 0, dataDir: data, log: () => {} })).rejects.toMatchObject({ code: 'MEGURI_ERR_INVALID_STATE' });
    await h.close();
    h = await start({ dataDir: data });
  });

  it("a lock naming another live process is refused; a stale one is taken, through the data directory's lock protocol", async () => {
    const data = dir();
    h = await start({ dataDir: data });
    await h.close();
    h = undefined;
    writeFileSync(join(data, 'urlfrontier.lock'), `${process.ppid}\n`);
    await expect(startUrlFrontierServer({ port: 0, dataDir: data, log: () => {} })).rejects.toThrow(`is in use by process ${process.ppid}`);
    expect(readFileSync(join(data, 'urlfrontier.lock'), 'utf8')).toBe(`${process.ppid}\n`);
    // A pid no process has (pid_max is at most 2²² on Linux): stale.
    writeFileSync(join(data, 'urlfrontier.lock'), '4194999\n');
    // What a server killed between writing its pid and linking it as the lock leaves.
    writeFileSync(join(data, '.urlfrontier.lock.4194999.tmp'), '4194999\n');
    h = await start({ dataDir: data });
    expect(readFileSync(join(data, 'urlfrontier.lock'), 'utf8')).toBe(`${process.pid}\n`);
    // The dead server's pid file, this one's and the breakers' guard are gone once it is held.
    expect(readdirSync(data).filter((f) => f.includes('urlfrontier.lock'))).toEqual(['urlfrontier.lock']);
  });

  it('refuses a damaged checkpoint with MEGURI_ERR_CORRUPT_PARTITION', async () => {
    const data = dir();
    h = await start({ dataDir: data });
    await putUrls(h.client, [discovered('https://a.example/1')]);
    await h.close();
    h = undefined;
    const path = join(data, 'urlfrontier.ckpt');
    const bytes = readFileSync(path);
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0x40;
    writeFileSync(path, bytes);
    await expect(startUrlFrontierServer({ port: 0, dataDir: data, log: () => {} })).rejects.toMatchObject({ code: 'MEGURI_ERR_CORRUPT_PARTITION' });
    expect(readdirSync(data)).not.toContain('urlfrontier.lock'); // the failed start released it
  });
});

describe('kill -9', () => {
  it('every item acked OK before the kill is there after restart, with the control state', async () => {
    const data = dir();
    const { child, port } = await serverChild({ port: 0, dataDir: data });
    children.push(child);
    const client: Client = connect(port);
    const now = Date.now();
    await call(client, 'SetDelay', { key: 'slow.example', delay_requestable: 3600 });
    await call(client, 'BlockQueueUntil', { key: 'blocked.example', time: Math.floor(now / 1000) + 3600 });
    await putUrls(client, [discovered('https://leased.example/1'), discovered('https://blocked.example/1')]);
    expect(await getUrls(client, { key: 'leased.example', delay_requestable: 3600 })).toEqual(['https://leased.example/1']);

    const okIds: string[] = [];
    const total = 200_000;
    const killAfter = 20_000;
    await new Promise<void>((resolve) => {
      const s = client['PutURLs']!() as grpc.ClientDuplexStream<Msg, { ID: string; status: string }>;
      let i = 0;
      let killed = false;
      s.on('data', (a) => {
        if (a.status === 'OK') okIds.push(a.ID);
        if (!killed && okIds.length >= killAfter) {
          killed = true;
          child.kill('SIGKILL');
        }
      });
      s.on('error', () => resolve());
      s.on('end', () => resolve());
      const pump = (): void => {
        while (i < total) {
          const ok = s.write(discovered(`https://h${i % 97}.example/item/${i}`, {}, `id${i}`));
          i++;
          if (!ok) {
            s.once('drain', pump);
            return;
          }
        }
        s.end();
      };
      pump();
    });
    client.close();
    await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)));
    expect(child.signalCode).toBe('SIGKILL');
    expect(okIds.length).toBeGreaterThanOrEqual(killAfter);
    expect(okIds.length).toBeLessThan(total); // the kill landed mid-stream

    const clock = new ManualClock(now + 1000);
    h = await start({ dataDir: data }, clock);
    expect(h.server.recovery!.replayedRecords).toBeGreaterThan(0);
    const count = (await call<{ value: number }>(h.client, 'CountURLs', {})).value;
    expect(count).toBeGreaterThanOrEqual(okIds.length + 2);
    const stored = new Set((await stream<{ known: { info: { url: string } } }>(h.client, 'ListURLs', { size: 1_000_000 })).map((u) => u.known.info.url));
    const missing = okIds.filter((id) => !stored.has(`https://h${Number(id.slice(2)) % 97}.example/item/${id.slice(2)}`));
    expect(missing).toEqual([]);
    // control state and the lease from before the kill
    expect(await getUrls(h.client, { key: 'leased.example' })).toEqual([]);
    expect(await getUrls(h.client, { key: 'blocked.example' })).toEqual([]);
    await putUrls(h.client, [discovered('https://slow.example/1'), discovered('https://slow.example/2')]);
    expect(await getUrls(h.client, { key: 'slow.example' })).toEqual(['https://slow.example/1', 'https://slow.example/2']);
    await putUrls(h.client, [discovered('https://slow.example/3')]);
    expect(await getUrls(h.client, { key: 'slow.example' })).toEqual([]); // its one-hour delay is back in force
  });
});

describe('journal write errors', () => {
  it('a failed journal write answers FAIL (and control calls UNAVAILABLE), never OK; every OK before it survives', async () => {
    const data = dir();
    // 256 KiB per file: the journal hits EFBIG after a few thousand items, as on a full disk.
    const { child, port } = await serverChild({ port: 0, dataDir: data, fsync: false }, 256);
    children.push(child);
    const client: Client = connect(port);
    const statuses: string[] = [];
    const ok: string[] = [];
    for (let b = 0; b < 200 && !statuses.includes('FAIL'); b++) {
      const items = Array.from({ length: 100 }, (_, i) => discovered(`https://f${i % 7}.example/${b}/${i}`));
      for (const a of await putUrls(client, items)) {
        statuses.push(a.status);
        if (a.status === 'OK') ok.push(a.ID);
      }
    }
    const firstFail = statuses.indexOf('FAIL');
    expect(firstFail).toBeGreaterThan(0);
    expect(ok.length).toBeGreaterThan(0);
    // From the failed write on, nothing is acked OK: the journal has a hole it cannot vouch for.
    const later = await putUrls(client, [discovered('https://after.example/1'), discovered('https://after.example/2')]);
    expect(later.map((a) => a.status)).toEqual(['FAIL', 'FAIL']);
    await expect(call(client, 'SetDelay', { key: 'f1.example', delay_requestable: 5 })).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    expect((await call<{ size: number }>(client, 'GetStats', {})).size).toBeGreaterThanOrEqual(ok.length); // still up
    client.close();
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    h = await start({ dataDir: data });
    const urls = new Set((await stream<{ known: { info: { url: string } } }>(h.client, 'ListURLs', { size: 1_000_000 })).map((i) => i.known.info.url));
    expect(ok.filter((u) => !urls.has(u))).toEqual([]);
  });
});


describe('background checkpoint', () => {
  it('acks go on while a checkpoint file is written; a crash before it lands loses nothing', async () => {
    const data = dir();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const fresh = (): UrlFrontierStore => new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false });
    const store = fresh();
    const { log } = FrontierLog.open(store, { dir: data, fsync: true, checkpointBytes: 4096, checkpointEveryMs: 1e12, now: () => 0, beforeCheckpointWrite: () => held });
    const commit = (): Promise<Error | undefined> => new Promise((r) => log.afterCommit(r));
    for (let i = 0; i < 200; i++) store.putDiscovered(`https://a.example/${i}`, '', '', undefined, 1);
    expect(await commit()).toBeUndefined(); // journal 0 passed 4 KiB: the checkpoint began after this write
    expect(log.checkpointing).toBe(true);
    for (let i = 0; i < 50; i++) store.putDiscovered(`https://c.example/${i}`, '', '', undefined, 2);
    expect(await commit()).toBeUndefined(); // answered while the checkpoint file waits
    expect(log.checkpointing).toBe(true);
    expect(existsSync(join(data, CHECKPOINT_FILE))).toBe(false);
    // A crash now: recovery reads journal 0 and journal 1 (the checkpoint of 1 never landed).
    expect(loadFrontierDir(data, fresh).crawls.get('DEFAULT')!.urls.size).toBe(250);
    release();
    await log.close();
    expect(existsSync(join(data, CHECKPOINT_FILE))).toBe(true);
    const again = fresh();
    const reopened = FrontierLog.open(again, { dir: data, fsync: true, checkpointBytes: 4096, checkpointEveryMs: 1e12, now: () => 0 });
    expect(again.crawls.get('DEFAULT')!.urls.size).toBe(250);
    await reopened.log.close();
  });

  it('recovers checkpoint g + journal g + journal g+1 when the process died before the checkpoint file landed', async () => {
    const data = dir();
    const fresh = (): UrlFrontierStore => new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false });
    const store = fresh();
    const { log } = FrontierLog.open(store, { dir: data, fsync: false, checkpointBytes: 4096, checkpointEveryMs: 1e12, now: () => 0, beforeCheckpointWrite: () => new Promise(() => {}) });
    const commit = (): Promise<Error | undefined> => new Promise((r) => log.afterCommit(r));
    for (let i = 0; i < 200; i++) store.putDiscovered(`https://a.example/${i}`, '', '', undefined, 1);
    await commit();
    for (let i = 0; i < 30; i++) store.putDiscovered(`https://c.example/${i}`, '', '', undefined, 2);
    await commit();
    expect(readdirSync(data).filter((n) => n.endsWith('.journal')).sort()).toEqual(['urlfrontier-0.journal', 'urlfrontier-1.journal']);
    // The files as a kill would leave them (the checkpoint write never finished), recovered elsewhere.
    const crashed = dir();
    for (const n of readdirSync(data)) if (n.endsWith('.journal')) copyFileSync(join(data, n), join(crashed, n));
    const again = fresh();
    const { log: log2, recovery } = FrontierLog.open(again, { dir: crashed, fsync: false, checkpointBytes: 1e9, checkpointEveryMs: 1e12, now: () => 0 });
    expect(again.crawls.get('DEFAULT')!.urls.size).toBe(230);
    expect(recovery.replayedRecords).toBeGreaterThanOrEqual(2);
    expect(readdirSync(crashed).filter((n) => n.endsWith('.journal'))).toEqual(['urlfrontier-1.journal']); // folded into checkpoint 1
    await log2.close();
    const third = fresh();
    const { log: log3 } = FrontierLog.open(third, { dir: crashed, fsync: false, checkpointBytes: 1e9, checkpointEveryMs: 1e12, now: () => 0 });
    expect(third.crawls.get('DEFAULT')!.urls.size).toBe(230);
    await log3.close();
  });
});

// The journal refuses a record over its limit (64 MiB), and a refused write ends the log's
// durability for good: every later ack FAIL, control calls UNAVAILABLE, no final checkpoint.
// No single request may get there. The server's test-only maxJournalRecordBytes lowers the
// limit to 64 KiB so that a few thousand URLs reach it (the item limit is a quarter: 16 KiB).
describe('journal record limit', () => {
  const RECORD = 65_536;
  const recordSizes = (data: string): number[] => {
    const sizes: number[] = [];
    for (const n of readdirSync(data).filter((f) => f.endsWith('.journal'))) {
      for (const r of parseJournal(readFileSync(join(data, n))).records) sizes.push(r.length);
    }
    return sizes;
  };

  it('GetURLs leasing a whole queue (max_urls_per_queue 0) is journaled in pieces; acks, control calls and the final checkpoint go on', async () => {
    const data = dir();
    h = await start({ dataDir: data, defaultDelayMs: 0, maxJournalRecordBytes: RECORD });
    const n = 6000; // ≈ 40 bytes each: one served operation of ≈ 240 KB, 3.7 × the limit
    for (let b = 0; b < n; b += 1000) {
      const items = Array.from({ length: 1000 }, (_, i) => ({ url: `https://big.example/page-${b + i}` }));
      expect(new Set((await putDiscovered(h.client, [{ ID: `b${b}`, items }]))[0]!.statuses)).toEqual(new Set(['OK']));
    }
    expect(await getUrls(h.client, { max_urls_per_queue: 0, delay_requestable: 600 })).toHaveLength(n);
    expect((await putUrls(h.client, [discovered('https://after.example/1')])).map((a) => a.status)).toEqual(['OK']);
    await call(h.client, 'SetDelay', { key: 'after.example', delay_requestable: 3 });
    expect(Math.max(...recordSizes(data))).toBeLessThanOrEqual(RECORD / 2);
    // What a kill now would recover, read from the journal: every lease.
    const replayed = loadFrontierDir(data, () => new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false }));
    expect(replayed.stats('DEFAULT', 'big.example', h.clock.ms)).toMatchObject({ size: n, inProcess: n });
    expect(replayed.crawls.get('DEFAULT')!.queues.get('after.example')!.delayMs).toBe(3000);
    await h.close(); // the final checkpoint: throws once durability is lost
    h = await start({ dataDir: data, defaultDelayMs: 0, maxJournalRecordBytes: RECORD }, h.clock);
    expect(await call(h.client, 'GetStats', { key: 'big.example' })).toMatchObject({ size: n, inProcess: n });
    expect(await getUrls(h.client, { key: 'big.example' })).toEqual([]); // still leased
  });

  it('a serving journaled in pieces replays to the same state as the live store (checkpoint equality)', async () => {
    const data = dir();
    const fresh = (): UrlFrontierStore => new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false, maxItemBytes: RECORD / 4 });
    const live = fresh();
    const { log } = FrontierLog.open(live, { dir: data, fsync: false, checkpointBytes: 1e9, checkpointEveryMs: 1e12, now: () => 0, maxRecordBytes: RECORD });
    const commit = (): Promise<Error | undefined> => new Promise((r) => log.afterCommit(r));
    let now = 1_000_000;
    // Six queues (3 hosts × 2 crawls) of 1500 URLs of ≈ 50 bytes: each serving ≈ 75 KB, over the limit whole.
    for (let i = 0; i < 9000; i++) {
      const meta = i % 7 === 0 ? { tag: { values: [`v${i}`, 'é'] } } : undefined;
      live.putDiscovered(`https://q${i % 3}.example/a/longer/path/to/page-${i}`, '', i % 2 === 0 ? '' : 'other', meta, now);
    }
    live.putKnown('https://q0.example/a/longer/path/to/page-0', '', '', undefined, 1, now); // due long ago: served first
    expect(await commit()).toBeUndefined();
    now += 1000;
    const served = live.getUrls({ maxUrlsPerQueue: 0, maxQueues: 0, key: '', leaseMs: 60_000, crawl: undefined }, now);
    expect(served).toHaveLength(9000);
    now += 5;
    live.getUrls({ maxUrlsPerQueue: 0, maxQueues: 0, key: '', leaseMs: 60_000, crawl: undefined }, now); // nothing left: journals nothing
    live.putKnown('https://q1.example/a/longer/path/to/page-1', '', 'other', undefined, 0, now); // a lease ended by an update
    expect(await commit()).toBeUndefined();
    expect(Math.max(...recordSizes(data))).toBeLessThanOrEqual(RECORD / 2);
    const replayed = loadFrontierDir(data, fresh);
    expect(Buffer.from(encodeCheckpoint(replayed, 1n)).equals(Buffer.from(encodeCheckpoint(live, 1n)))).toBe(true);
    await log.close();
  });

  it('a log refuses a store whose items could outgrow its records, before touching the directory', () => {
    const data = dir();
    const store = new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false, maxItemBytes: RECORD / 4 + 1 });
    expect(() => FrontierLog.open(store, { dir: data, fsync: false, checkpointBytes: 1e9, checkpointEveryMs: 1e12, now: () => 0, maxRecordBytes: RECORD })).toThrow(InvalidArgumentError);
    expect(readdirSync(data)).toEqual([]);
  });

  it('an item too large to journal is acked SKIPPED before anything changes; the items around it stay OK', async () => {
    const data = dir();
    h = await start({ dataDir: data, defaultDelayMs: 0, maxJournalRecordBytes: RECORD });
    const limit = RECORD / 4;
    // A value that brings the item's operation to exactly the limit, then one byte more.
    const base = itemBytes('DEFAULT', 'https://edge.example/fits', 'edge.example', { m: { values: [''] } });
    const fits = 'x'.repeat(limit - base);
    const over = 'x'.repeat(limit - base + 1);
    const huge = 'y'.repeat(100_000); // without the check, a 100 KB operation the journal refuses
    const acks = await putUrls(h.client, [
      discovered('https://ok.example/0'),
      discovered('https://edge.example/fits', { metadata: { m: { values: [fits] } } }),
      discovered('https://edge.example/over', { metadata: { m: { values: [over] } } }),
      discovered('https://big.example/1', { metadata: { m: { values: [huge] } }, crawlID: 'big' }),
      known('https://ok.example/0', 0, { metadata: { m: { values: Array.from({ length: 5000 }, () => 'long value') } } }),
      discovered('https://ok.example/1'),
    ]);
    expect(acks.map((a) => a.status)).toEqual(['OK', 'OK', 'SKIPPED', 'SKIPPED', 'SKIPPED', 'OK']);
    expect((await putUrls(h.client, [discovered('https://ok.example/2')])).map((a) => a.status)).toEqual(['OK']);
    await call(h.client, 'SetDelay', { key: 'ok.example', delay_requestable: 2 });
    await expect(call(h.client, 'GetURLStatus', { url: 'https://big.example/1', crawlID: 'big' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    await h.close();
    h = await start({ dataDir: data, defaultDelayMs: 0, maxJournalRecordBytes: RECORD }, h.clock);
    const urls = (await stream<{ known: { info: { url: string }; refetchable_from_date: number } }>(h.client, 'ListURLs', { size: 100 })).map((i) => i.known.info.url);
    expect(urls.sort()).toEqual(['https://edge.example/fits', 'https://ok.example/0', 'https://ok.example/1', 'https://ok.example/2']);
    // The skipped known update left its URL as it was: not done, still served.
    expect(await getUrls(h.client, { key: 'ok.example', max_urls_per_queue: 1 })).toEqual(['https://ok.example/0']);
    expect((await call<{ values: string[] }>(h.client, 'ListCrawls', {})).values).toEqual(['DEFAULT']);
  });
});
