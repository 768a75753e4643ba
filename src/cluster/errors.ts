/**
 * The cluster's failure kinds, each with a stable `code` (to be listed in the README's errors
 * table with the others). Messages name the offending value and what was expected.
 */
import { MeguriError } from '../errors/index.js';

/** A joining node's crawl-wide setting differs from the one recorded when the crawl was created. */
export class CrawlSettingsMismatchError extends MeguriError {
  /** The setting's name. */
  readonly setting: string;
  constructor(crawl: string, setting: string, recorded: unknown, given: unknown) {
    super(
      'MEGURI_ERR_CRAWL_SETTINGS',
      `crawl ${JSON.stringify(crawl)} was created with ${setting} = ${JSON.stringify(recorded)}; this node was given ` +
        `${setting} = ${JSON.stringify(given)}. Join without it (the recorded value is used) or start a new crawl` +
        (setting === 'limits' ? ' (the limits can be changed: meguri cluster limit --max-pages / --max-requests / --max-depth / --max-urls-per-host N).' : '.'),
    );
    this.setting = setting;
  }
}

/** A checkpoint was refused because the slot moved on (its epoch is newer than the writer's). */
export class StaleEpochError extends MeguriError {
  constructor(slot: number, epoch: number) {
    super('MEGURI_ERR_STALE_EPOCH', `slot ${slot}: checkpoint at epoch ${epoch} refused (the slot has a newer owner or epoch)`);
  }
}

/** The durability barrier could not be met (too few replicas acknowledged a WAIT). */
export class DurabilityError extends MeguriError {
  constructor(message: string) {
    super('MEGURI_ERR_DURABILITY', message);
  }
}

/**
 * The checkpoint store's file system failed an operation for a reason other than a full device
 * (a full one is `DiskFullError`, which ends the node's run): a network store's timeout or I/O
 * error, a checkpoint directory not (yet) visible. The node retries it one period later and
 * counts it in `storeErrors`; it never surfaces from `run()`.
 */
export class CheckpointStoreError extends MeguriError {
  /** The file or directory the operation was on. */
  readonly path: string;
  constructor(op: 'read' | 'write', path: string, cause: unknown) {
    super('MEGURI_ERR_CHECKPOINT_STORE', `checkpoint store ${op} failed at ${path}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.path = path;
  }
}
