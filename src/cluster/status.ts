/**
 * `meguri cluster status`: what a crawl's Redis says about it — nodes, slots per node, inbox
 * lag, pages/s, hand-offs in progress. Read-only: it never writes a key.
 */
import type { Redis } from 'ioredis';
import { readDrained } from './drained.js';
import { ClusterKeys, INBOX_GROUP } from './keys.js';
import { type BudgetState, readBudgets } from './budget.js';
import { liveNodes, readSlots } from './membership.js';
import { type CrawlSettings, readCrawl } from './settings.js';

/** One node as the status sees it. */
export interface NodeStatus {
  readonly id: string;
  readonly live: boolean;
  /** Slots the slot records name it owner of. */
  readonly slots: number[];
  /** From the node's last published stats (undefined when none). */
  readonly pages: number | undefined;
  readonly pagesPerSec: number | undefined;
  readonly canDispatch: boolean | undefined;
  readonly ipGateBlocked: boolean | undefined;
  /** Redis's clock minus the node's, ms, and that reading's error bound (`ClusterNodeStats`). */
  readonly clockOffsetMs: number | undefined;
  readonly clockOffsetErrorMs: number | undefined;
  /** Retried Redis calls and checkpoint store operations over the node's run (`ClusterNodeStats`). */
  readonly redisErrors: number | undefined;
  readonly storeErrors: number | undefined;
  /** Slots the node opened from their previous checkpoint because the current one was damaged. */
  readonly checkpointFallbacks: number | undefined;
  /** Slots the node opened from the store because Redis had lost their records. */
  readonly slotsRestored: number | undefined;
}

/** One slot as the status sees it. */
export interface SlotStatus {
  readonly slot: number;
  readonly owner: string;
  readonly epoch: number;
  /** The node a hand-off is moving it to ('' = none). */
  readonly movingTo: string;
  /** Inbox entries not yet read by the owner (the consumer group's lag). */
  readonly inboxLag: number;
  /** Inbox entries kept (trimmed only behind the slot's previous accepted checkpoint, its fallback). */
  readonly inboxLength: number;
  readonly checkpoint: string;
}

export interface ClusterStatus {
  readonly crawl: string;
  readonly settings: CrawlSettings;
  readonly nodes: NodeStatus[];
  readonly slots: SlotStatus[];
  readonly pagesPerSec: number;
  readonly handoffs: number;
  readonly orphanSlots: number;
  readonly inboxLag: number;
  /**
   * How far apart the live nodes' clocks are, ms, beyond what their readings can tell: the
   * largest difference of two nodes' offsets to Redis less both readings' error bounds (0 when
   * within them); undefined with fewer than two live nodes that published an offset.
   */
  readonly clockSpreadMs: number | undefined;
  /** The crawl-wide budgets the recorded limits set (`maxPages`, `maxRequests`), as Redis counts them; empty when unlimited. */
  readonly budgets: readonly BudgetState[];
  /**
   * Whether the crawl is drained as Redis records it (src/cluster/drained.ts: every slot idle
   * at its epoch, every inbox read, no relink round left): the campaign is over, and slots
   * without a live owner are expected, not orphaned by a failure.
   */
  readonly drained: boolean;
}

/**
 * A clock spread (`ClusterStatus.clockSpreadMs`) above which the status warns: far above what
 * NTP keeps machines on one network to (a few ms). A moved slot's windows are put on the next
 * owner's clock (`clockShiftMs`), but each machine still stamps pages, WARC records and logs on
 * its own, so a spread this large is worth fixing.
 */
export const CLOCK_SPREAD_WARN_MS = 100;

/** The live nodes' clock spread (see `ClusterStatus.clockSpreadMs`). */
export function clockSpread(nodes: readonly Pick<NodeStatus, 'live' | 'clockOffsetMs' | 'clockOffsetErrorMs'>[]): number | undefined {
  const known = nodes.filter((n) => n.live && n.clockOffsetMs !== undefined && Number.isFinite(n.clockOffsetMs));
  if (known.length < 2) return undefined;
  let spread = 0;
  for (const a of known) {
    for (const b of known) {
      const d = a.clockOffsetMs! - b.clockOffsetMs! - (a.clockOffsetErrorMs ?? 0) - (b.clockOffsetErrorMs ?? 0);
      if (d > spread) spread = d;
    }
  }
  return spread;
}

/** Reads a crawl's status, or undefined when the crawl does not exist. */
export async function clusterStatus(redis: Redis, crawl: string): Promise<ClusterStatus | undefined> {
  const keys = new ClusterKeys(crawl);
  const settings = await readCrawl(redis, keys);
  if (settings === undefined) return undefined;
  const live = new Set(await liveNodes(redis, keys));
  const recs = await readSlots(redis, keys, settings.slots);
  const p = redis.pipeline();
  for (const r of recs) {
    p.xlen(keys.inbox(r.slot));
    p.xinfo('GROUPS', keys.inbox(r.slot));
  }
  const res = (await p.exec()) ?? [];
  const slots: SlotStatus[] = recs.map((r, i) => {
    const len = Number(res[2 * i]?.[1] ?? 0);
    let lag = 0;
    const groups = res[2 * i + 1]?.[0] === null ? (res[2 * i + 1]![1] as unknown[][]) : [];
    for (const g of groups) {
      const name = g[g.indexOf('name') + 1];
      if (name !== INBOX_GROUP) continue;
      const l = g[g.indexOf('lag') + 1];
      lag = typeof l === 'number' ? l : len; // a null lag (after trims) counts every kept entry
    }
    return { slot: r.slot, owner: r.owner, epoch: r.epoch, movingTo: r.want, inboxLag: lag, inboxLength: len, checkpoint: r.ckpt };
  });
  // Sorted before the read, so each node's info is read at its own index.
  const ids = [...new Set<string>([...live, ...recs.map((r) => r.owner).filter((o) => o !== '')])].sort();
  const infos = ids.length === 0 ? [] : await redis.mget(...ids.map((id) => keys.nodeInfo(id)));
  const nodes: NodeStatus[] = ids.map((id, i) => {
    const info = infos[i] ? (JSON.parse(infos[i]!) as Record<string, unknown>) : undefined;
    return {
      id,
      live: live.has(id),
      slots: slots.filter((s) => s.owner === id).map((s) => s.slot),
      pages: info ? Number(info['pages']) : undefined,
      pagesPerSec: info ? Number(info['pagesPerSec']) : undefined,
      canDispatch: info ? Boolean(info['canDispatch']) : undefined,
      ipGateBlocked: info ? Boolean(info['ipGateBlocked']) : undefined,
      clockOffsetMs: finiteOrUndefined(info?.['clockOffsetMs']),
      clockOffsetErrorMs: finiteOrUndefined(info?.['clockOffsetErrorMs']),
      redisErrors: finiteOrUndefined(info?.['redisErrors']),
      storeErrors: finiteOrUndefined(info?.['storeErrors']),
      checkpointFallbacks: finiteOrUndefined(info?.['checkpointFallbacks']),
      slotsRestored: finiteOrUndefined(info?.['slotsRestored']),
    };
  });
  return {
    crawl,
    settings,
    nodes,
    slots,
    pagesPerSec: nodes.reduce((s, n) => s + (n.live ? (n.pagesPerSec ?? 0) : 0), 0),
    handoffs: slots.filter((s) => s.movingTo !== '').length,
    orphanSlots: slots.filter((s) => s.owner === '' || !live.has(s.owner)).length,
    inboxLag: slots.reduce((s, x) => s + x.inboxLag, 0),
    clockSpreadMs: clockSpread(nodes),
    budgets: await readBudgets(redis, keys, settings.limits),
    drained: (await readDrained(redis, keys, settings.slots)).drained,
  };
}

function finiteOrUndefined(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** "40 of 60 pages fetched OK (--max-pages), 4 fetches holding a token" */
export function budgetText(b: BudgetState): string {
  const what = b.kind === 'pages' ? 'pages fetched OK (--max-pages)' : 'requests (--max-requests)';
  const left = b.spent >= b.limit ? ': spent, the crawl stops' : b.held > 0 ? `, ${b.held} ${b.held === 1 ? 'fetch' : 'fetches'} holding a token` : '';
  return `${b.spent} of ${b.limit} ${what}${left}`;
}

/** A node's clock against Redis's, signed: "+12" (ahead), "-3" (behind), rounded to the ms. */
function formatOffset(aheadMs: number): string {
  const r = Math.round(aheadMs);
  return r > 0 ? `+${r}` : `${r}`;
}

/** The status as a few lines for a terminal. */
export function formatClusterStatus(st: ClusterStatus): string {
  const lines = [
    `crawl ${st.crawl}: ${st.settings.slots} slots, grouping ${st.settings.grouping}; ${st.nodes.filter((n) => n.live).length} live node(s), ` +
      `${st.pagesPerSec.toFixed(1)} pages/s, inbox lag ${st.inboxLag}, hand-offs in progress ${st.handoffs}, orphan slots ${st.orphanSlots}`,
  ];
  for (const n of st.nodes) {
    const flags = [n.live ? 'live' : 'gone', n.canDispatch === false ? 'not dispatching' : '', n.ipGateBlocked ? 'IP gate blocked (Redis unreachable)' : '']
      .filter((f) => f !== '')
      .join(', ');
    const clock = n.clockOffsetMs === undefined ? '' : `  clock ${formatOffset(-n.clockOffsetMs)} ms of Redis's (±${Math.ceil(n.clockOffsetErrorMs ?? 0)})`;
    // Retried errors, shown once there are any: a node stuck on its store says so by name.
    const errors = [(n.redisErrors ?? 0) > 0 ? `Redis ${n.redisErrors}` : '', (n.storeErrors ?? 0) > 0 ? `checkpoint store ${n.storeErrors}` : ''].filter((e) => e !== '');
    lines.push(
      `  ${n.id}  ${flags}  slots ${n.slots.length}${n.slots.length ? ` [${n.slots.join(',')}]` : ''}  pages ${n.pages ?? '-'}  ${n.pagesPerSec === undefined || !n.live ? '' : `${n.pagesPerSec.toFixed(1)}/s`}${clock}` +
        (errors.length > 0 ? `  retried errors: ${errors.join(', ')}` : '') +
        ((n.checkpointFallbacks ?? 0) > 0 ? `  damaged checkpoints replaced by their previous one: ${n.checkpointFallbacks}` : '') +
        ((n.slotsRestored ?? 0) > 0 ? `  slots restored from the store after Redis lost them: ${n.slotsRestored}` : ''),
    );
  }
  if (st.clockSpreadMs !== undefined && st.clockSpreadMs > CLOCK_SPREAD_WARN_MS) {
    lines.push(
      `  warning: the live nodes' clocks differ by at least ${Math.round(st.clockSpreadMs)} ms; slots moving between them are put on the next owner's clock, ` +
        "but page times, WARC dates and logs are each machine's own: keep the nodes in sync (NTP)",
    );
  }
  if (st.drained) lines.push('  drained: every slot is idle and every inbox read — the campaign is over (a node started with new seeds goes on)');
  for (const b of st.budgets) lines.push(`  budget: ${budgetText(b)}`);
  for (const s of st.slots) if (s.movingTo !== '') lines.push(`  slot ${s.slot}: moving ${s.owner} → ${s.movingTo}`);
  const lagging = st.slots.filter((s) => s.inboxLag > 0).sort((a, b) => b.inboxLag - a.inboxLag).slice(0, 5);
  if (lagging.length) lines.push(`  most inbox lag: ${lagging.map((s) => `slot ${s.slot}=${s.inboxLag}`).join(', ')}`);
  return `${lines.join('\n')}\n`;
}
