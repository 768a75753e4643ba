// `meguri/sim` (issue 15): the simulated web has its own subpath export, and every sim name the
// root entry exported before the move still works from the root (a contract).
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as root from '../../src/index.js';
import * as sim from '../../src/sim/index.js';
// Type names, checked by `npm run typecheck`: a missing root re-export fails to compile.
import type * as Root from '../../src/index.js';

type RootSimTypes = [
  Root.PolitenessReport,
  Root.PolitenessReportOptions,
  Root.RobotsMode,
  Root.SimBurst,
  Root.SimHostFeatures,
  Root.SimHostile,
  Root.SimHostTruth,
  Root.SimMix,
  Root.SimRedirect,
  Root.SimRequest,
  Root.SimResourceKind,
  Root.SimRobotsRules,
  Root.SimSnapshot,
  Root.SimSoft404Farm,
  Root.SimTrapFamily,
  Root.SimViolation,
  Root.SimViolationKind,
  Root.SimWebInit,
  Root.SimWebOptions,
];

const here = dirname(fileURLToPath(import.meta.url));

describe('meguri/sim', () => {
  it('is a subpath of the exports map, built from src/sim/index.ts', () => {
    const pkg = JSON.parse(readFileSync(resolve(here, '../../package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> };
    expect(pkg.exports['./sim']).toEqual({ types: './dist/sim/index.d.ts', node: './dist/sim/index.js', default: './dist/sim/index.js' });
  });

  it('every sim name the root exported before the move is still there, as the same value', () => {
    // The root's sim names at eaa560c (before meguri/sim); new sim names go to the subpath only.
    const names = ['DEFAULT_SIM_EPOCH_MS', 'PLAIN_MIX', 'SIM_VIOLATION_KINDS', 'SimClock', 'SimGroundTruth', 'SimWeb', 'acceleratedClock', 'createSimWeb', 'formatPolitenessReport'];
    expect(Object.keys(sim).sort()).toEqual([...names].sort());
    for (const name of names) expect((root as Record<string, unknown>)[name], name).toBe((sim as Record<string, unknown>)[name]);
    const typesChecked: RootSimTypes | undefined = undefined;
    expect(typesChecked).toBeUndefined();
  });
});
