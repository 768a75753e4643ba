/**
 * A loopback HTTP server for the fetch tests: records every request (with the local address
 * it arrived on) and every connection, and closes hard so no test leaves a socket behind.
 * For tests that keep a server of their own (the engine and cluster tests' simulated webs):
 * `listenLoopback`, and `hostOf` for the name a request was sent to.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  /** The address the request arrived on (proves IP pinning). */
  readonly localAddress: string;
}

export interface TestServer {
  readonly host: string;
  readonly port: number;
  /** `http://host:port` */
  readonly origin: string;
  readonly requests: SeenRequest[];
  /** TCP connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export async function startServer(handler: Handler, host = '127.0.0.1'): Promise<TestServer> {
  const sockets = new Set<Socket>();
  const requests: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    requests.push({
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      localAddress: req.socket.localAddress ?? '',
    });
    handler(req, res);
  });
  const state = { connections: 0 };
  server.on('connection', (socket: Socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    host,
    port,
    origin: `http://${host}:${port}`,
    requests,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A web of name-based hosts on one loopback server, as the engine and cluster tests serve it:
 * the server (closed by the test's teardown), its port, and every request in arrival order.
 */
export interface LoggedWeb<E = string> {
  readonly server: Server;
  readonly port: number;
  readonly log: E[];
}

/** Starts `server` on a random port of 127.0.0.1; resolves with it and the port. */
export async function listenLoopback(server: Server): Promise<{ server: Server; port: number }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}

/** The host name a request was sent to, without its port (every test host resolves to 127.0.0.1). */
export function hostOf(req: IncomingMessage): string {
  return (req.headers.host ?? '').replace(/:\d+$/, '');
}
