/**
 * `meguri serve`: meguri as a URLFrontier 2.6 server (src/urlfrontier) until SIGINT/SIGTERM,
 * which closes it cleanly (a final checkpoint in --data). Single-node: cluster flags
 * (--redis, --crawl, --store, --router) are not part of this build.
 */
import { resolve as resolvePath } from 'node:path';
import { startUrlFrontierServer } from '../urlfrontier/index.js';
import type { CommandSpec, ParsedArgs } from './args.js';
import { EXIT } from './failure.js';
import { type CliIo, SignalHub } from './io.js';

/** `meguri serve`'s flags. */
export const SERVE_SPEC: CommandSpec = {
  name: 'serve',
  summary: 'Run a URLFrontier 2.6 gRPC server (StormCrawler, scrapy-url-frontier, any gRPC client) on a meguri frontier.',
  usage: '',
  minPositionals: 0,
  maxPositionals: 0,
  flags: [
    { name: 'host', kind: 'string', arg: 'ADDR', help: 'address to listen on (default 127.0.0.1)' },
    { name: 'port', kind: 'integer', arg: 'N', min: 0, max: 65535, help: 'port (default 7071; 0 picks a free one)' },
    { name: 'data', kind: 'string', arg: 'DIR', help: 'checkpoint and journal directory (default: memory only, nothing kept)' },
    { name: 'canonicalize', kind: 'boolean', help: "canonicalize URLs with meguri's rules before they become identities" },
    { name: 'no-fsync', kind: 'boolean', help: 'ack once written, without waiting for fsync (survives kill -9, not power loss)' },
  ],
  notes: [
    'Acks (PutURLs, PutDiscovered) and control calls are answered once the change is in the journal; restarting on the same --data resumes every URL, lease, delay, block, limit and the active flag.',
    'SIGINT or SIGTERM stops the server with a final checkpoint (exit code 0).',
  ],
};

/** Runs the server until a signal (or `stop`, for embedders and tests) ends it. */
export async function serveCommand(args: ParsedArgs, io: CliIo, stop?: Promise<unknown>): Promise<number> {
  const data = args.text('data');
  const server = await startUrlFrontierServer({
    host: args.text('host') ?? '127.0.0.1',
    port: args.number('port') ?? 7071,
    dataDir: data === undefined ? undefined : resolvePath(data),
    canonicalize: args.flag('canonicalize'),
    fsync: !args.flag('no-fsync'),
    log: (level, logger, message) => io.stderr.write(`${level} ${logger}: ${message}\n`),
  });
  const rec = server.recovery;
  io.stdout.write(
    `meguri serve: URLFrontier 2.6 on ${server.host}:${server.port}` +
      (data === undefined ? ' (memory only)' : ` (data ${resolvePath(data)}${rec ? `, generation ${rec.generation}, ${rec.replayedRecords} journal records replayed` : ''})`) +
      '\n',
  );
  const hub = SignalHub.open(io, () => io.stderr.write('meguri serve: closing…\n'));
  try {
    await new Promise<void>((resolve) => {
      hub.route(() => resolve());
      stop?.then(() => resolve());
    });
    hub.route(undefined);
    await server.close();
    io.stdout.write(`meguri serve: closed${data === undefined ? '' : ' (checkpoint written)'}\n`);
    return EXIT.ok;
  } finally {
    hub.close();
  }
}
