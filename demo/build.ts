/**
 * The demo's build and its static server (Node side; `npm run demo:web` runs this file).
 *
 * Build: esbuild bundles three entry points from `demo/src/`: the page (`app.js`) and the
 * 10-million-URL worker (`worker.js`) as ES modules, the offline service worker (`sw.js`) as
 * a classic script. `index.html`, `style.css` and `wasm/meguri_core.wasm` are copied beside
 * them. The page imports the package's browser entry (`src/browser.ts`) by relative path, so
 * the bundle is the library as a browser gets it, with no `node:` import (esbuild would
 * refuse one for the browser platform). Everything the page needs is in the output folder:
 * no CDN, no font or script from elsewhere. The service worker is built last with the list
 * of files and a content hash of all of them baked in, so a rebuilt demo gets a fresh cache
 * name.
 *
 * Serve: a small `node:http` static server bound to 127.0.0.1, with the content types the
 * page relies on (`application/wasm` lets `WebAssembly.compileStreaming` compile the core
 * while it downloads; `text/javascript` is required for module workers and the service
 * worker) and `Cache-Control: no-cache` so a rebuild is picked up on reload. The browser test
 * (test/browser/demo.test.ts) builds into a temporary folder and serves it with the same two
 * functions.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';

const demoDir = dirname(fileURLToPath(import.meta.url));
const rootDir = resolve(demoDir, '..');

/** Default output folder of `npm run demo:web` (gitignored). */
export const DEFAULT_OUT_DIR = join(demoDir, 'dist');

/** What `buildDemo` produced. */
export interface BuiltDemo {
  /** The folder holding the page and its assets. */
  readonly outDir: string;
  /** Every file of the page, relative to `outDir`, in '/' form (what the service worker caches). */
  readonly files: readonly string[];
  /** Hex content hash of all files (the service worker's cache version). */
  readonly version: string;
}

/** Options of `buildDemo`. */
export interface BuildDemoOptions {
  /** Output folder; emptied first. Default `demo/dist`. */
  readonly outDir?: string;
  /** Minify the bundles (default true; false keeps them readable when debugging). */
  readonly minify?: boolean;
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listFiles(full));
    else out.push(relative(dir, full).split(sep).join('/'));
  }
  return out.sort();
}

/** Builds the demo page into `outDir` and returns its file list and version. */
export async function buildDemo(options: BuildDemoOptions = {}): Promise<BuiltDemo> {
  const outDir = resolve(options.outDir ?? DEFAULT_OUT_DIR);
  const minify = options.minify ?? true;
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const common: BuildOptions = {
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome111', 'firefox115', 'safari16.4'],
    minify,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
    absWorkingDir: rootDir,
  };
  await build({
    ...common,
    entryPoints: { app: join(demoDir, 'src/main.ts'), worker: join(demoDir, 'src/worker.ts') },
    outdir: outDir,
  });
  copyFileSync(join(demoDir, 'index.html'), join(outDir, 'index.html'));
  copyFileSync(join(demoDir, 'style.css'), join(outDir, 'style.css'));
  copyFileSync(join(rootDir, 'wasm/meguri_core.wasm'), join(outDir, 'meguri_core.wasm'));
  const shell = listFiles(outDir);
  const hash = createHash('sha256');
  for (const f of shell) hash.update(f).update('\0').update(readFileSync(join(outDir, f)));
  const version = hash.digest('hex').slice(0, 16);
  const files = [...shell, 'sw.js'].sort();
  await build({
    ...common,
    entryPoints: { sw: join(demoDir, 'src/sw.ts') },
    // A classic script: module service workers are not yet in every browser.
    format: 'iife',
    outdir: outDir,
    define: {
      __MEGURI_DEMO_VERSION__: JSON.stringify(version),
      __MEGURI_DEMO_FILES__: JSON.stringify(shell),
    },
  });
  return { outDir, files, version };
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/** A running demo server. */
export interface DemoServer {
  /** The page's URL, e.g. `http://127.0.0.1:5173/`. */
  readonly url: string;
  /** Stops accepting connections and closes open ones. */
  close(): Promise<void>;
}

/** Options of `serveDemo`. */
export interface ServeDemoOptions {
  /** TCP port; 0 (the default) picks a free one. */
  readonly port?: number;
  /** Interface to bind; default 127.0.0.1 (never all interfaces by default). */
  readonly host?: string;
}

function respond(dir: string, req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' }).end();
    return;
  }
  let pathname: string;
  try {
    pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
  } catch {
    res.writeHead(400).end();
    return;
  }
  if (pathname.endsWith('/')) pathname += 'index.html';
  const file = resolve(dir, '.' + pathname);
  if (file !== dir && !file.startsWith(dir + sep)) {
    res.writeHead(403).end();
    return;
  }
  let body: Buffer;
  try {
    body = readFileSync(file);
  } catch {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`not found: ${pathname}\n`);
    return;
  }
  res.writeHead(200, {
    'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
    'content-length': body.length,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** Serves the built demo folder over HTTP on loopback; resolves once listening. */
export function serveDemo(dir: string, options: ServeDemoOptions = {}): Promise<DemoServer> {
  const root = resolve(dir);
  const host = options.host ?? '127.0.0.1';
  const server: Server = createServer((req, res) => respond(root, req, res));
  return new Promise((resolveServer, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      const shown = host.includes(':') ? `[${host}]` : host;
      resolveServer({
        url: `http://${shown}:${port}/`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

async function main(argv: readonly string[]): Promise<void> {
  const buildOnly = argv.includes('--build-only');
  const portArg = argv.indexOf('--port');
  const port = portArg >= 0 ? Number(argv[portArg + 1]) : 5173;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--port: expected an integer in [0, 65535], received ${JSON.stringify(argv[portArg + 1])}`);
  }
  const built = await buildDemo({ minify: !argv.includes('--no-minify') });
  console.log(`demo: built ${built.files.length} files into ${relative(process.cwd(), built.outDir) || '.'} (version ${built.version})`);
  if (buildOnly) return;
  const server = await serveDemo(built.outDir, { port });
  console.log(`demo: serving on ${server.url}  (Ctrl-C to stop)`);
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
