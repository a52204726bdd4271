/**
 * IPVS mode and the Local traffic policies (issue 32): what the dumps can and cannot say.
 *
 * Unit tests on constructed `ipvsadm -Ln` and `ipset list` text (the shapes kube-proxy writes:
 * pkg/proxy/ipvs/proxier.go, set names and types from pkg/proxy/ipvs/ipset.go). Since Kubernetes
 * 1.21 (PR 97081) a Local-policy virtual server without a local endpoint holds every endpoint
 * (syncEndpoint falls back to clusterEndpoints), so its real servers alone do not say whether any
 * is on this node; KUBE-LOOP-BACK (every local endpoint of every Service port) does.
 */
import { describe, expect, it } from 'vitest';
import { resolveServices } from '../../src/kube/resolve.js';
import { problemText } from '../../src/render/problems.js';
import { snapshotOf } from '../lint/helpers.js';

const LISTING = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.96.0.30:80 rr
  -> 10.244.1.7:8080              Masq    1      0          0
  -> 10.244.2.7:8080              Masq    1      0          0
TCP  192.168.1.10:30080 rr
  -> 10.244.1.7:8080              Masq    1      0          0
  -> 10.244.2.7:8080              Masq    1      0          0
`;

const set = (name: string, type: string, members: string[]) =>
  `Name: ${name}\nType: ${type}\nRevision: 1\nHeader: family inet hashsize 1024 maxelem 65536\nSize in memory: 400\nReferences: 1\nNumber of entries: ${members.length}\nMembers:\n${members.map((m) => `${m}\n`).join('')}`;

function ipsets(loopBack: string[] | null): string {
  return [
    set('KUBE-CLUSTER-IP', 'hash:ip,port', ['10.96.0.30,tcp:80']),
    set('KUBE-NODE-PORT-TCP', 'bitmap:port', ['30080']),
    set('KUBE-NODE-PORT-LOCAL-TCP', 'bitmap:port', ['30080']),
    ...(loopBack ? [set('KUBE-LOOP-BACK', 'hash:ip,port,ip', loopBack)] : []),
  ].join('\n');
}

async function nodePortService(loopBack: string[] | null) {
  const res = await resolveServices(await snapshotOf({ 'ipvsadm.txt': LISTING, 'ipset.txt': ipsets(loopBack) }));
  expect(res.services).toHaveLength(1);
  return res.services[0];
}

describe('externalTrafficPolicy Local (KUBE-NODE-PORT-LOCAL-TCP) with a NodePort virtual server holding every endpoint', () => {
  it('KUBE-LOOP-BACK whole and holding neither: no local endpoints (the 1.21+ fallback), not healthy', async () => {
    const s = await nodePortService(['10.244.9.9,tcp:8080,10.244.9.9']);
    expect(s).toMatchObject({ externalTrafficPolicy: 'Local', nodePort: 30080, state: 'no-local-endpoints' });
    expect(s.problems.map((p) => p.code)).toContain('ipvs-no-local-real-server');
  });

  it('KUBE-LOOP-BACK holding one: healthy, that one local', async () => {
    const s = await nodePortService(['10.244.1.7,tcp:8080,10.244.1.7']);
    expect(s.state).toBe('healthy');
    expect(s.endpoints.map((e) => `${e.ip} ${e.local}`)).toEqual(['10.244.1.7 true', '10.244.2.7 null']);
  });

  it('no KUBE-LOOP-BACK, no routes, no API objects: cannot tell, and says what would', async () => {
    const s = await nodePortService(null);
    expect(s.state).toBe('unknown');
    expect(s.problems).toEqual([{ code: 'ipvs-local-real-servers-unknown', vs: ['TCP/192.168.1.10:30080'] }]);
    expect(problemText(s.problems[0])).toMatch(/KUBE-LOOP-BACK .* EndpointSlices and Nodes would tell/);
    // Not claimed local for being behind a Local virtual server (before issue 32 both were local: true, healthy).
    expect(s.endpoints.map((e) => e.local)).toEqual([null, null]);
  });
});
