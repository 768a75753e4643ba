/**
 * A loopback web for the stall test, in its own process so that the arrival times it logs
 * come from an event loop the crawler cannot block: `GOOD` well-behaved hosts on 127.0.0.2…
 * (a root linking `PAGES` small pages) and one hostile host on the next address whose every
 * page is 5 MB of nested `<div>`. Run with `--import tsx`; argv[2] is JSON `{ good, pages,
 * nestedDivs }`. Answers IPC `log` (every request: host, path, arrival ms) and `close`.
 */
import { createServer } from 'node:http';

const { good, pages, nestedDivs } = JSON.parse(process.argv[2] ?? '{}') as { good: number; pages: number; nestedDivs: number };
const HOSTILE = 'hostile.stall.test';
const hostile = `${'<div>'.repeat(nestedDivs)}<a href="/deep1">d</a><a href="/deep2">d</a>`;
const log: { host: string; path: string; at: number }[] = [];

const server = createServer((req, res) => {
  const host = (req.headers.host ?? '').replace(/:\d+$/, '');
  const path = req.url ?? '/';
  log.push({ host, path, at: performance.now() });
  if (path === '/robots.txt') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
  } else if (host === HOSTILE) {
    res.writeHead(200, { 'content-type': 'text/html' }).end(hostile);
  } else if (path === '/') {
    const links = Array.from({ length: pages }, (_, i) => `<a href="/p${i}">page ${i}</a>`).join('');
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${links}</body></html>`);
  } else {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><p>page ${path} of ${host}</p></body></html>`);
  }
});

const servers = [server, ...Array.from({ length: good }, () => createServer(server.listeners('request')[0] as never))];
let port = 0;
for (let i = 0; i <= good; i++) {
  port = await new Promise<number>((resolve, reject) => {
    servers[i]!.once('error', reject);
    servers[i]!.listen({ host: `127.0.0.${i + 2}`, port, exclusive: true }, () => {
      const a = servers[i]!.address();
      resolve(typeof a === 'object' && a ? a.port : port);
    });
  });
}
process.send?.({ type: 'ready', port });
process.on('message', (m: { type: string }) => {
  if (m.type === 'log') process.send?.({ type: 'log', log });
  if (m.type === 'close') {
    for (const s of servers) s.closeAllConnections();
    process.exit(0);
  }
});
