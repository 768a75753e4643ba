/**
 * meguri — the Node entry. Everything the browser entry offers, plus the Node-only parts:
 * the synchronous core loader (so no `await loadCore()` is needed in Node).
 */
export * from './browser.js';
export { CORE_WASM_URL, loadCoreSync } from './core/node.js';
export { ensureDirectory, readPartition, writePartition } from './format/file.js';
export { Journal, type JournalOptions, type JournalReplay, MAX_RECORD_BYTES, parseJournal } from './journal/index.js';
export * from './fetch/index.js';
export * from './sim/index.js';
export * from './engine/index.js';
