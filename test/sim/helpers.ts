/**
 * Test helpers for the simulated web: a plain node:http GET pinned to an address (the sim's
 * resolver by default), returning the raw (undecoded) body.
 */
import { Agent, request } from 'node:http';
import type { SimWeb } from '../../src/sim/index.js';

export interface Got {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
  readonly text: string;
}

export interface GetOptions {
  headers?: Record<string, string>;
  /** Connect to this address instead of the resolved one. */
  ip?: string;
  method?: string;
  /** Stop reading after this many bytes (destroys the response). */
  maxBytes?: number;
  agent?: Agent;
}

/** GET `url` from the sim, connecting to the host's address (or `options.ip`). */
export async function get(sim: SimWeb, url: string, options: GetOptions = {}): Promise<Got> {
  const u = new URL(url);
  const ip = options.ip ?? (await sim.resolve(u.hostname));
  return new Promise<Got>((resolve, reject) => {
    const req = request(
      {
        host: ip,
        port: Number(u.port),
        path: u.pathname + u.search,
        method: options.method ?? 'GET',
        headers: { host: u.host, 'user-agent': 'meguri-test/1.0', ...options.headers },
        agent: options.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let settled = false;
        const done = (): void => {
          if (settled) return;
          settled = true;
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
        };
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          size += c.length;
          if (options.maxBytes !== undefined && size >= options.maxBytes) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', (err) => (settled ? undefined : reject(err)));
        res.on('close', done);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Every href on a page, resolved against its URL. */
export function hrefs(html: string, base: string): string[] {
  return anchors(html, base).map((a) => a.url);
}

/** Every anchor on a page: its resolved URL and whether it is rel=nofollow. */
export function anchors(html: string, base: string): { url: string; nofollow: boolean }[] {
  const out: { url: string; nofollow: boolean }[] = [];
  for (const m of html.matchAll(/<a\s([^>]*)>/g)) {
    const href = /href="([^"]*)"/.exec(m[1]!);
    if (!href) continue;
    out.push({ url: new URL(href[1]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"'), base).href, nofollow: /rel="nofollow"/.test(m[1]!) });
  }
  return out;
}

/** Lets the event loop turn until `pred` holds (bounded), for handle-release checks. */
export async function settle(pred: () => boolean, turns = 50): Promise<boolean> {
  for (let i = 0; i < turns; i++) {
    if (pred()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return pred();
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
