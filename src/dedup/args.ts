/** Argument checks shared by the dedup detectors (internal; not re-exported). */
import { type KeyArray, laneOf } from '../core/keys.js';
import { InvalidArgumentError } from '../errors/index.js';

/** Checks that `key` holds key index `i` and returns its first lane's offset. */
export function checkKeyArg(key: KeyArray, i: number, where: string): number {
  return laneOf(where, key, i);
}

/** Checks a host reference (bigint, finite number or string). */
export function checkHostRef(hostKey: unknown, where: string): void {
  const t = typeof hostKey;
  if (t !== 'bigint' && t !== 'string' && !(t === 'number' && Number.isFinite(hostKey))) {
    throw new InvalidArgumentError(`${where}: expected a host reference (bigint HostKey, row number or group name), received ${t}`);
  }
}
