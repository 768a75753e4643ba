/** Argument checks shared by the dedup detectors (internal; not re-exported). */
import type { KeyArray } from '../core/keys.js';
import { InvalidArgumentError } from '../errors/index.js';

/** Checks that `key` holds key index `i` and returns its first lane's offset. */
export function checkKeyArg(key: KeyArray, i: number, where: string): number {
  const b = i * 4;
  if (!(key instanceof Uint32Array) || !Number.isInteger(i) || i < 0 || b + 4 > key.length) {
    throw new InvalidArgumentError(
      `${where}: expected a KeyArray holding key index ${String(i)}, received ${key instanceof Uint32Array ? `a Uint32Array of length ${key.length}` : typeof key}`,
    );
  }
  return b;
}

/** Checks a host reference (bigint, finite number or string). */
export function checkHostRef(hostKey: unknown, where: string): void {
  const t = typeof hostKey;
  if (t !== 'bigint' && t !== 'string' && !(t === 'number' && Number.isFinite(hostKey))) {
    throw new InvalidArgumentError(`${where}: expected a host reference (bigint HostKey, row number or group name), received ${t}`);
  }
}
