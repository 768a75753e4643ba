// A real @grpc/grpc-js client against a real server on loopback, with an injected clock.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { type UrlFrontierServer, type UrlFrontierServerOptions, startUrlFrontierServer } from '../../src/urlfrontier/index.js';
import { urlFrontierPackage } from '../../src/urlfrontier/schema.js';

export type Msg = Record<string, unknown>;
export type Client = grpc.Client & Record<string, (...args: unknown[]) => unknown>;

/** A clock tests move by hand (epoch ms). */
export class ManualClock {
  constructor(public ms = Date.UTC(2026, 0, 1)) {}
  now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
  get sec(): number {
    return Math.floor(this.ms / 1000);
  }
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'meguri-uf-'));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export function connect(port: number): Client {
  const Ctor = urlFrontierPackage()['URLFrontier'] as grpc.ServiceClientConstructor;
  return new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 256 * 1024 * 1024,
    'grpc.max_send_message_length': 256 * 1024 * 1024,
    'grpc.enable_retries': 0, // grpc-js keeps every message of a stream for retries otherwise (quadratic on long streams)
  }) as unknown as Client;
}

export interface Harness {
  server: UrlFrontierServer;
  client: Client;
  clock: ManualClock;
  close(): Promise<void>;
}

export async function start(options: Partial<UrlFrontierServerOptions> = {}, clock = new ManualClock()): Promise<Harness> {
  const server = await startUrlFrontierServer({ port: 0, clock: clock.now, log: () => {}, fsync: false, ...options });
  const client = connect(server.port);
  return {
    server,
    client,
    clock,
    async close() {
      client.close();
      await server.close();
    },
  };
}

/** A unary call as a promise; rejects with the gRPC error. */
export function call<T = Msg>(client: Client, method: string, req: Msg = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    client[method]!(req, (err: grpc.ServiceError | null, res: T) => (err ? reject(err) : resolve(res)));
  });
}

/** A server-streaming call, collected. */
export function stream<T = Msg>(client: Client, method: string, req: Msg = {}): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const out: T[] = [];
    const s = client[method]!(req) as grpc.ClientReadableStream<T>;
    s.on('data', (m: T) => out.push(m));
    s.on('error', reject);
    s.on('end', () => resolve(out));
  });
}

/** PutURLs: writes every item, ends, resolves with the acks in arrival order. */
export function putUrls(client: Client, items: Msg[]): Promise<{ ID: string; status: string }[]> {
  return new Promise((resolve, reject) => {
    const acks: { ID: string; status: string }[] = [];
    const s = client['PutURLs']!() as grpc.ClientDuplexStream<Msg, { ID: string; status: string }>;
    s.on('data', (a) => acks.push(a));
    s.on('error', reject);
    s.on('end', () => resolve(acks));
    for (const it of items) s.write(it);
    s.end();
  });
}

/** PutDiscovered: one BatchAck per batch. */
export function putDiscovered(client: Client, batches: Msg[]): Promise<{ ID: string; statuses: string[] }[]> {
  return new Promise((resolve, reject) => {
    const acks: { ID: string; statuses: string[] }[] = [];
    const s = client['PutDiscovered']!() as grpc.ClientDuplexStream<Msg, { ID: string; statuses: string[] }>;
    s.on('data', (a) => acks.push(a));
    s.on('error', reject);
    s.on('end', () => resolve(acks));
    for (const b of batches) s.write(b);
    s.end();
  });
}

export function info(url: string, extra: Msg = {}): Msg {
  return { url, key: '', crawlID: '', metadata: {}, ...extra };
}

export function discovered(url: string, extra: Msg = {}, id = ''): Msg {
  return { discovered: { info: info(url, extra) }, ID: id };
}

export function known(url: string, refetchSec: number, extra: Msg = {}, id = ''): Msg {
  return { known: { info: info(url, extra), refetchable_from_date: refetchSec }, ID: id };
}

/** GetURLs with the given params; returns the URLs served. */
export async function getUrls(client: Client, params: Msg = {}): Promise<string[]> {
  const infos = await stream<{ url: string }>(client, 'GetURLs', params);
  return infos.map((i) => i.url);
}

/**
 * Starts `startUrlFrontierServer(options)` in a child process (so a test can kill -9 or stop
 * it; `options` is JSON, the log is silenced); resolves once it listens. `maxFileKb` caps
 * the size of every file the child writes (bash `ulimit -f`: a write past it fails with
 * EFBIG, as on a full disk).
 */
export function serverChild(options: Msg, maxFileKb?: number): Promise<{ child: ChildProcess; port: number }> {
  const entry = new URL('../../src/urlfrontier/index.ts', import.meta.url).pathname;
  const script = `
    import { startUrlFrontierServer } from ${JSON.stringify(entry)};
    const s = await startUrlFrontierServer({ ...${JSON.stringify(options)}, log: () => {} });
    process.stdout.write('PORT ' + s.port + '\\n');
  `;
  const argv = ['--import', 'tsx', '--input-type=module', '-e', script];
  const child =
    maxFileKb === undefined
      ? spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn('bash', ['-c', `ulimit -f ${maxFileKb} && exec "$0" "$@"`, process.execPath, ...argv], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`server child exited early (${code})`)));
  });
}

/** Polls `probe` until `ok` accepts its answer: tests assert states reached, never durations. */
export async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, what = 'state'): Promise<T> {
  let last: unknown;
  for (let i = 0; i < 600; i++) {
    try {
      const v = await probe();
      if (ok(v)) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: never reached; last ${last instanceof Error ? last.message : JSON.stringify(last)}`);
}
