// meguri's URLFrontier schema against the upstream one, field by field. The upstream file is
// read from ../shared/urlfrontier/ only when it exists (it is never committed); the checks on
// meguri's own file alone run everywhere.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { URLFRONTIER_PROTO_PATH } from '../../src/urlfrontier/schema.js';

// ../shared/ relative to the repository; MEGURI_URLFRONTIER_PROTO points elsewhere (a worktree checkout).
const upstream = process.env['MEGURI_URLFRONTIER_PROTO'] ?? fileURLToPath(new URL('../../../shared/urlfrontier/urlfrontier.proto', import.meta.url));

/** A wire-level summary of every type and method: what must agree, nothing about layout or words. */
function wireShape(path: string): Record<string, unknown> {
  const root = new protobuf.Root().loadSync(path, { keepCase: true });
  root.resolveAll();
  const out: Record<string, unknown> = {};
  const visit = (ns: protobuf.NamespaceBase): void => {
    for (const obj of ns.nestedArray) {
      if (obj instanceof protobuf.Type) {
        out[`message ${obj.fullName}`] = {
          fields: obj.fieldsArray
            .map((f) => ({
              name: f.name,
              id: f.id,
              type: f.type,
              rule: f.repeated ? 'repeated' : 'single',
              keyType: f instanceof protobuf.MapField ? f.keyType : undefined,
              oneof: f.partOf ? f.partOf.name : undefined,
              proto3Optional: f.options?.['proto3_optional'] === true,
            }))
            .sort((a, b) => a.id - b.id),
          oneofs: obj.oneofsArray.map((o) => [o.name, [...o.oneof].sort()]).sort(),
        };
      } else if (obj instanceof protobuf.Enum) {
        out[`enum ${obj.fullName}`] = Object.entries(obj.values).sort((a, b) => a[1] - b[1]);
      } else if (obj instanceof protobuf.Service) {
        out[`service ${obj.fullName}`] = obj.methodsArray
          .map((m) => ({
            name: m.name,
            request: m.resolvedRequestType?.fullName,
            response: m.resolvedResponseType?.fullName,
            requestStream: m.requestStream === true,
            responseStream: m.responseStream === true,
          }))
          .sort((a, b) => a.name.localeCompare(b.name));
      }
      if (obj instanceof protobuf.Namespace) visit(obj);
    }
  };
  visit(root);
  return out;
}

describe('urlfrontier schema', () => {
  const ours = wireShape(URLFRONTIER_PROTO_PATH);

  it('declares package urlfrontier, service URLFrontier with the 19 RPCs of 2.6', () => {
    const methods = ours['service .urlfrontier.URLFrontier'] as { name: string }[];
    expect(methods.map((m) => m.name).sort()).toEqual(
      [
        'BlockQueueUntil', 'CountURLs', 'DeleteCrawl', 'DeleteQueue', 'GetActive', 'GetStats', 'GetURLStatus',
        'GetURLs', 'ListCrawls', 'ListNodes', 'ListQueues', 'ListURLs', 'PurgeURLs', 'PutDiscovered', 'PutURLs',
        'SetActive', 'SetCrawlLimit', 'SetDelay', 'SetLogLevel',
      ].sort(),
    );
    const put = methods.find((m) => m.name === 'PutURLs') as unknown as Record<string, unknown>;
    expect(put).toMatchObject({ request: '.urlfrontier.URLItem', response: '.urlfrontier.AckMessage', requestStream: true, responseStream: true });
  });

  it('ships in the npm package where dist/urlfrontier/schema.js looks for it', () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], { cwd: root, encoding: 'utf8' })) as { files: { path: string }[] }[];
    const files = packed[0]!.files.map((f) => f.path);
    expect(files).toContain('proto/urlfrontier.proto');
    // schema.ts resolves '../../proto/…' from its own folder: the same from src/urlfrontier and dist/urlfrontier
    const fromDist = fileURLToPath(new URL('../../proto/urlfrontier.proto', new URL('dist/urlfrontier/schema.js', `file://${root}`)));
    expect(fromDist).toBe(URLFRONTIER_PROTO_PATH);
  });

  it.runIf(existsSync(upstream))('agrees with ../shared/urlfrontier/urlfrontier.proto on every message, field, enum and method', () => {
    const theirs = wireShape(upstream);
    expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).sort());
    for (const name of Object.keys(theirs)) expect({ name, shape: ours[name] }).toEqual({ name, shape: theirs[name] });
  });
});
