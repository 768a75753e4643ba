/**
 * The peer protocol between the nodes of a URLFrontier cluster (and its router): one unary
 * gRPC method, `/meguri.urlfrontier.Peer/Call`, carrying `{ op, args }` as JSON, served on the
 * node's URLFrontier port beside the public service.
 *
 * Why not the URLFrontier service itself: a forwarded put needs the slot it is meant for (so
 * an owner that lost the slot refuses it instead of storing it in the wrong place) and a
 * fan-out answer must say which slots it covers (so a caller can tell a complete sum from an
 * under-count); neither fits the public messages. Why JSON: the peer messages are internal,
 * few and small next to the items they carry, and change with the implementation; the public
 * wire contract stays protobuf (proto/urlfrontier.proto).
 *
 * Errors travel as gRPC statuses: FAILED_PRECONDITION = "not the owner of that slot (now)",
 * which the sender answers by re-reading the slot map and retrying.
 */
import * as grpc from '@grpc/grpc-js';

const PATH = '/meguri.urlfrontier.Peer/Call';
const json = {
  serialize: (v: unknown): Buffer => Buffer.from(JSON.stringify(v)),
  deserialize: (b: Buffer): unknown => JSON.parse(b.toString('utf8')),
};

/** The service definition (registered with `grpc.Server#addService`). */
export const PEER_SERVICE: grpc.ServiceDefinition = {
  Call: {
    path: PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
};

/** An error with the gRPC status a caller should see. */
export class StatusError extends Error {
  constructor(
    readonly grpcCode: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

/** "This node does not own the slot": the sender re-reads the slot map and retries. */
export const notOwner = (slot: number, why: string): StatusError => new StatusError(grpc.status.FAILED_PRECONDITION, `slot ${slot}: ${why}`);

/** A failure the sender may retry after re-reading the slot map. */
export function retryable(err: unknown): boolean {
  const c = (err as { code?: unknown; grpcCode?: unknown }).grpcCode ?? (err as { code?: unknown }).code;
  return c === grpc.status.FAILED_PRECONDITION || c === grpc.status.UNAVAILABLE || c === grpc.status.DEADLINE_EXCEEDED;
}

/** Answers one peer call: `op` names the operation, `args` its JSON arguments. */
export type PeerHandler = (op: string, args: Record<string, unknown>) => Promise<unknown>;

/** The handler map for `grpc.Server#addService(PEER_SERVICE, …)`. */
export function peerHandlers(handle: PeerHandler): grpc.UntypedServiceImplementation {
  return {
    Call(call: grpc.ServerUnaryCall<{ op: string; args: Record<string, unknown> }, unknown>, callback: grpc.sendUnaryData<unknown>): void {
      const { op, args } = call.request;
      handle(op, args ?? {}).then(
        (res) => callback(null, res ?? {}),
        (err: unknown) => {
          const code = err instanceof StatusError ? err.grpcCode : grpc.status.INTERNAL;
          const details = err instanceof Error ? err.message : String(err);
          callback(Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() }));
        },
      );
    },
  };
}

const PeerClient = grpc.makeGenericClientConstructor(PEER_SERVICE, 'Peer');

/** gRPC clients to peers, one per address, reused across calls. */
export class PeerPool {
  private readonly clients = new Map<string, grpc.Client & { Call: (req: unknown, meta: grpc.Metadata, opts: grpc.CallOptions, cb: grpc.requestCallback<unknown>) => void }>();

  constructor(private readonly maxMessageBytes: number) {}

  /** Calls `op` on the peer at `address`; rejects with the peer's status (or UNAVAILABLE / DEADLINE_EXCEEDED). */
  call<T>(address: string, op: string, args: Record<string, unknown>, timeoutMs: number): Promise<T> {
    let c = this.clients.get(address);
    if (c === undefined) {
      c = new PeerClient(address, grpc.credentials.createInsecure(), {
        'grpc.max_receive_message_length': this.maxMessageBytes,
        'grpc.max_send_message_length': this.maxMessageBytes,
        'grpc.enable_retries': 0,
      }) as unknown as typeof c;
      this.clients.set(address, c!);
    }
    return new Promise<T>((resolve, reject) => {
      c!.Call({ op, args }, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(err) : resolve(res as T)));
    });
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}
