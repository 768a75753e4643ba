/**
 * Credentials written into seed URLs (`https://user:password@staging.example.com/`): taken out
 * of the seeds and kept by origin for the fetcher's HTTP Basic `Authorization`.
 *
 * Why here: a URL's userinfo is no part of its identity (src/url drops it when canonicalizing),
 * so without this step it vanished silently and a crawl of a password-protected staging site met
 * 401 on every page. Never: write credentials anywhere — the seeds saved with the crawl
 * (settings.json), recorded in a cluster's Redis, or reported are the URLs without them, so a
 * resume needs the seed with its credentials again (or `http.credentials`).
 */

/** Seeds without their userinfo, and the credentials of their origins (`user:password`, decoded). */
export function splitSeedCredentials(seeds: readonly string[]): { seeds: string[]; credentials: Record<string, string> } {
  const credentials: Record<string, string> = {};
  const out: string[] = [];
  for (const seed of seeds) {
    let u: URL;
    try {
      u = new URL(seed);
    } catch {
      out.push(seed);
      continue;
    }
    if ((u.username === '' && u.password === '') || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
      out.push(seed);
      continue;
    }
    credentials[u.origin] = `${decoded(u.username)}:${decoded(u.password)}`;
    u.username = '';
    u.password = '';
    out.push(u.href);
  }
  return { seeds: out, credentials };
}

/** Userinfo as typed (a malformed escape is kept as written). */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
