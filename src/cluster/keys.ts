/**
 * Redis key names and the slot function, the two things every node must compute alike.
 *
 * Control keys (crawl record, nodes, coordinator lease, slot records, IP gates) share the hash
 * tag `{meguri:<crawl>}`, so the Lua scripts that read a slot record and the node table
 * together stay on one Redis Cluster slot. Each inbox stream has its own tag
 * `{meguri:<crawl>:<slot>}`, so a Redis Cluster spreads the inboxes, which carry the volume.
 *
 * slot = fmix(HostKey ⊕ xxh64(crawl)) mod S, with HostKey = xxh64(host group, HOST_KEY_SEED)
 * — a hash of (crawl, group key). A router already holds HostKey in lanes 0–1 of every
 * Discovery's URLKey, so routing a link hashes nothing new (`slotOfKey`).
 */
import '../core/node.js';
import { xxh64Lanes } from '../core/hash.js';
import { fmix32 } from '../core/mix.js';
import type { KeyArray } from '../core/keys.js';
import { HOST_KEY_SEED } from '../url/keys.js';

/** The key names of one crawl. */
export class ClusterKeys {
  readonly crawlRecord: string;
  readonly nodes: string;
  readonly lease: string;
  private readonly tag: string;

  constructor(readonly crawl: string) {
    this.tag = `meguri:{meguri:${crawl}}`;
    this.crawlRecord = `${this.tag}:crawl`;
    this.nodes = `${this.tag}:nodes`;
    this.lease = `${this.tag}:coordinator`;
  }

  /** Set of the seeds every node was given (the scope grows from them on every node). */
  get scopeSeeds(): string {
    return `${this.tag}:seeds`;
  }

  /** Hash of slot `s`'s record: owner, epoch, want, ckpt, cursor. */
  slot(s: number): string {
    return `${this.tag}:slot:${s}`;
  }

  /** Hash of a crawl-wide budget (`kind` 'pages' or 'requests'): granted, spent, h:<node> (budget.ts). */
  budget(kind: string): string {
    return `${this.tag}:budget:${kind}`;
  }

  /** Set to '1' once the crawl's depth cap has parked a URL in some slot (node.ts `shareDepthBinds`). */
  get depthBinds(): string {
    return `${this.tag}:depth-binds`;
  }

  /**
   * Per slot (field: its number) the URLs its frontier parked past the depth cap and the fetched
   * pages it marked for a relink round, as `"parked marked"` (node.ts `shareDepthBinds`).
   */
  get relinkCounts(): string {
    return `${this.tag}:relink-counts`;
  }

  /** Node `id`'s published stats (status command). */
  nodeInfo(id: string): string {
    return `${this.tag}:node:${id}`;
  }

  /** Slot `s`'s inbox stream. */
  inbox(s: number): string {
    return `meguri:{meguri:${this.crawl}:${s}}:inbox`;
  }

  /** The per-IP gate's next-free time. */
  ipGate(ip: string): string {
    return `${this.tag}:ip:${ip}`;
  }

  /** The nodes fetching from an IP (zset node → expiry). */
  ipUsers(ip: string): string {
    return `${this.tag}:ipu:${ip}`;
  }
}

/** The consumer group every slot owner reads its inbox with. */
export const INBOX_GROUP = 'owner';

/** A crawl's hash as two u32 lanes (the slot function's salt). */
export function crawlSalt(crawl: string): Uint32Array {
  return xxh64Lanes(crawl, 0x736c6f74);
}

/** The slot of the URL key at index `i` of `keys` (its HostKey lanes), for a crawl salted `salt`, among `slots`. */
export function slotOfKey(keys: KeyArray, i: number, salt: Uint32Array, slots: number): number {
  const lo = (keys[i * 4]! ^ salt[0]!) >>> 0;
  const hi = (keys[i * 4 + 1]! ^ salt[1]!) >>> 0;
  return fmix32(lo ^ fmix32(hi)) % slots;
}

const scratch = new Uint32Array(4);

/** The slot of host group `groupKey` in crawl `crawl` among `slots`. */
export function slotOf(crawl: string, groupKey: string, slots: number, salt: Uint32Array = crawlSalt(crawl)): number {
  xxh64Lanes(groupKey, HOST_KEY_SEED, scratch, 0);
  return slotOfKey(scratch, 0, salt, slots);
}
