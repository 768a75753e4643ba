// The frontier's churn fingerprint (issue 21): the verdict its report computes reads the stored
// churn fingerprint, the column is written (format minor 1) only when some row has one, a
// minor-0 file loads with every churn fingerprint unknown (the simhash rule decides), and a
// row flagged with a churn fingerprint the file does not hold is corruption.
import { describe, expect, it } from 'vitest';
import {
  CHURN_COLUMN_ID,
  type CrawledRecord,
  CorruptPartitionError,
  type FetchRequest,
  Frontier,
  type FrontierOptions,
  decodePartition,
  encodePartition,
} from '../../src/index.js';

const SIM = 0x0123_4567_89ab_cdefn;

/** A one-URL frontier whose freshness hook records each crawl's verdict. */
function oneUrl(seen: CrawledRecord['change'][], bytes?: Uint8Array): { f: Frontier; options: Partial<FrontierOptions> } {
  const options: Partial<FrontierOptions> = {
    freshness: (rec, now) => {
      seen.push(rec.change);
      return now + 1;
    },
    scheduleIndex: true,
  };
  if (bytes !== undefined) return { f: Frontier.recover(bytes, options), options };
  const f = new Frontier(1, 0, options);
  f.seed('https://a.example/', 'a.example', 1, 0, 0);
  return { f, options };
}

let clock = 0;
function crawl(f: Frontier, contentFp: bigint, simhash: bigint, churnFp?: bigint): FetchRequest {
  let r = f.dispatch(clock);
  while (r === undefined) r = f.dispatch((clock = f.nextEligible()!));
  f.report({ row: r.row, url: r.url, status: 200, contentFp, simhash, churnFp }, clock);
  return r;
}

describe('frontier churn fingerprints', () => {
  it('a text edit the simhash misses is real; churn the simhash sees as far is cosmetic', () => {
    const seen: CrawledRecord['change'][] = [];
    const { f } = oneUrl(seen);
    crawl(f, 1n, SIM, 100n);
    crawl(f, 2n, SIM ^ 1n, 101n); // an edit: the simhash moved one bit
    crawl(f, 3n, ~SIM & ((1n << 64n) - 1n), 101n); // churn: the simhash moved 64 bits
    const r = crawl(f, 4n, SIM, 101n);
    expect(r.prevChurnFp).toBe(101n);
    expect(seen).toEqual(['first', 'real', 'cosmetic', 'cosmetic']);
    f.free();
  });

  it('checkpoints the column and recovers it; without churn fingerprints the file has no column (minor 4: a freshness frontier writes the interval statistics columns)', () => {
    const seen: CrawledRecord['change'][] = [];
    const { f } = oneUrl(seen);
    const empty = f.checkpointBytes();
    expect(new DataView(empty.buffer, empty.byteOffset).getUint16(10, true)).toBe(4);
    expect(decodePartition(empty).columns.some((c) => c.id === CHURN_COLUMN_ID)).toBe(false);
    crawl(f, 1n, SIM, 100n);
    const bytes = f.checkpointBytes();
    expect(new DataView(bytes.buffer, bytes.byteOffset).getUint16(10, true)).toBe(4);
    expect(decodePartition(bytes).formatMinor).toBe(4);
    expect(decodePartition(bytes).columns.some((c) => c.id === CHURN_COLUMN_ID)).toBe(true);
    f.free();
    const { f: g } = oneUrl(seen, bytes);
    expect(g.checkpointBytes()).toEqual(bytes);
    const r = crawl(g, 2n, SIM ^ 0xffn, 100n);
    expect(r.prevChurnFp).toBe(100n);
    expect(seen).toEqual(['first', 'cosmetic']);
    g.free();
  });

  it('a file without the churn column loads with churn unknown: the simhash rule decides, then the new fingerprint is kept', () => {
    const seen: CrawledRecord['change'][] = [];
    const { f } = oneUrl(seen);
    crawl(f, 1n, SIM); // a fetcher of before churn fingerprints
    const old = f.checkpointBytes();
    f.free();
    expect(new DataView(old.buffer, old.byteOffset).getUint16(10, true)).toBe(4);
    const { f: g } = oneUrl(seen, old);
    expect(crawl(g, 2n, SIM ^ 1n, 200n).prevChurnFp).toBeUndefined();
    expect(crawl(g, 3n, SIM ^ 1n, 201n).prevChurnFp).toBe(200n);
    // Near simhash, unknown old churn: cosmetic (the old rule); then an edit: real.
    expect(seen).toEqual(['first', 'cosmetic', 'real']);
    g.free();
  });

  it('a fetch with a fingerprint but no churn fingerprint forgets the stored one', () => {
    const seen: CrawledRecord['change'][] = [];
    const { f } = oneUrl(seen);
    crawl(f, 1n, SIM, 100n);
    crawl(f, 2n, SIM, undefined);
    expect(crawl(f, 3n, SIM, 100n).prevChurnFp).toBeUndefined();
    // Without both churn fingerprints the equal simhashes make both later crawls cosmetic.
    expect(seen).toEqual(['first', 'cosmetic', 'cosmetic']);
    f.free();
  });

  it('a row flagged with a churn fingerprint in a file without the column is corruption', () => {
    const seen: CrawledRecord['change'][] = [];
    const { f, options } = oneUrl(seen);
    crawl(f, 1n, SIM, 100n);
    const image = decodePartition(f.checkpointBytes());
    f.free();
    const damaged = encodePartition({ ...image, columns: image.columns.filter((c) => c.id !== CHURN_COLUMN_ID) });
    expect(new DataView(damaged.buffer, damaged.byteOffset).getUint16(10, true)).toBe(4);
    expect(() => Frontier.recover(damaged, options)).toThrow(CorruptPartitionError);
    expect(() => Frontier.recover(damaged, options)).toThrow(/churn fingerprint/);
  });
});
