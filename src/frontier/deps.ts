/**
 * The frontier's imports from sibling modules, gathered in one file so the scheduler reads
 * against one small surface: the exact key → row index (DrumSet), the timing wheel, URL
 * keying and host grouping, canonicalization of redirect targets, and admission.
 *
 * TEMPORARY: the pieces marked "stand-in" mirror the contracts of modules other branches
 * are landing (src/core/drum.ts, src/core/wheel.ts, src/url, src/dedup) and are replaced by
 * re-exports as each lands; nothing outside this file knows the difference.
 */
import { xxh64Lanes } from '../core/hash.js';
import type { KeyArray } from '../core/keys.js';
import { type HostGrouping, UrlStatus } from '../model/index.js';

/** The exact key → row index (contract of src/core/drum.ts `DrumSet`). */
export interface KeyIndex {
  getBatch(keys: KeyArray, out?: Uint32Array, missing?: number): Uint32Array;
  insertBatch(keys: KeyArray, payloads?: Uint32Array): void;
  get(keys: KeyArray, i: number): number | undefined;
  readonly len: number;
  exportSorted(): { keys: Uint32Array; payloads: Uint32Array };
  readonly memoryBytes: number;
  free(): void;
}

function keyString(keys: KeyArray, i: number): string {
  const b = i * 4;
  return `${keys[b]},${keys[b + 1]},${keys[b + 2]},${keys[b + 3]}`;
}

/** Stand-in for DrumSet (a Map); replaced when src/core/drum.ts lands. */
class MapIndex implements KeyIndex {
  private readonly map = new Map<string, number>();
  getBatch(keys: KeyArray, out = new Uint32Array(keys.length / 4), missing = 0xffffffff): Uint32Array {
    for (let i = 0; i < keys.length / 4; i++) out[i] = this.map.get(keyString(keys, i)) ?? missing;
    return out;
  }
  insertBatch(keys: KeyArray, payloads?: Uint32Array): void {
    for (let i = 0; i < keys.length / 4; i++) {
      const k = keyString(keys, i);
      if (!this.map.has(k)) this.map.set(k, payloads?.[i] ?? 0);
    }
  }
  get(keys: KeyArray, i: number): number | undefined {
    return this.map.get(keyString(keys, i));
  }
  get len(): number {
    return this.map.size;
  }
  exportSorted(): { keys: Uint32Array; payloads: Uint32Array } {
    const entries = [...this.map.entries()].map(([k, v]) => [k.split(',').map(Number), v] as const);
    entries.sort(([a], [b]) => a[1]! - b[1]! || a[0]! - b[0]! || a[3]! - b[3]! || a[2]! - b[2]!);
    const keys = new Uint32Array(entries.length * 4);
    const payloads = new Uint32Array(entries.length);
    entries.forEach(([k, v], i) => {
      keys.set(k, i * 4);
      payloads[i] = v;
    });
    return { keys, payloads };
  }
  get memoryBytes(): number {
    return this.map.size * 80;
  }
  free(): void {
    this.map.clear();
  }
}

/** A new empty key index. */
export function newKeyIndex(): KeyIndex {
  return new MapIndex();
}

/** A key index built from keys already sorted in URLKey order with their payloads. */
export function keyIndexFromSorted(keys: Uint32Array, payloads: Uint32Array): KeyIndex {
  const idx = new MapIndex();
  idx.insertBatch(keys, payloads);
  return idx;
}

/** The due-time wheel (contract of src/core/wheel.ts `TimingWheel`); ticks are epoch-hours. */
export interface DueWheel {
  schedule(id: number, tick: number): void;
  cancel(id: number): void;
  advance(now: number): Uint32Array;
  nextTick(): number | undefined;
  readonly len: number;
  free(): void;
}

/** Stand-in for TimingWheel; replaced when src/core/wheel.ts lands. */
class MapWheel implements DueWheel {
  private readonly at = new Map<number, number>();
  constructor(private now: number) {}
  schedule(id: number, tick: number): void {
    this.at.set(id, tick);
  }
  cancel(id: number): void {
    this.at.delete(id);
  }
  advance(now: number): Uint32Array {
    const due: [number, number][] = [];
    for (const [id, t] of this.at) if (t <= now) due.push([t, id]);
    due.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    for (const [, id] of due) this.at.delete(id);
    this.now = now;
    return Uint32Array.from(due, (d) => d[1]);
  }
  nextTick(): number | undefined {
    let m: number | undefined;
    for (const t of this.at.values()) if (m === undefined || t < m) m = t;
    return m;
  }
  get len(): number {
    return this.at.size;
  }
  free(): void {
    this.at.clear();
  }
}

/** A new wheel positioned at hour `now`. */
export function newWheel(now: number): DueWheel {
  return new MapWheel(now);
}

/**
 * Writes the URLKey of (canonical `url`, host group `host`) at key index `i` of `out`:
 * HostKey = xxHash64(host group), PathKey = xxHash64(url).
 */
export function keyOf(url: string, host: string, out: KeyArray, i: number): void {
  xxh64Lanes(host, 0, out, i * 4);
  xxh64Lanes(url, 0, out, i * 4 + 2);
}

/** Stand-in for src/url's host grouping: the host group name of a canonical URL. */
export function hostGroupOf(url: string, grouping: HostGrouping): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (grouping === 'origin') return u.origin;
  const host = u.hostname;
  if (grouping === 'host') return host;
  const parts = host.split('.');
  return parts.length <= 2 ? host : parts.slice(-2).join('.');
}

/** Stand-in for src/url canonicalize (used for redirect targets). */
export function canonicalizeUrl(raw: string, base?: string): string | null {
  try {
    const u = new URL(raw, base);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    u.hash = '';
    return u.href;
  } catch {
    return null;
  }
}

/** Stand-in for src/dedup admit: budget and depth cap (0 = unlimited). */
export function admit(
  depth: number,
  host: { readonly urlBudget: number; readonly depthCap: number; readonly admitted: number; readonly flags: number },
  passesHeuristics: boolean,
): UrlStatus {
  if (host.depthCap > 0 && depth > host.depthCap) return UrlStatus.Trapped;
  if (host.urlBudget > 0 && host.admitted >= host.urlBudget) return UrlStatus.Trapped;
  if (!passesHeuristics) return UrlStatus.Trapped;
  return UrlStatus.Scheduled;
}
