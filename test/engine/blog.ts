/**
 * A loopback blog for the learned-query-key tests (test/engine/params.test.ts,
 * test/cli/params.test.ts): `/` links POSTS posts and `/list`; each post's "next" link carries
 * `?ref=prev` (the same page, naming its plain URL as rel=canonical); the list pages `?page=N`
 * all name `/list` as canonical while their text differs (a site's SEO mistake: the key
 * matters); the last list page links `/post/5?ref=prev` again. Every path asked is logged.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export const POSTS = 12;
export const LISTS = 6;
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa', 'quebec', 'romeo'];
/** Text of its own per number: the list pages share no sentence. */
const text = (n: number): string => Array.from({ length: 60 }, (_, i) => `${WORDS[(n * 7 + i * (n + 3)) % WORDS.length]}${(n * 31 + i) % 17}`).join(' ');

export interface Blog {
  readonly origin: string;
  /** Paths asked (robots.txt included), in order. */
  readonly asked: string[];
  close(): Promise<void>;
}

export async function serveBlog(): Promise<Blog> {
  const asked: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    asked.push(path);
    const html = (canonical: string | undefined, body: string): void => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html><head><title>t</title>${canonical === undefined ? '' : `<link rel="canonical" href="${canonical}">`}</head><body>${body}</body></html>`);
    };
    if (path === '/robots.txt') {
      res.writeHead(404);
      return res.end();
    }
    if (path === '/') return html('/', `${Array.from({ length: POSTS }, (_, i) => `<a href="/post/${i}">post</a>`).join(' ')} <a href="/list">list</a> <a href="/list?page=1">page 1</a>`);
    const post = /^\/post\/(\d+)(\?ref=prev)?$/.exec(path);
    if (post) {
      const i = Number(post[1]);
      const next = i + 1 < POSTS ? `<a href="/post/${i + 1}?ref=prev">next</a>` : '';
      return html(`/post/${i}`, `<p>${text(100 + i)}</p>${next}`);
    }
    const list = /^\/list(?:\?page=(\d+))?$/.exec(path);
    if (list) {
      const n = Number(list[1] ?? 0);
      // The last list page, met late, links a copy again (after the key is learned).
      return html('/list', `<p>${text(n)}</p>${n < LISTS ? `<a href="/list?page=${n + 1}">more</a>` : '<a href="/post/5?ref=prev">from the list</a>'}`);
    }
    res.writeHead(404, { 'content-type': 'text/html' });
    res.end('no');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
