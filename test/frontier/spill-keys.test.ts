// The exact key set of a budgeted frontier (src/frontier/spillkeys.ts, issue 20): the spilled
// URLs' PathKeys per host, and the resident row index with removal. Asserted against Map/Set
// oracles over adversarial keys (the PathKey (0, 0) that marks an empty slot, hosts sharing a
// HostKey low lane, few homes so probe runs wrap), and at the frontier: under a budget that
// spills nearly everything, every URL rediscovered is known (nothing admitted twice) and every
// new one is admitted (nothing dropped), and the key set's bytes per spilled URL stay small.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Frontier, type SeedSpec } from '../../src/index.js';
import { RowIndex } from '../../src/frontier/rowindex.js';
import { SPILLED, SpilledKeys, TieredIndex } from '../../src/frontier/spillkeys.js';
import { UrlTable } from '../../src/frontier/table.js';

const root = mkdtempSync(join(tmpdir(), 'meguri-spill-keys-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Lane values that stress the sets: the empty marker's 0, sign bits, all ones. */
const LANES = [0, 1, 2, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x1234_5678, 0xdead_beef];

describe('SpilledKeys', () => {
  it('holds exactly the PathKeys added and not deleted, per host, with their credits (fast-check against a Map)', () => {
    const op = fc.record({ kind: fc.nat(3), host: fc.nat(4), lo: fc.nat(LANES.length - 1), hi: fc.nat(LANES.length - 1), salt: fc.nat(40) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 600 }), (ops) => {
        const keys = new SpilledKeys();
        const oracle = new Map<string, number>();
        // Hosts 0 and 1 share a HostKey low lane (the map's collision chain).
        const hostLo = (h: number): number => (h <= 1 ? 0xabcd : 0x1000 + h);
        const hostHi = (h: number): number => 0x5000 + h;
        for (const o of ops) {
          const lo = (LANES[o.lo]! + (o.salt > 30 ? o.salt : 0)) >>> 0;
          const hi = LANES[o.hi]!;
          const name = `${o.host}:${lo}:${hi}`;
          if (o.kind === 0) {
            const credit = oracle.get(name);
            expect(keys.delete(o.host, lo, hi)).toBe(oracle.delete(name));
            expect(keys.takenCash).toBe(credit ?? 0);
          } else if (o.kind === 1) {
            keys.add(o.host, hostLo(o.host), hostHi(o.host), lo, hi);
            if (!oracle.has(name)) oracle.set(name, 0);
          } else if (o.kind === 2) {
            // Whole amounts: f32 sums stay exact.
            expect(keys.credit(o.host, lo, hi, o.salt + 1)).toBe(oracle.has(name));
            if (oracle.has(name)) oracle.set(name, oracle.get(name)! + o.salt + 1);
          } else {
            // A recovery replaying its credit log sets a held key's credit (an unheld key: no-op).
            keys.setCredit(o.host, lo, hi, o.salt);
            if (oracle.has(name)) oracle.set(name, o.salt);
          }
          expect(keys.size).toBe(oracle.size);
          expect(keys.creditOf(o.host, lo, hi)).toBe(oracle.get(name) ?? 0);
        }
        // forEachCredit lists exactly the held keys with a credit.
        const listed = new Map<string, number>();
        keys.forEachCredit((id, lo, hi, cash) => listed.set(`${id}:${lo}:${hi}`, cash));
        expect(listed).toEqual(new Map([...oracle].filter(([, c]) => c !== 0)));
        for (let h = 0; h < 5; h++) {
          for (const lo of LANES) {
            for (const hi of LANES) {
              const want = oracle.has(`${h}:${lo}:${hi}`);
              expect(keys.has(h, lo, hi)).toBe(want);
              const k = Uint32Array.of(hostLo(h), hostHi(h), lo, hi);
              // A host never added is unknown by HostKey: its keys are absent.
              expect(keys.hasKey(k, 0)).toBe(want);
            }
          }
        }
      }),
      { seed: 2020, numRuns: 300 },
    );
  });

  it('keeps 10–20 bytes a key at 100,000 keys over 100 hosts, and frees a host whose keys all left', () => {
    const keys = new SpilledKeys();
    let x = 12345;
    const next = (): number => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
    const added: [number, number, number][] = [];
    for (let i = 0; i < 100_000; i++) {
      const h = i % 100;
      const lo = next();
      const hi = next();
      keys.add(h, h + 1, 7, lo, hi);
      added.push([h, lo, hi]);
    }
    expect(keys.size).toBe(100_000);
    const per = keys.memoryBytes / keys.size;
    expect(per).toBeGreaterThan(10);
    expect(per).toBeLessThan(20);
    for (const [h, lo, hi] of added) expect(keys.delete(h, lo, hi)).toBe(true);
    expect(keys.size).toBe(0);
    // What is left is the per-host bookkeeping, no slots.
    expect(keys.memoryBytes).toBeLessThan(100 * 64);
  });
});

describe('RowIndex.remove, RowIndex.removeWhere and TieredIndex', () => {
  it('after any inserts and removals, every live row is found and every removed key missed (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(2), fc.nat(60)), { maxLength: 400 }), (ops) => {
        const t = new UrlTable(16);
        const idx = new RowIndex(t);
        const spilled = new SpilledKeys();
        const tiered = new TieredIndex(idx, spilled);
        // 61 distinct keys, few HostKeys, rows reused as the spill tier reuses them.
        const keyOf = (n: number): number[] => [LANES[n % 3]!, 9, LANES[n % LANES.length]!, n];
        const rowOf = new Map<number, number>();
        const free: number[] = [];
        for (const [op, n] of ops) {
          const k = Uint32Array.from(keyOf(n));
          if (op === 2) {
            // A shed pass: the rows of every live key ≡ n (mod 5) marked, then one sweep.
            const gone = [...rowOf].filter(([m]) => m % 5 === n % 5);
            for (const [, row] of gone) t.status[row] = 0xff;
            expect(idx.removeWhere(t.status, 0xff)).toBe(gone.length);
            for (const [m, row] of gone) {
              t.status[row] = 0;
              rowOf.delete(m);
              free.push(row);
              const km = Uint32Array.from(keyOf(m));
              spilled.add(m % 3, km[0]!, km[1]!, km[2]!, km[3]!);
            }
          } else if (op === 1) {
            const row = rowOf.get(n);
            expect(idx.remove(k, 0)).toBe(row !== undefined);
            if (row !== undefined) {
              rowOf.delete(n);
              free.push(row);
              spilled.add(n % 3, k[0]!, k[1]!, k[2]!, k[3]!);
            }
          } else if (!rowOf.has(n)) {
            const row = free.length > 0 ? free.pop()! : t.addRow();
            t.key.set(k, row * 4);
            expect(tiered.insertBatch(k, Uint32Array.of(row))).toBe(1);
            spilled.delete(n % 3, k[2]!, k[3]!);
            rowOf.set(n, row);
          }
          expect(idx.len).toBe(rowOf.size);
        }
        const all = new Uint32Array(61 * 4);
        for (let n = 0; n <= 60; n++) all.set(keyOf(n), n * 4);
        const got = tiered.getBatch(all, new Uint32Array(61), 0xffff_ffff);
        for (let n = 0; n <= 60; n++) {
          const row = rowOf.get(n);
          const want = row ?? (spilled.hasKey(all, n) ? SPILLED : undefined);
          expect(idx.get(all, n)).toBe(row);
          expect(tiered.get(all, n)).toBe(want);
          expect(got[n]).toBe(want ?? 0xffff_ffff);
        }
        expect([...idx.exportSorted().payloads].sort((a, b) => a - b)).toEqual([...rowOf.values()].sort((a, b) => a - b));
      }),
      { seed: 77, numRuns: 300 },
    );
  });
});

describe('a budgeted frontier with nearly every URL on disk', () => {
  it('knows every spilled URL (rediscovery admits nothing) and admits every new one, at under 20 B a spilled key', () => {
    const hosts = 200;
    const per = 100;
    const specs: SeedSpec[] = [];
    for (let i = 0; i < hosts * per; i++) {
      const h = i % hosts;
      specs.push({ url: `https://h${h}.example/p/${(i - h) / hosts}`, host: `h${h}.example`, priority: i % 13, firstSeen: 0, nextDue: 0, crawlDelay: 0 });
    }
    const f = new Frontier(0, 0, { memoryBudget: 512 * 1024, storeDir: join(root, 'a') });
    expect(f.seedBatch(specs)).toBe(hosts * per);
    const tier = f.diskTier()!;
    expect(tier.spilledUrls).toBeGreaterThan(hosts * per * 0.7);
    expect(tier.keyBytes / tier.spilledUrls).toBeLessThan(20);
    // Every URL again, seeds and discoveries, one by one and in batches: nothing is new.
    expect(f.seedBatch(specs)).toBe(0);
    for (let i = 0; i < specs.length; i += 97) expect(f.seed(specs[i]!.url, specs[i]!.host, 1, 0, 0)).toBe(false);
    for (const s of specs) expect(f.discover({ url: s.url, host: s.host, depth: 1, cash: 0.5 }, 0)).toBe(false);
    expect(f.len()).toBe(hosts * per);
    // New URLs of the same (spilled) hosts are all admitted, once.
    const fresh = specs.map((s) => ({ url: `${s.url}/new`, host: s.host, depth: 1, cash: 0.5 }));
    for (const d of fresh) expect(f.discover(d, 0)).toBe(true);
    expect(f.len()).toBe(2 * hosts * per);
    for (const d of fresh.slice(0, 500)) expect(f.discover(d, 0)).toBe(false);
    // Links reported by fetches (the batched intake path) of known and new URLs.
    // And the drain dispatches each URL once.
    const seen = new Set<string>();
    f.drain(0, (r) => {
      expect(seen.has(r.url)).toBe(false);
      seen.add(r.url);
      const links = /\/(new|link)$/.test(r.url) ? [] : [{ url: r.url }, { url: `${r.url}/new` }, { url: `${r.url}/link` }];
      return { row: r.row, url: r.url, status: 200, latencyMs: 5, links };
    });
    expect(seen.size).toBe(3 * hosts * per);
    f.free();
  });
});

describe('OPIC credit of a spilled URL', () => {
  it('a rediscovery of a URL on disk keeps its cash: the full image equals the one without a budget', () => {
    const hosts = 50;
    const per = 80;
    const specs: SeedSpec[] = [];
    for (let i = 0; i < hosts * per; i++) {
      const h = i % hosts;
      specs.push({ url: `https://h${h}.example/p/${(i - h) / hosts}`, host: `h${h}.example`, priority: 1 + (i % 5), firstSeen: 0, nextDue: 0, crawlDelay: 0 });
    }
    const plain = new Frontier(0, 0, { prioritizer: true });
    const budget = new Frontier(0, 0, { prioritizer: true, memoryBudget: 128 * 1024, storeDir: join(root, 'credit') });
    for (const f of [plain, budget]) f.seedBatch(specs);
    expect(budget.diskTier()!.spilledUrls).toBeGreaterThan(hosts * per * 0.5);
    // Every other URL rediscovered once with cash (one credit each: f32 sums stay exact).
    for (let i = 0; i < specs.length; i += 2) {
      const d = { url: specs[i]!.url, host: specs[i]!.host, depth: 1, cash: 0.25 + (i % 7) };
      expect(plain.discover(d, 0)).toBe(false);
      expect(budget.discover(d, 0)).toBe(false);
    }
    const keyBytes = budget.diskTier()!.keyBytes;
    // The full image (spilled rows read back, credits added) is byte for byte the plain one's,
    // twice: taking it puts the credits back beside the keys.
    for (let round = 0; round < 2; round++) expect(Buffer.from(budget.checkpointBytes()).equals(Buffer.from(plain.checkpointBytes()))).toBe(true);
    expect(budget.diskTier()!.keyBytes).toBe(keyBytes);
    // A credited URL comes back with its cash: the two frontiers dispatch the same set.
    const drained = (f: Frontier): string[] => f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200 })).map((x) => x.url).sort();
    expect(drained(budget)).toEqual(drained(plain));
    plain.free();
    budget.free();
  });
});
