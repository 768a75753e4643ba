import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CorruptPartitionError,
  FORMAT_MAJOR,
  Frontier,
  type PartitionImage,
  SectionId,
  decodePartition,
  encodePartition,
  partitionSections,
  readPartition,
  writePartition,
} from '../../src/index.js';

/** A frontier with every kind of state: crawled rows, etags, fingerprints, hosts with IPs, OPIC state. */
function sampleFrontier(): Frontier {
  const f = new Frontier(7, 480_000, { prioritizer: true, stateMachine: true, resolver: (h) => (h.startsWith('a') ? '10.0.0.1' : undefined) });
  for (let h = 0; h < 5; h++) {
    for (let i = 0; i < 6; i++) f.seed(`https://${String.fromCharCode(97 + h)}${h}.example/page/${i}?q=${i}`, `${String.fromCharCode(97 + h)}${h}.example`, i / 3, 480_000, 480_000, h * 100);
  }
  let n = 0;
  f.drain(480_000 * 3_600_000, (r) => {
    n++;
    return {
      row: r.row,
      url: r.url,
      status: n % 7 === 0 ? 503 : 200,
      etag: `"e${n}"`,
      lastModified: 1_700_000_000 + n,
      contentFp: BigInt(n) * 0x9e3779b97f4a7c15n % (1n << 64n),
      simhash: BigInt(n) << 40n,
      links: n % 3 === 0 ? [{ url: `https://z${n % 4}.example/x/${n}` }, { url: `https://a0.example/more/${n}` }] : undefined,
    };
  }, 40);
  return f;
}

describe('.meguri codec', () => {
  const f = sampleFrontier();
  const bytes = f.checkpointBytes();

  it('round-trips: decode(encode(image)) re-encodes to the same bytes', () => {
    const image = decodePartition(bytes);
    expect(image.meta.partitionId).toBe(7);
    expect(image.meta.createdHours).toBe(480_000);
    expect(image.rows).toBe(f.len());
    expect(encodePartition(image)).toEqual(bytes);
    // And the recovered frontier checkpoints to the same bytes.
    const g = Frontier.recover(bytes, { prioritizer: true, stateMachine: true, resolver: (h) => (h.startsWith('a') ? '10.0.0.1' : undefined) });
    expect(g.checkpointBytes()).toEqual(bytes);
  });

  it('starts with the magic and format major, and tiles the file with its sections', () => {
    expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x4d, 0x45, 0x47, 0x55, 0x52, 0x49, 0x0a]);
    expect(new DataView(bytes.buffer, bytes.byteOffset).getUint16(8, true)).toBe(FORMAT_MAJOR);
    const secs = partitionSections(bytes).sort((a, b) => a.offset - b.offset);
    let at = 32 + 32 * secs.length;
    for (const s of secs) {
      expect(s.offset).toBe(at);
      at += s.length;
    }
    expect(at).toBe(bytes.length);
  });

  it('throws CorruptPartitionError naming the section when truncated at any section boundary', () => {
    const cuts = new Set<number>([0, 7, 8, 31, 32]);
    for (const s of partitionSections(bytes)) {
      cuts.add(s.offset);
      cuts.add(s.offset + s.length - 1);
      if (s.offset + s.length < bytes.length) cuts.add(s.offset + s.length);
    }
    for (const cut of cuts) {
      if (cut >= bytes.length) continue;
      let err: unknown;
      try {
        Frontier.recover(bytes.subarray(0, cut));
      } catch (e) {
        err = e;
      }
      expect(err, `cut at ${cut}`).toBeInstanceOf(CorruptPartitionError);
      expect((err as CorruptPartitionError).code).toBe('MEGURI_ERR_CORRUPT_PARTITION');
      expect((err as CorruptPartitionError).section).toMatch(/^(header|meta|urls|hosts|arena|seen-filter|prioritizer|freshness|scheduler|ips)$/);
    }
  });

  it('throws a typed error for truncation at random offsets and for random byte flips', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), fc.boolean(), (at, xor, truncate) => {
        const bad = truncate ? bytes.slice(0, at) : bytes.slice();
        if (!truncate) bad[at] = bad[at]! ^ xor;
        expect(() => Frontier.recover(bad, { prioritizer: true, stateMachine: true })).toThrow(CorruptPartitionError);
      }),
      { seed: 42, numRuns: 400 },
    );
  });

  it('names the damaged section when a section body is flipped', () => {
    for (const s of partitionSections(bytes)) {
      if (s.length === 0) continue;
      const bad = bytes.slice();
      bad[s.offset + (s.length >> 1)]! ^= 0x40;
      expect(() => decodePartition(bad)).toThrow(expect.objectContaining({ section: s.name }));
    }
  });

  it('rejects another format major and a foreign file', () => {
    const bad = bytes.slice();
    bad[8] = FORMAT_MAJOR + 1;
    expect(() => decodePartition(bad)).toThrow(/format major/);
    expect(() => decodePartition(new TextEncoder().encode('not a partition at all, just text....'))).toThrow(/bad magic/);
    expect(() => decodePartition(new Uint8Array(3))).toThrow(CorruptPartitionError);
  });

  it('skips unknown sections and unknown URL columns of a newer minor', () => {
    const image = decodePartition(bytes);
    const newer: PartitionImage = {
      ...image,
      columns: [...image.columns, { id: 200, type: 'u8', lanes: 1, data: new Uint8Array(image.rows).fill(9) }],
    };
    const enc = encodePartition(newer);
    // Append an unknown section (id 99) by rebuilding the table: decode must ignore it.
    const withExtra = appendSection(enc, 99, new TextEncoder().encode('from the future'));
    const back = decodePartition(withExtra);
    expect(back.rows).toBe(image.rows);
    expect(Frontier.recover(withExtra, { prioritizer: true, stateMachine: true }).len()).toBe(image.rows);
  });

  it('reads a newer minor: appended meta and host fields and an unknown section are skipped', () => {
    const extended = sectionsOf(bytes).map((s) => {
      if (s.id === SectionId.Meta) return { id: s.id, data: Uint8Array.from([...s.data, 1, 2, 3, 4, 5, 6, 7, 8]) };
      if (s.id === SectionId.Hosts) return { id: s.id, data: resizeHostRecords(s.data, 12) };
      return s;
    });
    extended.push({ id: 77, data: new TextEncoder().encode('a section from minor 1') });
    const newer = assemble(extended, FORMAT_MINOR + 1);
    const image = decodePartition(newer);
    expect(image.formatMinor).toBe(FORMAT_MINOR + 1);
    expect(encodePartition(image)).toEqual(bytes);
    const options = { prioritizer: true, stateMachine: true, resolver: (h: string) => (h.startsWith('a') ? '10.0.0.1' : undefined) };
    expect(Frontier.recover(newer, options).checkpointBytes()).toEqual(bytes);
    // The same bytes claiming this minor are damaged: this build knows every meta field of its own minor.
    expect(() => decodePartition(assemble(extended, FORMAT_MINOR))).toThrow(expect.objectContaining({ section: 'meta' }));
  });

  it('writes the ips section only when a host has an address (a file with hosts is minor 3); a minor-0 file with addresses still loads', () => {
    const minorOf = (b: Uint8Array): number => new DataView(b.buffer, b.byteOffset).getUint16(10, true);
    expect(minorOf(bytes)).toBe(3);
    const image = decodePartition(bytes);
    expect(image.ips!.map((x) => x.ip)).toEqual(['10.0.0.1']);
    expect(image.ips![0]!.intervalMs).toBeGreaterThanOrEqual(250);
    // No address anywhere: no section.
    const plain = new Frontier(1, 10, {});
    plain.seed('https://p.example/', 'p.example', 1, 10, 10, 0);
    const plainBytes = plain.checkpointBytes();
    expect(minorOf(plainBytes)).toBe(3);
    expect(decodePartition(plainBytes).ips).toBeUndefined();
    expect(partitionSections(plainBytes).map((x) => x.name)).not.toContain('ips');
    plain.free();
    // A minor-0 file whose hosts have addresses: each address is held as that writer's rule
    // held it (its hosts' last spend + max(ipFloor, their interval then)), never earlier.
    const old = assemble(sectionsOf(bytes).filter((x) => x.id !== SectionId.Ips), 0);
    const options = { prioritizer: true, stateMachine: true, resolver: (h: string) => (h.startsWith('a') ? '10.0.0.1' : undefined) };
    const g = Frontier.recover(old, options);
    const held = Math.max(...image.hosts.filter((h) => h.ip === '10.0.0.1').map((h) => h.ipSpendMs + Math.max(250, h.ipSpendIntervalMs)));
    expect(g.hostSnapshots().find((h) => h.ip === '10.0.0.1')!.ipEligibleMs).toBe(held);
    g.free();
    // Addresses out of order are damage.
    const two = { ...image, ips: [{ ...image.ips![0]!, ip: '10.0.0.2' }, image.ips![0]!] };
    expect(() => decodePartition(encodePartition(two))).toThrow(expect.objectContaining({ section: 'ips' }));
  });

  it('reads a minor-0 file: host records without the latency estimator restart it (RTTVAR = SRTT/2, score 0)', () => {
    const current = decodePartition(bytes);
    const measured = encodePartition({ ...current, hosts: current.hosts.map((h, i) => ({ ...h, latencyMs: 80 + i, latencyVarMs: 3, latencyRiseScore: 2 })) });
    const old = assemble(
      sectionsOf(measured).map((s) => (s.id === SectionId.Hosts ? { id: s.id, data: resizeHostRecords(s.data, -16) } : s)),
      0,
    );
    const image = decodePartition(old);
    expect(image.formatMinor).toBe(0);
    expect(image.hosts.map((h) => [h.latencyMs, h.latencyVarMs, h.latencyRiseScore])).toEqual(current.hosts.map((_, i) => [80 + i, (80 + i) / 2, 0]));
  });

  it('rejects a host latency estimator out of range, naming the field', () => {
    const image = decodePartition(bytes);
    for (const [field, value] of [['latencyVarMs', -1], ['latencyVarMs', Infinity], ['latencyRiseScore', 0.5], ['latencyRiseScore', 256]] as const) {
      const bad = { ...image, hosts: image.hosts.map((h, i) => (i === 0 ? { ...h, [field]: value } : h)) };
      expect(() => decodePartition(encodePartition(bad)), `${field} ${value}`).toThrow(CorruptPartitionError);
      expect(() => decodePartition(encodePartition(bad))).toThrow(new RegExp(field));
    }
  });

  it('catches semantic damage that checksums cannot (re-encoded bad images)', () => {
    const image = decodePartition(bytes);
    const status = image.columns.find((c) => c.id === 3)!;
    const badStatus = { ...image, columns: image.columns.map((c) => (c === status ? { ...c, data: new Uint8Array(image.rows).fill(77) } : c)) };
    expect(() => Frontier.recover(encodePartition(badStatus))).toThrow(/status 77/);
    const keyCol = image.columns.find((c) => c.id === 1)!;
    const swapped = new Uint32Array(keyCol.data as Uint32Array);
    swapped.copyWithin(0, 4, 8);
    const badOrder = { ...image, columns: image.columns.map((c) => (c === keyCol ? { ...c, data: swapped } : c)) };
    expect(() => Frontier.recover(encodePartition(badOrder))).toThrow(CorruptPartitionError);
    const noUrls = { ...image, columns: image.columns.filter((c) => c.id !== 2) };
    expect(() => Frontier.recover(encodePartition(noUrls))).toThrow(/required column url/);
    const badHosts = { ...image, hosts: [...image.hosts].reverse() };
    expect(() => Frontier.recover(encodePartition(badHosts))).toThrow(expect.objectContaining({ section: 'hosts' }));
  });

  describe('files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'meguri-format-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('writes atomically (no temp file left) and reads back', () => {
      const path = join(dir, 'p7.meguri');
      expect(writePartition(path, bytes)).toBe(bytes.length);
      writePartition(path, decodePartition(bytes));
      expect(readdirSync(dir)).toEqual(['p7.meguri']);
      expect(new Uint8Array(readFileSync(path))).toEqual(bytes);
      expect(readPartition(path).rows).toBe(f.len());
    });

    // Failures part-way through a write: test/format/file.test.ts (it injects them).
  });
});

/** Lays out `sections` as a `.meguri` file of format `minor` (tests only): table and checksums computed. */
function assemble(sections: readonly { id: number; data: Uint8Array }[], minor: number): Uint8Array {
  const n = sections.length;
  const header = 32 + 32 * n;
  const out = new Uint8Array(header + sections.reduce((t, s) => t + s.data.length, 0));
  const dv = new DataView(out.buffer);
  out.set([0x89, 0x4d, 0x45, 0x47, 0x55, 0x52, 0x49, 0x0a], 0);
  dv.setUint16(8, FORMAT_MAJOR, true);
  dv.setUint16(10, minor, true);
  dv.setUint32(12, n, true);
  dv.setUint32(16, header, true);
  let at = header;
  const sum = new Uint32Array(2);
  sections.forEach((s, i) => {
    const e = 32 + i * 32;
    dv.setUint32(e, s.id, true);
    dv.setUint32(e + 8, at, true);
    dv.setUint32(e + 16, s.data.length, true);
    xxh(s.data, sum);
    dv.setUint32(e + 24, sum[0]!, true);
    dv.setUint32(e + 28, sum[1]!, true);
    out.set(s.data, at);
    at += s.data.length;
  });
  const joined = new Uint8Array(24 + 32 * n);
  joined.set(out.subarray(0, 24), 0);
  joined.set(out.subarray(32, header), 24);
  xxh(joined, sum);
  dv.setUint32(24, sum[0]!, true);
  dv.setUint32(28, sum[1]!, true);
  return out;
}

/** The sections of an encoded partition, in table order. */
function sectionsOf(bytes: Uint8Array): { id: number; data: Uint8Array }[] {
  return partitionSections(bytes).map((s) => ({ id: s.id, data: bytes.slice(s.offset, s.offset + s.length) }));
}

/** Re-encodes `bytes` with one more section (tests only): header rebuilt, checksums recomputed. */
function appendSection(bytes: Uint8Array, id: number, body: Uint8Array): Uint8Array {
  return assemble([...sectionsOf(encodePartition(decodePartition(bytes))), { id, data: body }], FORMAT_MINOR);
}

/**
 * A hosts section with every host record resized by `delta` bytes: positive appends 0xAB
 * bytes (a newer minor's new fields), negative cuts the record's tail (an older minor's).
 */
function resizeHostRecords(hosts: Uint8Array, delta: number): Uint8Array {
  const src = new DataView(hosts.buffer, hosts.byteOffset, hosts.byteLength);
  const count = src.getUint32(0, true);
  const out = new Uint8Array(hosts.length + count * delta);
  const dst = new DataView(out.buffer);
  dst.setUint32(0, count, true);
  let r = 4;
  let w = 4;
  for (let i = 0; i < count; i++) {
    const len = src.getUint32(r, true);
    out.set(hosts.subarray(r, r + Math.min(len, len + delta)), w);
    dst.setUint32(w, len + delta, true);
    if (delta > 0) out.fill(0xab, w + len, w + len + delta);
    r += len;
    w += len + delta;
  }
  return out;
}

import { FORMAT_MINOR, xxh64Lanes } from '../../src/index.js';
function xxh(b: Uint8Array, out: Uint32Array): void {
  xxh64Lanes(b, 0, out, 0);
}
