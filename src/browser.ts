/**
 * meguri — the browser entry: the WebAssembly core and everything that runs on it, with no
 * `node:` import reachable from here (test/browser-entry.test.ts walks the import graph).
 * Call `await loadCore()` (optionally with the wasm URL or bytes) before using a kernel.
 */
export * from './errors/index.js';
export * from './core/index.js';
export * from './model/index.js';
export * from './politeness/index.js';
export * from './url/index.js';
export * from './dedup/index.js';
export * from './format/index.js';
export * from './prioritize/index.js';
export * from './frontier/index.js';
// The robots.txt matcher alone of src/fetch: pure, so users can test a robots.txt anywhere.
export * from './fetch/robots.js';
export * from './freshness/index.js';
