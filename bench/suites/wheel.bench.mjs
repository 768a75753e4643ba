// TimingWheel vs a binary heap in JavaScript as the frontier's due-time index: 1,000,000 URL
// rows scheduled over the next 30 days (in epoch-hours, 5 % a year or two out), then 30 days
// simulated hour by hour — each hour drains the due rows in (tick, id) order and reschedules
// them 1–720 hours ahead, and moves 1,000 not-yet-due rows to a new hour (a politeness or
// priority change). The heap keeps (tick, id) as one float64 key and handles moves by lazy
// deletion (push the new entry, skip stale ones when popped), the usual JS approach.
import { TimingWheel } from '../../dist/index.js';
import { printTable } from '../lib/harness.mjs';

const N = Number(process.env.BENCH_WHEEL_N ?? 1_000_000);
const HOURS = 720;
const MOVES_PER_HOUR = 1000;
const START = 480_000; // epoch-hours, mid-2024
const TWO32 = 2 ** 32;

class Heap {
  constructor(cap) {
    this.keys = new Float64Array(cap);
    this.size = 0;
  }
  push(k) {
    if (this.size === this.keys.length) {
      const grown = new Float64Array(this.keys.length * 2);
      grown.set(this.keys);
      this.keys = grown;
    }
    const a = this.keys;
    let i = this.size++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p] <= k) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = k;
  }
  pop() {
    const a = this.keys;
    const top = a[0];
    const last = a[--this.size];
    let i = 0;
    const n = this.size;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && a[c + 1] < a[c]) c++;
      if (a[c] >= last) break;
      a[i] = a[c];
      i = c;
    }
    a[i] = last;
    return top;
  }
}

/** The heap-based index: lazy deletion through the current tick of each id (0 = unscheduled). */
class HeapIndex {
  constructor(n) {
    this.heap = new Heap(n);
    this.tick = new Uint32Array(n);
  }
  schedule(id, t) {
    this.tick[id] = t;
    this.heap.push(t * TWO32 + id);
  }
  advance(now, out) {
    let k = 0;
    const limit = (now + 1) * TWO32;
    const h = this.heap;
    while (h.size > 0 && h.keys[0] < limit) {
      const key = h.pop();
      const t = Math.floor(key / TWO32);
      const id = key - t * TWO32;
      if (this.tick[id] !== t) continue; // stale: moved or already drained
      this.tick[id] = 0;
      out[k++] = id;
    }
    return out.subarray(0, k);
  }
}

function lcg(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0);
}

export async function run() {
  const r = lcg(4242);
  const ids = new Uint32Array(N);
  const ticks = new Uint32Array(N);
  for (let i = 0; i < N; i++) {
    ids[i] = i;
    ticks[i] = START + 1 + (i % 20 === 0 ? 720 + (r() % 17_000) : r() % HOURS);
  }
  // Per-hour moves and reschedule offsets, drawn once so both sides replay the same plan.
  const moveIds = new Uint32Array(HOURS * MOVES_PER_HOUR);
  const moveTo = new Uint32Array(HOURS * MOVES_PER_HOUR);
  for (let i = 0; i < moveIds.length; i++) {
    moveIds[i] = r() % N;
    moveTo[i] = 2 + (r() % HOURS);
  }
  const offsets = new Uint32Array(1 << 16);
  for (let i = 0; i < offsets.length; i++) offsets[i] = 1 + (r() % HOURS);

  const t = (fn) => {
    const t0 = process.hrtime.bigint();
    fn();
    return Number(process.hrtime.bigint() - t0) / 1e9;
  };
  const out = new Uint32Array(N);
  const resIds = new Uint32Array(N);
  const resTicks = new Uint32Array(N);

  // Runs the simulation against one index; returns [seconds for the initial load, seconds for
  // the 30 days, operations in the 30 days, a checksum of the drained sequence]. The
  // simulation tracks which rows are scheduled itself (as the frontier's URL table would), so
  // both indexes get identical calls: one batch of reschedules and one batch of moves per hour.
  const dueAt = new Uint32Array(N);
  const movedIds = new Uint32Array(MOVES_PER_HOUR);
  const movedTicks = new Uint32Array(MOVES_PER_HOUR);
  function simulate(load, schedBatch, advance) {
    dueAt.set(ticks);
    const loadS = t(load);
    let ops = 0;
    let check = 0;
    let o = 0;
    const simS = t(() => {
      for (let h = 1; h <= HOURS; h++) {
        const now = START + h;
        const due = advance(now);
        for (let i = 0; i < due.length; i++) {
          const id = due[i];
          resIds[i] = id;
          resTicks[i] = dueAt[id] = now + offsets[(o++) & 0xffff];
          check = (Math.imul(check, 31) + id) >>> 0;
        }
        schedBatch(resIds.subarray(0, due.length), resTicks.subarray(0, due.length));
        ops += 2 * due.length;
        let moved = 0;
        for (let m = (h - 1) * MOVES_PER_HOUR; m < h * MOVES_PER_HOUR; m++) {
          const id = moveIds[m];
          if (dueAt[id] > now) {
            movedIds[moved] = id;
            movedTicks[moved++] = dueAt[id] = now + moveTo[m];
          }
        }
        schedBatch(movedIds.subarray(0, moved), movedTicks.subarray(0, moved));
        ops += moved;
      }
    });
    return { loadS, simS, ops, check };
  }

  const wheel = new TimingWheel({ now: START });
  const w = simulate(
    () => wheel.scheduleBatch(ids, ticks),
    (i, tk) => wheel.scheduleBatch(i, tk),
    (now) => wheel.advance(now, out),
  );
  const wheelBytes = wheel.memoryBytes / wheel.len;
  wheel.free();

  const heap = new HeapIndex(N);
  const hp = simulate(
    () => {
      for (let i = 0; i < N; i++) heap.schedule(ids[i], ticks[i]);
    },
    (i, tk) => {
      for (let k = 0; k < i.length; k++) heap.schedule(i[k], tk[k]);
    },
    (now) => heap.advance(now, out),
  );
  if (w.check !== hp.check || w.ops !== hp.ops) throw new Error('wheel bench: the wheel and the heap drained different sequences');
  const heapBytes = (heap.heap.keys.length * 8 + heap.tick.byteLength) / N;

  const rows = [
    { phase: `load ${(N / 1e6).toFixed(1)}M rows`, 'wheel ops/s': N / w.loadS, 'heap ops/s': N / hp.loadS, ratio: hp.loadS / w.loadS },
    { phase: `30 days hourly (${(w.ops / 1e6).toFixed(2)}M ops)`, 'wheel ops/s': w.ops / w.simS, 'heap ops/s': hp.ops / hp.simS, ratio: hp.simS / w.simS },
  ];
  printTable(rows);
  console.log(`bytes/row: wheel ${wheelBytes.toFixed(1)}, heap ${heapBytes.toFixed(1)} (float64 keys incl. stale entries + tick per id); ops = drains + schedules + moves; ratio = wheel / heap`);
  return { rows, wheelBytesPerRow: wheelBytes, heapBytesPerRow: heapBytes };
}
