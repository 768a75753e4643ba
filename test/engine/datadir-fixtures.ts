/**
 * What the data-directory tests write as a crawl's state (test/engine/checkpoint-fallback.test.ts
 * and its crash-drill child, rotation-child.ts): a small frontier's image for the engine state to
 * ride on, the state of a generation after a count of records, and record i (a fetch start of
 * page i, the journal's smallest record) — one record standing for one outcome.
 */
import type { EngineStateFields } from '../../src/engine/datadir.js';
import type { JournalRecord } from '../../src/engine/records.js';
import { Frontier, type PartitionImage, decodePartition } from '../../src/index.js';
import { politenessConfig } from '../../src/politeness/index.js';

/** The clock of a recovery (names the copy of a damaged file). */
export const NOW = Date.UTC(2026, 11, 3, 12, 0, 0);

/** A small frontier's image (what the engine state rides on). */
export function image(): PartitionImage {
  const f = new Frontier(0, 480_000, { stateMachine: true });
  for (let i = 0; i < 4; i++) f.seed(`https://h0.example/p/${i}`, 'h0.example', 0, 480_000, 480_000, 0);
  return decodePartition(f.checkpointBytes());
}

/** Engine state of generation `generation` after `completed` records. */
export const state = (generation: number, completed: number): EngineStateFields => ({
  generation,
  completed,
  ok: completed,
  grouping: 'host',
  politeness: { ...politenessConfig() },
  groups: [],
  inFlight: [],
});

/** Record i: a fetch start of page i (the journal's smallest record). */
export const rec = (i: number): JournalRecord => ({ t: 'd', h: 'h0.example', at: 1_700_000_000_000 + i, k: i.toString(16).padStart(32, '0'), u: `https://h0.example/p/${i}` }) as JournalRecord;
