// A damaged URLFrontier checkpoint falls back to the previous one (src/urlfrontier/persist.ts):
// the directory keeps the checkpoint before the current one and its journal, and recovery whose
// checkpoint fails its checksum loads the previous one and replays every journal from its
// generation on — every acked item is there, the damaged file is kept aside, and recovery says
// so. The same holds for a cluster slot's directory read by its next owner (loadFrontierDir),
// and at a crash in the middle of a background checkpoint. Refused, touching nothing, when there
// is no usable previous checkpoint.
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CorruptPartitionError } from '../../src/index.js';
import { startUrlFrontierServer } from '../../src/urlfrontier/index.js';
import { CHECKPOINT_FILE, type CheckpointFallback, FrontierLog, type LogSettings, PREV_CHECKPOINT_FILE, loadFrontierDir } from '../../src/urlfrontier/persist.js';
import { UrlFrontierStore } from '../../src/urlfrontier/store.js';
import { type Harness, ManualClock, call, connect, discovered, putUrls, removeDir, start, tempDir } from './helpers.js';

const dirs: string[] = [];
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const d of dirs.splice(0)) removeDir(d);
});
function dir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

const fresh = (): UrlFrontierStore => new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false });
const NOW = Date.UTC(2026, 11, 3, 12, 0, 0);
const settings = (d: string, extra: Partial<LogSettings> = {}): LogSettings => ({ dir: d, fsync: false, checkpointBytes: 1e9, checkpointEveryMs: 1e12, now: () => 0, wallClock: () => NOW, ...extra });
const urls = (store: UrlFrontierStore): number => store.crawls.get('DEFAULT')?.urls.size ?? 0;
const commit = (log: FrontierLog): Promise<Error | undefined> => new Promise((r) => log.afterCommit(r));

/** Flips a byte near the end of a checkpoint (its checksum then fails). */
function damage(path: string): void {
  const bytes = readFileSync(path);
  bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0x40;
  writeFileSync(path, bytes);
}
const snapshot = (d: string): Record<string, string> => Object.fromEntries(readdirSync(d).map((f) => [f, readFileSync(join(d, f)).toString('base64')]));

/**
 * A directory whose store got `batches` batches of 10 URLs, a checkpoint after each but the
 * last (so the last batch is only in the journal), then closed (a final checkpoint): 10 ×
 * batches URLs in all.
 */
async function rotated(d: string, batches: number): Promise<number> {
  const store = fresh();
  const { log } = FrontierLog.open(store, settings(d));
  for (let b = 0; b < batches; b++) {
    for (let i = 0; i < 10; i++) store.putDiscovered(`https://h${b}.example/${i}`, '', '', undefined, 1);
    expect(await commit(log)).toBeUndefined();
    if (b < batches - 1) log.checkpoint();
  }
  await log.close();
  return batches * 10;
}

describe('a damaged URLFrontier checkpoint', () => {
  it('keeps the previous checkpoint and its journal beside the current pair', async () => {
    const d = dir();
    await rotated(d, 3);
    // Generations: 0 (open) … 3 checkpoints in the loop and on close: current 3, previous 2.
    expect(readdirSync(d).filter((f) => f.endsWith('.journal') || f.endsWith('.ckpt')).sort()).toEqual([PREV_CHECKPOINT_FILE, CHECKPOINT_FILE, 'urlfrontier-2.journal', 'urlfrontier-3.journal'].sort());
  });

  it('loads the previous checkpoint and every journal after it: nothing acked is lost, a copy of the damaged file kept', async () => {
    const d = dir();
    const total = await rotated(d, 4);
    damage(join(d, CHECKPOINT_FILE));
    const damaged = readFileSync(join(d, CHECKPOINT_FILE));
    const store = fresh();
    const { log, recovery } = FrontierLog.open(store, settings(d));
    expect(urls(store)).toBe(total);
    expect(recovery.fallback).toMatchObject({ generation: 3n, savedAs: join(d, `${CHECKPOINT_FILE}.damaged-20261203T120000Z`) });
    expect(recovery.fallback!.reason).toMatch(/checksum mismatch/);
    expect(readFileSync(recovery.fallback!.savedAs!)).toEqual(damaged);
    // Folded at once into a new checkpoint, which drops the previous pair (its journals are in it).
    expect(existsSync(join(d, PREV_CHECKPOINT_FILE))).toBe(false);
    expect(readdirSync(d).filter((f) => f.endsWith('.journal'))).toEqual(['urlfrontier-5.journal']);
    store.putDiscovered('https://late.example/1', '', '', undefined, 2);
    await commit(log);
    await log.close(); // the next checkpoint keeps a previous pair again
    expect(existsSync(join(d, PREV_CHECKPOINT_FILE))).toBe(true);
    damage(join(d, CHECKPOINT_FILE));
    const again = fresh();
    const reopened = FrontierLog.open(again, settings(d));
    expect(urls(again)).toBe(total + 1);
    expect(reopened.recovery.fallback?.generation).toBe(5n);
    await reopened.log.close();
  });

  it('a crash while a background checkpoint is written: the previous checkpoint and journals g−1, g, g+1 hold everything', async () => {
    const d = dir();
    const store = fresh();
    const { log } = FrontierLog.open(store, settings(d, { checkpointBytes: 4096, beforeCheckpointWrite: () => new Promise(() => {}) }));
    for (let i = 0; i < 20; i++) store.putDiscovered(`https://a.example/${i}`, '', '', undefined, 1);
    await commit(log);
    log.checkpoint(); // current 1, previous 0 with its journal
    log.checkpoint(); // current 2, previous 1
    for (let i = 0; i < 200; i++) store.putDiscovered(`https://b.example/${i}`, '', '', undefined, 1);
    await commit(log); // journal 2 passed 4 KiB: checkpoint 3 is cut, its file never written
    expect(log.checkpointing).toBe(true);
    for (let i = 0; i < 30; i++) store.putDiscovered(`https://c.example/${i}`, '', '', undefined, 2);
    await commit(log);
    expect(readdirSync(d).filter((f) => f.endsWith('.journal')).sort()).toEqual(['urlfrontier-1.journal', 'urlfrontier-2.journal', 'urlfrontier-3.journal']);
    damage(join(d, CHECKPOINT_FILE));
    let fallback: CheckpointFallback | undefined;
    const loaded = loadFrontierDir(d, fresh, (f) => (fallback = f));
    expect(urls(loaded)).toBe(250);
    expect(fallback).toMatchObject({ generation: 1n, savedAs: undefined });
    // Read-only: nothing written to another owner's directory.
    expect(readdirSync(d).some((f) => f.includes('.damaged-'))).toBe(false);
  });

  it('is refused, touching nothing, without a usable previous checkpoint: none, damaged too, or its journal gone', async () => {
    const cases: [string, (d: string) => void, RegExp][] = [
      ['none', (d) => rmSync(join(d, PREV_CHECKPOINT_FILE)), /checksum mismatch$/],
      ['damaged too', (d) => damage(join(d, PREV_CHECKPOINT_FILE)), /no fallback: urlfrontier\.prev\.ckpt is damaged too/],
      ['journal gone', (d) => rmSync(join(d, 'urlfrontier-2.journal')), /no fallback: the journal of urlfrontier\.prev\.ckpt's generation 2 is missing/],
    ];
    for (const [name, spoil, message] of cases) {
      const d = dir();
      await rotated(d, 3);
      damage(join(d, CHECKPOINT_FILE));
      spoil(d);
      const before = snapshot(d);
      expect(() => FrontierLog.open(fresh(), settings(d)), name).toThrow(CorruptPartitionError);
      expect(() => FrontierLog.open(fresh(), settings(d)), name).toThrow(message);
      expect(() => loadFrontierDir(d, fresh), name).toThrow(message);
      expect(snapshot(d), name).toEqual(before); // the lock released, nothing else written
    }
  });

  it('the server starts from the previous checkpoint, answers every URL and logs a warning', async () => {
    const d = dir();
    h = await start({ dataDir: d });
    await putUrls(h.client, [1, 2, 3].map((i) => discovered(`https://a.example/${i}`)));
    await h.close();
    h = await start({ dataDir: d });
    await putUrls(h.client, [4, 5].map((i) => discovered(`https://a.example/${i}`)));
    await h.close();
    h = undefined;
    damage(join(d, CHECKPOINT_FILE));
    const lines: string[] = [];
    const server = await startUrlFrontierServer({ port: 0, dataDir: d, fsync: false, log: (level, logger, message) => lines.push(`${level} ${logger}: ${message}`) });
    const client = connect(server.port);
    h = {
      server,
      client,
      clock: new ManualClock(),
      async close() {
        client.close();
        await server.close();
      },
    };
    expect((await call<{ value: number }>(h.client, 'CountURLs', {})).value).toBe(5);
    expect(server.recovery?.fallback).toBeDefined();
    expect(lines.join('\n')).toMatch(/^WARN meguri\.urlfrontier: the checkpoint in .* failed validation \(a copy kept as .*urlfrontier\.ckpt\.damaged-.*\): corrupt partition \(urlfrontier checkpoint\): checksum mismatch; loaded the previous one and replayed its journals \(\d+ records\)$/m);
  });
});
