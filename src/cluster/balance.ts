/**
 * The coordinator's slot → node map: sticky and balanced, moving the minimum.
 *
 * Given the current owner of each slot ('' for none) and the live nodes, every live node ends
 * with ⌊S/N⌋ or ⌈S/N⌉ slots. A slot stays with its owner while that owner is live and under
 * its quota; only orphaned slots (owner gone) and a node's excess move, so the number of moved
 * slots is Σ max(0, load − quota) + orphans, the least any balanced map allows. Deterministic:
 * nodes are taken in sorted id order, so every coordinator computes the same map.
 */

/** The target owner of each slot. `owners[s]` is slot s's owner, '' when none. */
export function balance(owners: readonly string[], live: readonly string[]): string[] {
  const nodes = [...new Set(live)].sort();
  const S = owners.length;
  if (nodes.length === 0) return owners.map(() => '');
  const base = Math.floor(S / nodes.length);
  const extra = S % nodes.length;
  const held = new Map<string, number[]>(nodes.map((n) => [n, []]));
  for (let s = 0; s < S; s++) held.get(owners[s]!)?.push(s);
  // Quotas: the nodes already holding most get the ⌈S/N⌉ quotas first (fewer moves).
  const order = [...nodes].sort((a, b) => held.get(b)!.length - held.get(a)!.length || (a < b ? -1 : 1));
  const quota = new Map<string, number>();
  order.forEach((n, i) => quota.set(n, base + (i < extra ? 1 : 0)));
  const out = owners.map((o) => (held.has(o) ? o : ''));
  const free: number[] = [];
  for (let s = 0; s < S; s++) if (out[s] === '') free.push(s);
  for (const n of nodes) {
    const mine = held.get(n)!;
    const q = quota.get(n)!;
    // Give up the highest-numbered excess slots (deterministic).
    for (let i = mine.length - 1; i >= q; i--) {
      out[mine[i]!] = '';
      free.push(mine[i]!);
    }
  }
  free.sort((a, b) => a - b);
  let f = 0;
  for (const n of nodes) {
    let have = Math.min(held.get(n)!.length, quota.get(n)!);
    while (have < quota.get(n)! && f < free.length) {
      out[free[f++]!] = n;
      have++;
    }
  }
  return out;
}

/** Slots whose owner differs between two maps. */
export function moves(from: readonly string[], to: readonly string[]): number {
  let m = 0;
  for (let s = 0; s < from.length; s++) if (from[s] !== to[s]) m++;
  return m;
}
