/**
 * Acceptance for issue 17: the generator writes the API objects of the cluster it renders; an
 * agreeing API gives no `api-` finding on iptables, IPVS and nftables nodes (with Local policies,
 * affinity, no-endpoint, headless and ExternalName Services present), and each drift the generator
 * puts in the API is found exactly once, with the right Service and address.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiObjects, DRIFTS, generateCluster, writeBundle, type Mode } from '../../src/generate/index.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { lintSnapshot } from '../../src/lint/run.js';
import type { Finding } from '../../src/lint/rule.js';
import { breathe } from '../helpers/breathe.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Rule id per drift kind the generator can make. */
const RULE_OF: Record<(typeof DRIFTS)[number], string> = {
  'service-not-programmed': 'api-service-not-programmed',
  'service-stale': 'api-service-stale',
  'endpoint-not-programmed': 'api-endpoint-not-programmed',
  'endpoint-stale': 'api-endpoint-stale',
  'terminating-programmed': 'api-terminating-endpoint-programmed',
  'traffic-policy': 'api-traffic-policy-mismatch',
  'session-affinity': 'api-traffic-policy-mismatch',
  'node-port': 'api-nodeport-mismatch',
  'external-ip': 'api-external-ip-mismatch',
  'load-balancer-ip': 'api-external-ip-mismatch',
  'source-range': 'api-source-range-mismatch',
};

async function lintBundle(mode: Mode, family: 4 | 6, drift: readonly (typeof DRIFTS)[number][]) {
  const cluster = generateCluster({ seed: 17, services: 60, family });
  const dir = mkdtempSync(join(tmpdir(), 'kpx-api-drift-'));
  dirs.push(dir);
  writeBundle(cluster, mode, dir, { api: { drift } });
  await breathe();
  const snapshot = await loadSnapshot([dir]);
  await breathe();
  const result = await lintSnapshot(snapshot);
  return { cluster, dir, snapshot, api: result.findings.filter((f) => f.ruleId.startsWith('api-')), applied: apiObjects(cluster, { drift }).applied };
}

describe.each([
  ['iptables', 4],
  ['ipvs', 4],
  ['nftables', 4],
  ['iptables', 6],
  ['nftables', 6],
] as const)('%s node, IPv%s', (mode, family) => {
  it('an agreeing API gives no api- finding (Local policies, affinity, no endpoints, headless, ExternalName present)', async () => {
    const { api, snapshot, cluster } = await lintBundle(mode, family, []);
    // The API was read, and it holds what the claim is about: otherwise zero findings would prove nothing.
    expect(snapshot.api?.services.length).toBe(cluster.services.length + 2);
    const svcs = snapshot.api!.services;
    expect(svcs.some((s) => s.clusterIP === 'None')).toBe(true);
    expect(svcs.some((s) => s.type === 'ExternalName')).toBe(true);
    expect(svcs.some((s) => s.externalTrafficPolicy === 'Local' && s.type !== 'ClusterIP')).toBe(true);
    expect(svcs.some((s) => s.internalTrafficPolicy === 'Local')).toBe(true);
    expect(svcs.some((s) => s.sessionAffinitySeconds !== null)).toBe(true);
    const sliceOf = (name: string) => snapshot.api!.slices.find((sl) => sl.serviceName === name);
    expect(svcs.some((s) => s.clusterIP !== 'None' && s.type !== 'ExternalName' && (sliceOf(s.name)?.endpoints.length ?? 0) === 0)).toBe(true);
    expect(api.map((f) => `${f.ruleId} ${f.message}`)).toEqual([]);
  }, 120_000);

  it('finds each drift exactly once, naming the Service and the address', async () => {
    const { api, applied } = await lintBundle(mode, family, DRIFTS);
    // Every drift option found a Service to change (else the test below would check less than it says).
    expect(applied.map((a) => a.kind).sort()).toEqual([...DRIFTS].sort());
    const unexplained: Finding[] = [...api];
    for (const a of applied) {
      // IPVS virtual servers carry no names: a Service the API no longer has is named by its address.
      const service = mode === 'ipvs' && a.kind === 'service-stale' ? a.address : a.service;
      const hits = api.filter((f) => f.ruleId === RULE_OF[a.kind] && f.service === service && f.message.includes(a.address));
      expect(hits.map((f) => f.message), `${a.kind} ${a.service} ${a.address}`).toHaveLength(1);
      unexplained.splice(unexplained.indexOf(hits[0]), 1);
      // Evidence: the API object and the dump line, one as the location and the other related.
      const places = [hits[0], ...(hits[0].related ?? [])].map((p) => p.file);
      // (A Service the API no longer has has no API object to cite.)
      if (a.kind !== 'service-stale') expect(places.some((p) => p.endsWith('api-objects.json')), a.kind).toBe(true);
      // (A Service the node lacks has no dump line to cite.)
      if (a.kind !== 'service-not-programmed') expect(places.some((p) => !p.endsWith('api-objects.json')), a.kind).toBe(true);
    }
    expect(unexplained.map((f) => `${f.ruleId} ${f.message}`)).toEqual([]);
  }, 120_000);
});

it('a stale endpoint (a deleted pod still programmed) is an error; the finding points at the dump line', async () => {
  const { api } = await lintBundle('iptables', 4, ['endpoint-stale']);
  expect(api).toHaveLength(1);
  expect(api[0].severity).toBe('error');
  expect(api[0].text).toMatch(/KUBE-SEP-|-j DNAT/);
  expect(api[0].related?.[0].file).toMatch(/api-objects\.json$/);
  expect(readFileSync(api[0].related![0].file, 'utf8').split('\n')[api[0].related![0].line - 1]).toBe(api[0].related![0].text);
}, 120_000);
