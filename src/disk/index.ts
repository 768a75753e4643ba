/**
 * src/disk: the disk tier (issue 20, DESIGN §14) — state that does not fit the memory budget,
 * in files merged in batches with sequential I/O.
 *
 * Owns: the DRUM store (the exact URLKey set with a u32 payload per key, in per-bucket sorted
 * runs and append-only pending files, committed by a checksummed manifest), its block file
 * format, and the file-system seam every disk-tier byte goes through. Never: deciding what a
 * payload means (the frontier's row ids or string offsets), when to merge (the caller passes
 * its own cursor and merges when `needsMerge`), or anything about hosts and politeness. Node
 * only (node:fs); not part of the browser entry.
 *
 * Why bucket files and not an embedded store: the workload is "is this batch of keys new",
 * a sort-merge join that DRUM answers with sequential I/O only and ~20 B per key on disk, and
 * the crash story reduces to one manifest rename (DESIGN §14 has the figures).
 */
export { type DiskIo, type IoCounters, CountingIo, isDiskFull, nodeIo } from './io.js';
export { DrumStore, type DrumStoreOptions, type MergeResult } from './drum-store.js';
// Importing the spill segments registers them as the frontier's disk-tier backend.
export { SEGMENT_BYTES, SpillSegments } from './spill-files.js';
