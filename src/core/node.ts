/**
 * The Node-only half of the loader: reads the binary shipped in the package
 * (`wasm/meguri_core.wasm`, found relative to this file via `import.meta.url`, which holds
 * for both `src/` under a TS runner and `dist/` once compiled) and instantiates it
 * synchronously. Importing this module registers that reader with the shared instance, so
 * every wrapper can call `core()` without an `await`. The browser entry never imports it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Core, loadCoreFrom, registerSyncSource } from './instance.js';

/** Location of the wasm binary inside the installed package. */
export const CORE_WASM_URL = new URL('../../wasm/meguri_core.wasm', import.meta.url);

function readCoreBytes(): Uint8Array {
  return readFileSync(fileURLToPath(CORE_WASM_URL));
}

registerSyncSource(readCoreBytes);

/** Loads the shared core synchronously from the packaged binary (Node only). */
export function loadCoreSync(): Core {
  return loadCoreFrom(readCoreBytes());
}
