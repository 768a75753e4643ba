import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HostHeap } from '../../src/frontier/heap.js';
import { RowQueues } from '../../src/frontier/queues.js';
import { UrlTable } from '../../src/frontier/table.js';

// The scheduler's two heap kinds against sorted-array oracles: every pop must return the
// minimum of the live set under the documented order, through pushes, updates, removals,
// slab growth and re-packs. Few distinct keys and HostKey lanes force the tie-breaks.

type Op =
  | { kind: 'push'; id: number; key: number; second: number }
  | { kind: 'update'; id: number; key: number; second: number }
  | { kind: 'remove'; id: number }
  | { kind: 'pop' }
  | { kind: 'popUpTo'; limit: number };

const IDS = 40;

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('push' as const), id: fc.nat(IDS - 1), key: fc.integer({ min: -3, max: 3 }), second: fc.integer({ min: -1, max: 1 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('update' as const), id: fc.nat(IDS - 1), key: fc.integer({ min: -3, max: 3 }), second: fc.integer({ min: -1, max: 1 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), id: fc.nat(IDS - 1) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('pop' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('popUpTo' as const), limit: fc.integer({ min: -4, max: 3 }) }) },
);

describe('HostHeap', () => {
  it('pops in (key, second key, HostKey high, low, tie) order through pushes, updates, removals and bulk pops', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 300 }), fc.array(fc.nat(2), { minLength: IDS * 2, maxLength: IDS * 2 }), fc.boolean(), (ops, laneBits, withSecond) => {
        // Lanes from {0, 1, 2}: many equal high lanes, and equal (high, low) pairs for the tie.
        const lanes = Uint32Array.from(laneBits, (b) => (b === 2 ? 0xffff_ffff : b));
        const keys = new Float64Array(IDS);
        // The ready banks' order has a second key (a host's last dispatch); the others have none.
        const seconds = new Float64Array(IDS);
        const tie = (a: number, b: number): boolean => a > b; // any strict order on distinct ids
        const heap = new HostHeap({ key: (id) => keys[id]!, ...(withSecond ? { second: (id: number) => seconds[id]! } : {}), lanes: () => lanes, tie });
        const live = new Set<number>();
        const before = (a: number, b: number): boolean => {
          if (keys[a] !== keys[b]) return keys[a]! < keys[b]!;
          if (withSecond && seconds[a] !== seconds[b]) return seconds[a]! < seconds[b]!;
          if (lanes[a * 2 + 1] !== lanes[b * 2 + 1]) return lanes[a * 2 + 1]! < lanes[b * 2 + 1]!;
          if (lanes[a * 2] !== lanes[b * 2]) return lanes[a * 2]! < lanes[b * 2]!;
          return tie(a, b);
        };
        const best = (): number => [...live].reduce((m, id) => (m < 0 || before(id, m) ? id : m), -1);
        for (const op of ops) {
          if (op.kind === 'push') {
            keys[op.id] = op.key;
            seconds[op.id] = op.second;
            heap.push(op.id);
            live.add(op.id);
          } else if (op.kind === 'update') {
            keys[op.id] = op.key;
            seconds[op.id] = op.second;
            heap.update(op.id);
          } else if (op.kind === 'remove') {
            heap.remove(op.id);
            live.delete(op.id);
          } else if (op.kind === 'pop') {
            const want = best();
            expect(heap.pop()).toBe(want);
            live.delete(want);
          } else {
            // Few surfacing ids are popped one by one, many re-heapify the rest: both paths.
            const out = new Int32Array(IDS);
            const n = heap.popUpTo(op.limit, out);
            const want = [...live].filter((id) => keys[id]! <= op.limit).sort((a, b) => a - b);
            expect([...out.subarray(0, n)].sort((a, b) => a - b)).toEqual(want);
            for (const id of want) live.delete(id);
          }
          expect(heap.size).toBe(live.size);
          expect(heap.peek()).toBe(best());
          for (let id = 0; id < IDS; id++) expect(heap.has(id)).toBe(live.has(id));
        }
      }),
      { seed: 7105, numRuns: 200 },
    );
  });
});

describe('RowQueues', () => {
  it('keeps every host queue in priority-then-key order while regions grow, move and re-pack', () => {
    const HOSTS = 9;
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            { weight: 6, arbitrary: fc.record({ kind: fc.constant('add' as const), host: fc.nat(HOSTS - 1), prio: fc.integer({ min: 0, max: 3 }) }) },
            { weight: 3, arbitrary: fc.record({ kind: fc.constant('pop' as const), host: fc.nat(HOSTS - 1) }) },
            { weight: 1, arbitrary: fc.record({ kind: fc.constant('reprio' as const), pick: fc.nat(), prio: fc.integer({ min: 0, max: 3 }) }) },
            { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }) },
          ),
          { maxLength: 600 },
        ),
        (ops) => {
          const t = new UrlTable(16);
          const q = new RowQueues(t);
          for (let h = 0; h < HOSTS; h++) q.ensureHost(h);
          const queued: Set<number>[] = Array.from({ length: HOSTS }, () => new Set<number>());
          const order = (a: number, b: number): number => (q.better(a, b) ? -1 : q.better(b, a) ? 1 : 0);
          const check = (h: number): void => {
            const want = [...queued[h]!].sort(order);
            expect(q.size(h)).toBe(want.length);
            expect(q.peek(h)).toBe(want.length > 0 ? want[0] : -1);
            expect([...q.rowsOf(h)].sort(order)).toEqual(want);
            // The spill tier's sorted copy: the same order, the queue untouched.
            const sorted = new Uint32Array(want.length);
            expect(q.sortedRows(h, sorted)).toBe(want.length);
            expect([...sorted]).toEqual(want);
            expect(q.size(h)).toBe(want.length);
            expect(q.topPriority[h]).toBe(want.length > 0 ? t.priority[want[0]!] : Number.NEGATIVE_INFINITY);
          };
          const anyQueued = (pick: number): number | undefined => {
            const all = queued.flatMap((s) => [...s]);
            return all.length === 0 ? undefined : all[pick % all.length];
          };
          for (const op of ops) {
            if (op.kind === 'add') {
              const row = t.addRow();
              // Two key shapes per host so equal priorities tie on the PathKey high lane too.
              t.key.set([op.host, 7, row * 2654435761, row % 3], row * 4);
              t.host[row] = op.host;
              t.priority[row] = op.prio;
              q.ensureRows(t.rows);
              q.push(row);
              queued[op.host]!.add(row);
              check(op.host);
            } else if (op.kind === 'pop') {
              const want = [...queued[op.host]!].sort(order)[0] ?? -1;
              expect(q.pop(op.host)).toBe(want);
              queued[op.host]!.delete(want);
              check(op.host);
            } else if (op.kind === 'reprio') {
              const row = anyQueued(op.pick);
              if (row === undefined) continue;
              t.priority[row] = op.prio;
              q.update(row);
              check(t.host[row]!);
            } else {
              const row = anyQueued(op.pick);
              if (row === undefined) continue;
              q.remove(row);
              expect(q.queued(row)).toBe(false);
              queued[t.host[row]!]!.delete(row);
              check(t.host[row]!);
            }
          }
          for (let h = 0; h < HOSTS; h++) check(h);
          expect(q.total).toBe(queued.reduce((n, s) => n + s.size, 0));
        },
      ),
      { seed: 7106, numRuns: 120 },
    );
  });

  it('loads a recovered host in one pass and keeps growing it afterwards', () => {
    const t = new UrlTable(64);
    const q = new RowQueues(t);
    q.ensureHost(1);
    const rows: number[] = [];
    for (let i = 0; i < 50; i++) {
      const row = t.addRow();
      t.key.set([1, 1, i, 50 - i], row * 4);
      t.host[row] = 1;
      t.priority[row] = i % 4;
      rows.push(row);
    }
    q.ensureRows(t.rows);
    q.pushAll(1, rows, 30);
    for (const r of rows.slice(30)) q.push(r);
    const popped: number[] = [];
    for (let r = q.pop(1); r >= 0; r = q.pop(1)) popped.push(r);
    expect(popped).toEqual([...rows].sort((a, b) => (q.better(a, b) ? -1 : 1)));
    expect(q.total).toBe(0);
  });
});
