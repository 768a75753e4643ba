import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RowIndex } from '../../src/frontier/rowindex.js';
import { CHURN_COLUMN, COLUMNS, FRESHNESS_COLUMNS, FpFlag, StringArena, UrlTable, entryEnd } from '../../src/frontier/table.js';

/** The entry at `off` in the file's plain form. */
function plain(a: StringArena, off: number): Uint8Array {
  const out = new Uint8Array(a.plainLength(off));
  expect(a.writePlain(off, out, 0)).toBe(out.length);
  return out;
}

describe('string arena', () => {
  it('round-trips any string (ASCII fast path, UTF-8, 1–3 byte varints) and compares without decoding', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 60 }), fc.constant('x'.repeat(20_000))), { maxLength: 30 }), (strings) => {
        const a = new StringArena(16);
        const offs = strings.map((s) => a.add(s));
        strings.forEach((s, i) => {
          expect(a.get(offs[i]!)).toBe(s);
          expect(a.equals(offs[i]!, s)).toBe(true);
          expect(a.equals(offs[i]!, `${s}!`)).toBe(false);
          if (s.length > 0) expect(a.equals(offs[i]!, s.slice(1))).toBe(false);
          const raw = plain(a, offs[i]!);
          expect(entryEnd(raw, 0, raw.length)).toBe(raw.length);
        });
      }),
      { seed: 401, numRuns: 150 },
    );
  });

  it('shares origins between URLs of a host: same strings, same plain entries, fewer bytes (fast-check)', () => {
    const origins = ['https://www.a.example/', 'http://a.example:8080/', 'https://b.example/', 'https://xn--bcher-kva.example/', 'https://ü.example/', 'mailto:x'];
    const urlArb = fc.tuple(fc.nat(origins.length - 1), fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 10 })), fc.nat(3));
    fc.assert(
      fc.property(fc.array(urlArb, { maxLength: 200 }), (specs) => {
        const t = new UrlTable(16);
        const offs: number[] = [];
        const urls = specs.map(([o, path, host]) => {
          const u = origins[o]! + path;
          offs.push(t.addUrl(u, host));
          return u;
        });
        const enc = new TextEncoder();
        urls.forEach((u, i) => {
          expect(t.arena.get(offs[i]!)).toBe(u);
          expect(t.arena.equals(offs[i]!, u)).toBe(true);
          expect(t.arena.equals(offs[i]!, `${u}x`)).toBe(false);
          expect(t.arena.equals(offs[i]!, u.slice(0, -1))).toBe(u.length === 0);
          expect(t.arena.equals(offs[i]!, `z${u}`)).toBe(false);
          const bytes = enc.encode(u);
          const raw = plain(t.arena, offs[i]!);
          expect(entryEnd(raw, 0, raw.length)).toBe(raw.length);
          expect([...raw.subarray(raw.length - bytes.length)]).toEqual([...bytes]);
        });
        // Non-ASCII origins and a URL without a path are stored in full.
        expect(t.arena.prefixCount).toBeLessThanOrEqual(4);
      }),
      { seed: 1919, numRuns: 100 },
    );
    const t = new UrlTable(16);
    let full = 0;
    for (let i = 0; i < 1000; i++) {
      const u = `https://www.site${i % 10}.example/news/story-${i}.html`;
      full += u.length + 1;
      t.addUrl(u, i % 10);
    }
    // Ten prefixes; each URL pays 2 bytes of header for its 25-byte origin.
    expect(t.arena.prefixCount).toBe(10);
    expect(t.arena.length).toBeLessThan(full - 1000 * 20);
  });

  it('decodes malformed bytes (a loaded ETag, copied byte for byte) exactly as TextDecoder does (fast-check)', () => {
    // get() decodes with Node's utf8Slice, not TextDecoder: both must replace malformed UTF-8
    // with the same U+FFFD sequence, or a recovered ETag would change its text.
    const tricky = [0x41, 0x7f, 0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0xa0, 0x9f, 0x90, 0x8f];
    const byte = fc.oneof(fc.constantFrom(...tricky), fc.integer({ min: 0, max: 255 }));
    const td = new TextDecoder();
    fc.assert(
      fc.property(fc.array(fc.array(byte, { maxLength: 14 }), { minLength: 1, maxLength: 20 }), (entries) => {
        const plainBytes: number[] = [];
        const offs: number[] = [];
        for (const e of entries) {
          offs.push(plainBytes.length);
          plainBytes.push(e.length, ...e);
        }
        const loaded = StringArena.fromBytes(Uint8Array.from(plainBytes));
        // The same entries again as chunk entries (the copy shareOrigins makes of an ETag).
        const copied = new StringArena(16);
        const copies = offs.map((o) => copied.copyEntryFrom(loaded, o));
        entries.forEach((e, i) => {
          const want = td.decode(Uint8Array.from(e));
          expect(loaded.get(offs[i]!)).toBe(want);
          expect(copied.get(copies[i]!)).toBe(want);
        });
      }),
      { seed: 1903, numRuns: 300 },
    );
  });

  it('reports an entry that runs past the limit', () => {
    const a = new StringArena(16);
    const raw = plain(a, a.add('https://a.example/long/path'));
    expect(entryEnd(raw, 0, raw.length - 1)).toBe(-1);
    expect(entryEnd(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0x01), 0, 6)).toBe(-1);
  });

  it('spans chunks: entries across 1 MiB boundaries, an entry larger than a chunk, after a loaded base', () => {
    const base = new StringArena(16);
    const baseOffs = ['https://a.example/', 'ü'.repeat(40)].map((x) => base.add(x));
    const loaded = new Uint8Array(base.length);
    let at = 0;
    for (const o of baseOffs) {
      const raw = plain(base, o);
      loaded.set(raw, at);
      at += raw.length;
    }
    const a = StringArena.fromBytes(loaded, 64);
    expect(a.get(0)).toBe('https://a.example/');
    const strings: string[] = [];
    const offs: number[] = [];
    for (let i = 0; i < 40_000; i++) {
      const s = i === 20_000 ? 'y'.repeat(3 << 20) : `https://www.site${i % 97}.com/path/${i}/${'é'.repeat(i % 5)}`;
      strings.push(s);
      offs.push(a.add(s));
    }
    strings.forEach((s, i) => {
      expect(a.equals(offs[i]!, s)).toBe(true);
      if (i % 1000 === 0 || i === 20_000) expect(a.get(offs[i]!)).toBe(s);
    });
    expect(a.get(offs[20_001]!)).toBe(strings[20_001]);
    // Held bytes stay within the entries' bytes plus one open chunk, the oversized entry's
    // worst-case reserve (3 bytes per UTF-16 unit) and each chunk's unused tail.
    expect(a.capacityBytes).toBeLessThan(a.length + (1 << 20) + 2 * (3 << 20) + 64 * 1024);
  });
});

describe('row index', () => {
  it('maps every row key to its row, misses absent keys, and lists rows in URLKey order (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(5), fc.nat(3), fc.integer({ min: 0, max: 0xffff_ffff }), fc.nat(2)), { maxLength: 400 }),
        fc.integer({ min: 1, max: 50 }),
        (specs, batch) => {
          // Few HostKeys and PathKey high lanes: tie-breaks reach the low lanes; extreme lane values.
          const lanes = [0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x1234_5678];
          const t = new UrlTable(16);
          const idx = new RowIndex(t);
          const seen = new Map<string, number>();
          let pending: number[] = [];
          const flush = (): void => {
            const keys = new Uint32Array(pending.length * 4);
            pending.forEach((r, j) => keys.set(t.key.subarray(r * 4, r * 4 + 4), j * 4));
            expect(idx.insertBatch(keys, Uint32Array.from(pending))).toBe(pending.length);
            pending = [];
          };
          for (const [h, ph, pl, hl] of specs) {
            const key = [lanes[h]!, lanes[(h + hl) % lanes.length]!, pl, lanes[ph]!];
            const name = key.join(',');
            const probe = Uint32Array.from(key);
            if (seen.has(name)) {
              expect(idx.get(probe) ?? pending.find((r) => t.key.subarray(r * 4, r * 4 + 4).join(',') === name)).toBe(seen.get(name));
              continue;
            }
            if (!pending.some((r) => t.key.subarray(r * 4, r * 4 + 4).join(',') === name)) expect(idx.get(probe)).toBeUndefined();
            const row = t.addRow();
            t.key.set(probe, row * 4);
            seen.set(name, row);
            pending.push(row);
            if (pending.length >= batch) flush();
          }
          flush();
          expect(idx.len).toBe(seen.size);
          const all = new Uint32Array(t.rows * 4);
          all.set(t.key.subarray(0, t.rows * 4));
          const got = idx.getBatch(all, new Uint32Array(t.rows), 0xffff_ffff);
          expect([...got]).toEqual([...Array(t.rows).keys()]);
          // Re-inserting a present key changes nothing.
          expect(idx.insertBatch(all, new Uint32Array(t.rows).fill(7))).toBe(0);
          const k = t.key;
          const want = [...Array(t.rows).keys()].sort((a, b) => k[a * 4 + 1]! - k[b * 4 + 1]! || k[a * 4]! - k[b * 4]! || k[a * 4 + 3]! - k[b * 4 + 3]! || k[a * 4 + 2]! - k[b * 4 + 2]!);
          expect([...idx.exportSorted().payloads]).toEqual(want);
          expect([...RowIndex.ofRows(t, t.rows).exportSorted().payloads]).toEqual(want);
        },
      ),
      { seed: 19, numRuns: 200 },
    );
  });

  it('holds a key in about 5 bytes over its load factor', () => {
    const t = new UrlTable(16);
    const idx = new RowIndex(t);
    let x = 7;
    const n = 50_000;
    const keys = new Uint32Array(n * 4);
    for (let i = 0; i < n * 4; i++) keys[i] = x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    t.reserve(n);
    for (let i = 0; i < n; i++) t.key.set(keys.subarray(i * 4, i * 4 + 4), t.addRow() * 4);
    for (let i = 0; i < n; i += 1000) idx.insertBatch(keys.subarray(i * 4, (i + 1000) * 4), Uint32Array.from({ length: 1000 }, (_, j) => i + j));
    // Load stays in [0.57, 0.85): 5.9–8.8 bytes per key.
    expect(idx.memoryBytes / n).toBeLessThan(8.8);
    expect(idx.memoryBytes / n).toBeGreaterThan(5.8);
  });
});

describe('fetch state by slot', () => {
  // Slot columns of the base schema and the freshness schema, and what a write may store.
  const FETCH = ['lastCrawled', 'crawlCount', 'changeCount', 'noChangeStreak', 'lambda', 'lastModified', 'contentFp', 'simhash', 'retries', 'lastChanged'] as const;
  const FRESH = ['firstCrawled', 'lmHours', 'unchangedHours', 'changedLogHours'] as const;
  // Values chosen for their bits: −0 and NaN are not zero bits and must come back as written.
  const special = fc.constantFrom(0, -0, Number.NaN, 1.5, 65535, 1, 0xffff_ffff);
  type Op =
    | { kind: 'row' }
    | { kind: 'set'; row: number; col: number; lane: number; value: number }
    | { kind: 'etag'; row: number; value: string }
    | { kind: 'redirect'; row: number; to: number }
    | { kind: 'flags'; row: number; value: number }
    | { kind: 'churn'; row: number; lo: number; hi: number }
    | { kind: 'release'; row: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.constant<Op>({ kind: 'row' }),
    fc.record({ kind: fc.constant('set' as const), row: fc.nat(60), col: fc.nat(FETCH.length + FRESH.length - 1), lane: fc.nat(1), value: special }),
    fc.record({ kind: fc.constant('etag' as const), row: fc.nat(60), value: fc.string({ maxLength: 12 }) }),
    fc.record({ kind: fc.constant('redirect' as const), row: fc.nat(60), to: fc.nat(60) }),
    fc.record({ kind: fc.constant('flags' as const), row: fc.nat(60), value: fc.nat(3) }),
    fc.record({ kind: fc.constant('churn' as const), row: fc.nat(60), lo: fc.nat(), hi: fc.nat() }),
    fc.record({ kind: fc.constant('release' as const), row: fc.nat(60) }),
  );

  it('reads as a dense table would, writes the same file, and a load gives slots to exactly the rows with state (fast-check)', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(op, { maxLength: 300 }), (freshness, ops) => {
        const t = new UrlTable(16, 0, freshness);
        const cols = t as unknown as Record<string, Uint32Array | Uint16Array | Uint8Array | Float32Array>;
        const names = freshness ? [...FETCH, ...FRESH] : FETCH;
        const lanesOf = (name: string): number => (name === 'contentFp' || name === 'simhash' || name === 'churnFp' ? 2 : 1);
        // The model: every slot column dense by row (what the table held before slots).
        const model = new Map<string, number[][]>();
        const dense = (name: string): number[][] => model.get(name) ?? (model.set(name, []), model.get(name)!);
        const addRow = (): void => {
          const r = t.addRow();
          t.key[r * 4 + 3] = r + 1;
          t.url[r] = t.addUrl(`https://a.example/${r}`, 0);
        };
        addRow();
        const set = (name: string, row: number, lane: number, value: number): void => {
          const sl = t.slotFor(row);
          cols[name]![sl * lanesOf(name) + lane] = value;
          const d = dense(name);
          d[row] ??= [0, 0];
          d[row]![lane] = cols[name]![sl * lanesOf(name) + lane]!; // as the typed array stored it
        };
        for (const o of ops) {
          if (o.kind === 'row') {
            addRow();
            continue;
          }
          const row = o.row % t.rows;
          if (o.kind === 'set') {
            const name = names[o.col % names.length]!;
            set(name, row, o.lane % lanesOf(name), o.value);
          } else if (o.kind === 'etag') set('etag', row, 0, t.arena.add(o.value) + 1);
          else if (o.kind === 'redirect') set('redirectTo', row, 0, o.to % (t.rows + 1));
          else if (o.kind === 'flags') set('fpFlags', row, 0, ((dense('fpFlags')[row]?.[0] ?? 0) & FpFlag.ChurnFp) | o.value);
          else if (o.kind === 'churn') {
            t.ensureChurn();
            set('churnFp', row, 0, o.lo);
            set('churnFp', row, 1, o.hi);
            set('fpFlags', row, 0, (dense('fpFlags')[row]?.[0] ?? 0) | FpFlag.ChurnFp);
          } else {
            t.releaseSlot(row);
            for (const d of model.values()) d[row] = [0, 0];
          }
        }
        // Slot 0 is all zeros, and no two rows share a slot.
        const all = [...names, 'etag', 'redirectTo', 'fpFlags', ...(t.churnFp.length > 0 ? ['churnFp'] : [])];
        for (const name of all) for (let l = 0; l < lanesOf(name); l++) expect(Object.is(cols[name]![l], 0)).toBe(true);
        const owned = [...t.slot.subarray(0, t.rows)].filter((s) => s !== 0);
        expect(new Set(owned).size).toBe(owned.length);
        // Reads through the slot are the model's, bit for bit.
        const bitsEqual = (a: number, b: number): boolean => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
        for (const name of all) {
          for (let r = 0; r < t.rows; r++) {
            for (let l = 0; l < lanesOf(name); l++) {
              expect(bitsEqual(cols[name]![t.slot[r]! * lanesOf(name) + l]!, model.get(name)?.[r]?.[l] ?? 0)).toBe(true);
            }
          }
        }
        // The file is dense by row; a load re-slots it and writes the same bytes.
        const order = Uint32Array.from({ length: t.rows }, (_, i) => i);
        const first = t.exportRows(order);
        for (const name of all) {
          const block = first.columns.find((c) => c.id === [...COLUMNS, CHURN_COLUMN, ...FRESHNESS_COLUMNS].find((s) => s.name === name)!.id);
          if (name === 'churnFp' && block === undefined) continue; // no row flags one: written as minor 0
          expect(block!.data.length).toBe(t.rows * lanesOf(name));
        }
        const u = UrlTable.fromColumns(t.rows, first.columns, first.arena, freshness);
        const again = u.exportRows(order);
        expect(Buffer.from(again.arena)).toEqual(Buffer.from(first.arena));
        expect(again.columns.map((c) => c.id)).toEqual(first.columns.map((c) => c.id));
        again.columns.forEach((c, i) => {
          const d = first.columns[i]!.data;
          expect(Buffer.from(c.data.buffer, c.data.byteOffset, c.data.byteLength)).toEqual(Buffer.from(d.buffer, d.byteOffset, d.byteLength));
        });
        let stateful = 0;
        for (let r = 0; r < t.rows; r++) if (!t.fetchStateIsZero(r)) stateful++;
        expect(u.slots - 1).toBe(stateful);
      }),
      { seed: 1919_19, numRuns: 120 },
    );
  });

  it('costs 4 bytes per row until a row is fetched, and gives released slots out again', () => {
    const t = new UrlTable(1024);
    for (let i = 0; i < 5000; i++) t.addRow();
    const before = t.memoryBytes;
    expect(t.slots).toBe(1);
    // A write takes a slot; a read of a row without one sees zeros and takes none.
    expect(t.lastCrawled[t.slot[17]!]).toBe(0);
    expect(t.slots).toBe(1);
    const s = t.slotFor(17);
    t.lastCrawled[s] = 99;
    expect(t.slotFor(17)).toBe(s);
    expect(t.slots).toBe(2);
    expect(t.memoryBytes).toBe(before);
    t.releaseSlot(17);
    expect(t.slot[17]).toBe(0);
    expect(t.lastCrawled[s]).toBe(0);
    expect(t.slotFor(4000)).toBe(s);
    expect(t.lastCrawled[t.slot[17]!]).toBe(0);
  });
});
