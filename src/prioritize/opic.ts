/**
 * OPIC importance with imported signals: the front bank's ordering policy.
 *
 * ## The problem
 * Order a frontier by importance while the link graph is still being discovered, without an
 * offline PageRank pass.
 *
 * ## OPIC (Abiteboul, Preda, Cobena, "Adaptive On-Line Page Importance Computation", WWW 2003)
 * Every page holds cash C(p) and a history H(p). Seeds are endowed with cash. Crawling p
 * moves its cash into its history and splits it evenly over its n out-links:
 *
 *     H(p) ← H(p) + C(p);   C(q) ← C(q) + (1 − d)·C(p)/n  for each out-link q;   C(p) ← 0
 *
 * (d = `damping`, the share given to the virtual page that keeps the graph strongly
 * connected; with d = 0 every unit of cash travels along links). The importance estimate of
 * p is proportional to H(p) + C(p); crawling the page with the most cash first is the
 * greedy policy the paper shows converges fastest. Total cash is conserved except for the
 * damped share and for pages that have no out-links, so values stay O(seed count).
 *
 * ## Cross-host in-degree (STAR-style budget)
 * A host linked from many distinct registrable domains is worth more of the crawl. The
 * prioritizer counts, per target host, the distinct linking domains (as 32-bit FNV-1a
 * hashes: at 10⁴ domains the chance that two collide is about n²/2³³ ≈ 1 %, and a collision
 * only under-counts by one) and raises the host's URL budget:
 *
 *     budget(h) = budgetBase + budgetPerDomain · indeg(h)      (budgetBase 0 = unlimited)
 *
 * ## The blend
 *
 *     priority(p) = wImp·(H(p) + C(p)) + wRank·rank(p) + wHost·hostScore(h)
 *                   + wDeg·log2(1 + indeg(h))
 *
 * rank(p) is an imported PageRank (0 when none), hostScore(h) an imported host quality.
 * Weights are parameters; only the order they induce matters, so the scale is free.
 *
 * Per-URL state is three f32 columns indexed by the frontier's row ids; per-host state is
 * the set of linking-domain hashes, indexed by the frontier's host ids.
 */
import { CorruptPartitionError } from '../errors/index.js';
import { ByteReader, ByteWriter } from '../format/bytes.js';
import { defineOptions, numberField } from '../options/index.js';

/** Parameters of the prioritizer (all optional; see `resolvePrioritizerParams`). */
export interface PrioritizerParams {
  /** Cash a seed is endowed with when its given priority is not positive. Default 1. */
  readonly seedCash: number;
  /** Share of a crawled page's cash not passed to its links (0 ≤ d < 1). Default 0.15. */
  readonly damping: number;
  /** Weight of the OPIC importance H + C. Default 1. */
  readonly importanceWeight: number;
  /** Weight of an imported per-page PageRank. Default 1. */
  readonly rankWeight: number;
  /** Weight of an imported host score. Default 0.5. */
  readonly hostWeight: number;
  /** Weight of log2(1 + cross-host in-degree). Default 0.1. */
  readonly inDegreeWeight: number;
  /** Base URL budget of a host; 0 leaves budgets unlimited. Default 0. */
  readonly budgetBase: number;
  /** Extra URLs of budget per distinct linking registrable domain. Default 100. */
  readonly budgetPerDomain: number;
}

/** Validates prioritizer parameters and fills defaults (throws InvalidArgumentError). */
export const resolvePrioritizerParams = defineOptions<PrioritizerParams>('PrioritizerParams', {
  seedCash: numberField({ default: 1, above: 0 }),
  damping: numberField({ default: 0.15, min: 0, max: 0.99 }),
  importanceWeight: numberField({ default: 1, min: 0 }),
  rankWeight: numberField({ default: 1, min: 0 }),
  hostWeight: numberField({ default: 0.5, min: 0 }),
  inDegreeWeight: numberField({ default: 0.1, min: 0 }),
  budgetBase: numberField({ default: 0, min: 0, integer: true }),
  budgetPerDomain: numberField({ default: 100, min: 0 }),
});

/** 32-bit FNV-1a of a string's UTF-16 code units (linking-domain identity). */
export function domainHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * OPIC cash, history and imported rank per URL row, and the cross-host in-degree per host.
 * Owned by one frontier, which assigns the row and host ids.
 */
export class Prioritizer {
  /** The resolved parameters. */
  readonly params: Readonly<PrioritizerParams>;
  private cashCol: Float32Array = new Float32Array(0);
  private historyCol: Float32Array = new Float32Array(0);
  private rankCol: Float32Array = new Float32Array(0);
  private readonly linkers: Set<number>[] = [];

  /** An empty prioritizer. Throws `InvalidArgumentError` on bad parameters. */
  constructor(params?: Partial<PrioritizerParams> | null) {
    this.params = resolvePrioritizerParams(params);
  }

  /** Grows the per-row columns to hold `rows` rows (geometric; new rows are zero). */
  ensureRows(rows: number): void {
    if (rows <= this.cashCol.length) return;
    const cap = Math.max(rows, this.cashCol.length * 2, 1024);
    const grow = (a: Float32Array): Float32Array => {
      const b = new Float32Array(cap);
      b.set(a);
      return b;
    };
    this.cashCol = grow(this.cashCol);
    this.historyCol = grow(this.historyCol);
    this.rankCol = grow(this.rankCol);
  }

  /** Makes sure host id `host` has an (empty) in-degree set. */
  ensureHost(host: number): void {
    while (this.linkers.length <= host) this.linkers.push(new Set());
  }

  /** A seed's endowment: its given priority when positive, else `seedCash`. */
  endow(row: number, priority: number): void {
    this.cashCol[row] = this.cashCol[row]! + (priority > 0 ? priority : this.params.seedCash);
  }

  /** Credits cash to a row (a discovered link, new or already known). */
  credit(row: number, cash: number): void {
    if (cash > 0) this.cashCol[row] = this.cashCol[row]! + cash;
  }

  /**
   * A crawl of `row`: its cash moves into its history and the share each of `links`
   * out-links receives is returned (0 when there are none).
   */
  crawl(row: number, links: number): number {
    const c = this.cashCol[row]!;
    this.historyCol[row] = this.historyCol[row]! + c;
    this.cashCol[row] = 0;
    return links > 0 ? ((1 - this.params.damping) * c) / links : 0;
  }

  /** Records that `fromDomain` links to host `host`; true when the domain is new for it. */
  linkFrom(host: number, fromDomain: string): boolean {
    this.ensureHost(host);
    const set = this.linkers[host]!;
    const h = domainHash(fromDomain);
    if (set.has(h)) return false;
    set.add(h);
    return true;
  }

  /** Distinct linking registrable domains seen for `host`. */
  inDegree(host: number): number {
    return this.linkers[host]?.size ?? 0;
  }

  /** The URL budget of `host` (0 = unlimited). */
  hostBudget(host: number): number {
    const p = this.params;
    if (p.budgetBase === 0) return 0;
    return Math.floor(p.budgetBase + p.budgetPerDomain * this.inDegree(host));
  }

  /** Sets the imported PageRank of a row (a newer import supersedes an older one). */
  setRank(row: number, rank: number): void {
    this.rankCol[row] = rank;
  }

  /** OPIC cash of a row. */
  cash(row: number): number {
    return this.cashCol[row] ?? 0;
  }
  /** OPIC history of a row. */
  history(row: number): number {
    return this.historyCol[row] ?? 0;
  }
  /** Imported PageRank of a row (0 when none). */
  rank(row: number): number {
    return this.rankCol[row] ?? 0;
  }

  /** The blended priority of `row` on host `host` whose imported score is `hostScore`. */
  priority(row: number, host: number, hostScore: number): number {
    const p = this.params;
    const deg = this.inDegree(host);
    return (
      p.importanceWeight * (this.cashCol[row]! + this.historyCol[row]!) +
      p.rankWeight * this.rankCol[row]! +
      p.hostWeight * hostScore +
      (deg > 0 ? p.inDegreeWeight * Math.log2(1 + deg) : 0)
    );
  }

  /** The per-row columns (cash, history, rank), views of length ≥ rows. */
  rowColumns(): { cash: Float32Array; history: Float32Array; rank: Float32Array } {
    return { cash: this.cashCol, history: this.historyCol, rank: this.rankCol };
  }

  /** Replaces the per-row columns (recovery). */
  restoreRows(rows: number, cash: Float32Array, history: Float32Array, rank: Float32Array): void {
    this.cashCol = new Float32Array(0);
    this.historyCol = new Float32Array(0);
    this.rankCol = new Float32Array(0);
    this.ensureRows(rows);
    this.cashCol.set(cash.subarray(0, rows));
    this.historyCol.set(history.subarray(0, rows));
    this.rankCol.set(rank.subarray(0, rows));
  }

  /**
   * Encodes the host-level state with hosts renumbered: `order[i]` is the host id written at
   * position i (the frontier's HostKey order).
   */
  encodeHosts(order: ArrayLike<number>): Uint8Array {
    const w = new ByteWriter(64);
    w.u32(order.length);
    for (let i = 0; i < order.length; i++) {
      const set = this.linkers[order[i]!];
      const hashes = set ? Uint32Array.from(set).sort() : new Uint32Array(0);
      w.u32(hashes.length);
      w.block(hashes);
    }
    return w.view8().slice();
  }

  /** Restores host-level state written by `encodeHosts` for `hostCount` hosts (ids 0..n-1). */
  restoreHosts(blob: Uint8Array, hostCount: number): void {
    this.linkers.length = 0;
    if (blob.length === 0) {
      this.ensureHost(hostCount - 1);
      return;
    }
    const r = new ByteReader(blob, 'prioritizer');
    const n = r.u32('host count');
    if (n !== hostCount) throw new CorruptPartitionError('prioritizer', `holds ${n} hosts, the partition has ${hostCount}`);
    for (let i = 0; i < n; i++) {
      const k = r.u32('linking-domain count');
      const set = new Set<number>();
      for (let j = 0; j < k; j++) set.add(r.u32('domain hash'));
      this.linkers.push(set);
    }
    r.end();
  }
}
