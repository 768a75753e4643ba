/**
 * A `Map` used as an LRU: maps iterate in insertion order, so re-inserting an entry on use
 * keeps the least recently used one first, ready to be evicted. Shared by the DNS, robots
 * and connection-pool caches of this module.
 */

/** Marks `key` as most recently used (re-inserting `value`). */
export function lruTouch<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  map.set(key, value);
}

/** Stores `key` as most recently used, then evicts from the old end down to `max` entries. */
export function lruSet<K, V>(map: Map<K, V>, key: K, value: V, max: number, onEvict?: (value: V, key: K) => void): void {
  lruTouch(map, key, value);
  while (map.size > max) {
    const oldest = map.entries().next();
    if (oldest.done) break;
    map.delete(oldest.value[0]);
    onEvict?.(oldest.value[1], oldest.value[0]);
  }
}
