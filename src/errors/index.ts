/**
 * meguri's error classes: one subclass per failure kind, each with a stable `code` a caller
 * can switch on without parsing messages. Messages name the offending value and what was
 * expected. The README's "Errors" table lists every code; test/errors.test.ts checks the
 * table against this file so neither drifts.
 */

/** Base class of every error meguri throws on purpose. */
export class MeguriError extends Error {
  /** Stable, documented identifier (`MEGURI_ERR_…`). */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** An argument or option was missing, of the wrong type or out of range. */
export class InvalidArgumentError extends MeguriError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('MEGURI_ERR_INVALID_ARG', message, options);
  }
}

/** The WebAssembly binary does not match what this build of the library expects. */
export class WasmAbiError extends MeguriError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('MEGURI_ERR_WASM_ABI', message, options);
  }
}

/** A core function was called before the WebAssembly core was loaded (browser entry). */
export class CoreNotLoadedError extends MeguriError {
  constructor(message = 'the meguri WebAssembly core is not loaded: call `await loadCore()` first') {
    super('MEGURI_ERR_CORE_NOT_LOADED', message);
  }
}

/** The WebAssembly instance could not allocate the memory a call needed. */
export class WasmOutOfMemoryError extends MeguriError {
  constructor(message: string) {
    super('MEGURI_ERR_WASM_OOM', message);
  }
}

/** A wasm-resident object was used after `free()`. */
export class UseAfterFreeError extends MeguriError {
  constructor(what: string) {
    super('MEGURI_ERR_USE_AFTER_FREE', `${what} was used after free()`);
  }
}

/** A serialized filter blob is truncated, corrupted, of an unknown kind or version. */
export class CorruptFilterError extends MeguriError {
  constructor(message: string) {
    super('MEGURI_ERR_CORRUPT_FILTER', message);
  }
}

/** A `.meguri` partition file failed validation; `section` names where. */
export class CorruptPartitionError extends MeguriError {
  readonly section: string;
  /** What is wrong, without the `corrupt partition (section): ` prefix of `message`. */
  readonly detail: string;

  constructor(section: string, message: string) {
    super('MEGURI_ERR_CORRUPT_PARTITION', `corrupt partition (${section}): ${message}`);
    this.section = section;
    this.detail = message;
  }
}

/** A journal file failed validation somewhere other than a torn tail. */
export class CorruptJournalError extends MeguriError {
  constructor(message: string) {
    super('MEGURI_ERR_CORRUPT_JOURNAL', message);
  }
}

/** An object was asked for something its current state does not allow (not started yet, already closed). */
export class InvalidStateError extends MeguriError {
  constructor(message: string) {
    super('MEGURI_ERR_INVALID_STATE', message);
  }
}

/** An optional package a feature needs is not installed (e.g. prom-client for metrics). */
export class MissingDependencyError extends MeguriError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('MEGURI_ERR_MISSING_DEPENDENCY', message, options);
  }
}

/** The governor refused a request because the host is at its in-flight cap. */
export class WouldBlockError extends MeguriError {
  readonly host: string;

  constructor(host: string, inFlight: number) {
    super('MEGURI_ERR_WOULD_BLOCK', `host ${JSON.stringify(host)} already has ${inFlight} request(s) in flight`);
    this.host = host;
  }
}

/** A disk-tier file (a DRUM bucket run, pending file, output log or manifest) failed validation; `file` names it. */
export class CorruptBucketError extends MeguriError {
  /** Path of the offending file. */
  readonly file: string;
  /** What is wrong, without the `corrupt disk-tier file <file>: ` prefix of `message`. */
  readonly detail: string;

  constructor(file: string, message: string) {
    super('MEGURI_ERR_CORRUPT_BUCKET', `corrupt disk-tier file ${file}: ${message}`);
    this.file = file;
    this.detail = message;
  }
}

/**
 * A crawl's saved settings (`settings.json` in its data directory) cannot be read: not JSON, or
 * not a meguri settings file of a version this build reads. `file` names it. Only the settings
 * are affected: the checkpoint and journal beside it are read apart.
 */
export class CorruptSettingsError extends MeguriError {
  /** Path of the settings file. */
  readonly file: string;

  constructor(file: string, message: string) {
    super('MEGURI_ERR_CORRUPT_SETTINGS', `unreadable crawl settings ${file}: ${message}`);
    this.file = file;
  }
}

/**
 * A disk-tier write failed because the device is full (ENOSPC) or over quota (EDQUOT); `file`
 * names the file being written. The store's durable state is the last committed manifest.
 */
export class DiskFullError extends MeguriError {
  /** Path of the file whose write failed. */
  readonly file: string;

  constructor(file: string, message: string, options?: { cause?: unknown }) {
    super('MEGURI_ERR_DISK_FULL', `disk full writing ${file}: ${message}`, options);
    this.file = file;
  }
}
