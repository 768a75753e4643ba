/**
 * The engine's sitemap seams, kept out of engine.ts: which sitemaps a robots.txt answer
 * names, and the URL key a lastmod hint is filed under (the frontier's own key of the URL in
 * its host group, so the freshness pass can find the row).
 */
import { keyToHex } from '../core/keys.js';
import type { RobotsFetchResult, RobotsSnapshot } from '../fetch/index.js';
import { parseRobots } from '../fetch/robots.js';
import { keyOf } from '../frontier/deps.js';
import type { HostDirectory } from './host-directory.js';

/** The `Sitemap:` URLs of a robots.txt answer (none unless it is a 2xx with a body). */
export function robotsSitemaps(url: string, result: RobotsFetchResult): string[] {
  if (result.status < 200 || result.status >= 300 || result.body === undefined) return [];
  const text = typeof result.body === 'string' ? result.body : Buffer.from(result.body.buffer, result.body.byteOffset, result.body.length).toString('utf8');
  return [...parseRobots(text, url).sitemaps];
}

/**
 * The `Sitemap:` URLs of a robots.txt answer as the cache keeps it (a journaled or checkpointed
 * `RobotsSnapshot`): its comment-free text keeps the lines, read against the origin's
 * robots.txt URL. None unless the entry is `parsed`: an unavailable one has no rules, and an
 * unreachable one's kept copy had its lines heard when it was first parsed. A resumed run reads
 * them from the answers it replays, whose lines the killed process may not have seeded yet.
 */
export function snapshotSitemaps(snapshot: RobotsSnapshot): string[] {
  if (snapshot.state !== 'parsed' || snapshot.text === undefined) return [];
  return [...parseRobots(snapshot.text, `${snapshot.origin}/robots.txt`).sitemaps];
}

/** The frontier's key of `url` (hex), under the host group the directory assigns it. */
export function sitemapKey(directory: HostDirectory, url: string): string | undefined {
  const group = directory.register(url);
  if (group === undefined) return undefined;
  const k = new Uint32Array(4);
  keyOf(url, group, k, 0);
  return keyToHex(k, 0);
}
