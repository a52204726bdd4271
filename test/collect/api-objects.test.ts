/**
 * `kpx collect` adds the API's objects when kubectl reaches a cluster (read-only `get`, context and time
 * in the manifest) and says why not when it cannot. kubectl is a stand-in on PATH.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { API_STEPS, apiRecord, runSteps } from '../../src/collect/live.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { apiObjects, generateCluster } from '../../src/generate/index.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpx-collect-api-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let saved: string | undefined;
beforeEach(() => {
  saved = process.env.PATH;
});
afterEach(() => {
  process.env.PATH = saved;
});

let n = 0;
function kubectl(body: string): string {
  const bin = join(tmp, `bin-${++n}`);
  mkdirSync(bin);
  writeFileSync(join(bin, 'kubectl'), `#!/bin/sh\n${body}\n`);
  chmodSync(join(bin, 'kubectl'), 0o755);
  process.env.PATH = `${bin}:/bin:/usr/bin`;
  return bin;
}
const write = (p: string, d: string) => writeFileSync(p, d);

describe('kpx collect: the API objects', () => {
  it('writes kubectl get svc,endpointslices,nodes,pods -A -o json, records the context and time, and kpx reads it back', async () => {
    const list = join(tmp, 'list.json');
    const cluster = generateCluster({ seed: 2, services: 12 });
    writeFileSync(list, JSON.stringify(apiObjects(cluster).list, null, 4));
    const args = join(tmp, 'args.txt');
    kubectl(`echo "$@" >> ${args}; if [ "$1" = config ]; then echo kind-prod; else cat ${list}; fi`);
    const dir = join(tmp, 'b1');
    mkdirSync(dir);
    const steps = await runSteps(dir, API_STEPS, write);
    expect(steps.map((s) => [s.file, s.status])).toEqual([['api-objects.json', 'ok']]);
    const rec = await apiRecord(steps, '2026-11-26T11:00:00.000Z');
    expect(rec).toEqual({ status: 'ok', context: 'kind-prod', collectedAt: '2026-11-26T11:00:00.000Z' });
    // Read-only: a get (and the context lookup), nothing else.
    expect(readFileSync(args, 'utf8').trim().split('\n')).toEqual(['--request-timeout=20s get services,endpointslices,nodes,pods --all-namespaces -o json', 'config current-context']);
    const snap = await loadSnapshot([dir]);
    expect(snap.files.map((f) => f.format)).toEqual(['k8s-api']);
    // The cluster's Services, plus the headless and ExternalName ones the generator adds to the API.
    expect(snap.api?.services.length).toBe(cluster.services.length + 2);
  });

  it('says why when kubectl cannot reach a cluster, and writes no file', async () => {
    kubectl('echo "The connection to the server localhost:8080 was refused - did you specify the right host or port?" >&2; exit 1');
    const dir = join(tmp, 'b2');
    mkdirSync(dir);
    const steps = await runSteps(dir, API_STEPS, write);
    expect(steps).toEqual([{ file: 'api-objects.json', command: 'kubectl --request-timeout=20s get services,endpointslices,nodes,pods --all-namespaces -o json', status: 'skipped', detail: 'The connection to the server localhost:8080 was refused - did you specify the right host or port?' }]);
    expect(await apiRecord(steps, 't')).toEqual({ status: 'skipped', context: null, collectedAt: 't', detail: steps[0].detail });
  });

  it('without kubectl: missing, said so', async () => {
    const bin = join(tmp, `empty-${++n}`);
    mkdirSync(bin);
    process.env.PATH = bin;
    const steps = await runSteps(join(tmp), API_STEPS, write);
    expect(steps[0]).toMatchObject({ status: 'missing', detail: 'kubectl is not installed' });
  });
});
