/**
 * A small real web site served by the test on loopback (node:http), for the "point it at a
 * site" tests: `site.test` holds `pages` pages (`/`, `/p/0` … `/p/N-1`) that link to each
 * other, to a sibling host of the same registrable domain (`docs.site.test`), to an off-site
 * host (`other.test`), to a page robots.txt disallows, to a 404, a 500 and a redirect. Every
 * name is one server (the Host header tells them apart); `resolve` maps them all to 127.0.0.1.
 * Every request is logged with its host and path, so a test can say what was never asked.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SiteRequest {
  readonly host: string;
  readonly path: string;
}

export interface LocalSite {
  readonly port: number;
  /** `http://NAME:PORT` */
  origin(name: string): string;
  /** Content pages of site.test (what a crawl in scope should fetch): `/` and `/p/i`. */
  readonly sitePages: readonly string[];
  /** Pages of docs.site.test. */
  readonly docsPages: readonly string[];
  readonly requests: SiteRequest[];
  /** Every name → 127.0.0.1; names in `missing` do not exist (ENOTFOUND). */
  resolve(hostname: string): Promise<string[]>;
  close(): Promise<void>;
}

export interface SiteOptions {
  readonly pages?: number;
  /** Names the resolver says do not exist. */
  readonly missing?: readonly string[];
  /** Delay before each answer, ms. */
  readonly delayMs?: number;
  /** Link the 500 page (retried with backoff: slow under default politeness). Default true. */
  readonly serverErrors?: boolean;
}

export async function serveSite(options: SiteOptions = {}): Promise<LocalSite> {
  const n = options.pages ?? 12;
  const requests: SiteRequest[] = [];
  let port = 0;
  const o = (name: string): string => `http://${name}:${port}`;
  const page = (links: string[]): string => `<html><body>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`;
  const server: Server = createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const path = req.url ?? '/';
    requests.push({ host, path });
    const send = (status: number, body: string, headers: Record<string, string> = {}): void => {
      const go = (): void => {
        res.writeHead(status, { 'content-type': path.endsWith('.txt') ? 'text/plain' : 'text/html', ...headers });
        res.end(body);
      };
      if (options.delayMs) setTimeout(go, options.delayMs);
      else go();
    };
    if (path === '/robots.txt') return send(host === 'site.test' ? 200 : 404, 'User-agent: *\nDisallow: /private/\n');
    if (host === 'site.test') {
      if (path === '/') return send(200, page(['/p/0', '/p/1', `${o('docs.site.test')}/d/0`, `${o('other.test')}/x/0`]));
      const m = /^\/p\/(\d+)$/.exec(path);
      if (m) {
        const i = Number(m[1]);
        const links = [`/p/${(i + 1) % n}`, `/p/${(i * 7 + 3) % n}`, `${o('other.test')}/x/${i}`, `${o('elsewhere.test')}/y/${i}`];
        if (i === 0) links.push('/private/secret', '/missing', '/moved', `${o('docs.site.test')}/d/1`);
        if (i === 0 && options.serverErrors !== false) links.push('/boom');
        return send(200, page(links));
      }
      if (path === '/missing') return send(404, 'gone');
      if (path === '/boom') return send(500, 'boom');
      if (path === '/moved') return send(301, '', { location: '/p/2' });
      return send(404, 'no such page');
    }
    if (host === 'docs.site.test' && /^\/d\/[01]$/.test(path)) return send(200, page(['/d/0', '/d/1', `${o('other.test')}/x/docs`]));
    if (host === 'other.test' || host === 'elsewhere.test') return send(200, page(['/x/more']));
    return send(404, 'unknown');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  const missing = new Set(options.missing ?? []);
  return {
    port,
    origin: o,
    sitePages: ['/', ...Array.from({ length: n }, (_, i) => `/p/${i}`)],
    docsPages: ['/d/0', '/d/1'],
    requests,
    resolve: async (hostname) => {
      if (missing.has(hostname)) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return ['127.0.0.1'];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
