/**
 * The IPVS scheduler as the trace uses it: each real server's share of new connections, by
 * scheduler and weight, branching like statistic and numgen shares. Hand-written `ipvsadm -Ln`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { ipvsAlternatives } from '../../src/trace/ipvs.js';
import { parseDestination, type Destination } from '../../src/trace/packet.js';
import { tracePacket } from '../../src/trace/trace.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpx-ipvs-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const IPVSADM = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.96.0.20:80 wlc
  -> 10.244.1.5:8080              Masq    1      0          0
  -> 10.244.2.6:8080              Masq    2      0          0
  -> 10.244.2.7:8080              Masq    0      3          0
UDP  10.96.0.10:53 rr
  -> 10.244.0.2:53                Masq    1      0          0
  -> 10.244.1.2:53                Masq    5      0          0
  -> 10.244.1.3:53                Masq    1      0          0
TCP  10.96.0.30:80 rr
  -> 10.244.1.9:8080              Masq    0      0          0
`;

async function snapshot() {
  const f = join(tmp, 'ipvsadm-Ln.txt');
  writeFileSync(f, IPVSADM);
  return loadSnapshot([f], {});
}

describe('IPVS scheduler shares', () => {
  it('wlc splits by weight, a weight-0 (draining) server takes no new connection; rr splits evenly over weights > 0', async () => {
    const snap = await snapshot();
    const [dump] = snap.ipvs;
    const shares = (addr: string) =>
      ipvsAlternatives(dump.virtualServers.find((v) => v.address === addr)!).map((c) => {
        const e = c.alt.effects[0];
        return [e.kind === 'ipvs' ? e.address : '?', Number(c.alt.share.toFixed(12))];
      });
    expect(shares('10.96.0.20')).toEqual([
      ['10.244.1.5', Number((1 / 3).toFixed(12))],
      ['10.244.2.6', Number((2 / 3).toFixed(12))],
    ]);
    expect(shares('10.96.0.10')).toEqual([
      ['10.244.0.2', Number((1 / 3).toFixed(12))],
      ['10.244.1.2', Number((1 / 3).toFixed(12))],
      ['10.244.1.3', Number((1 / 3).toFixed(12))],
    ]);
    expect(shares('10.96.0.30')).toEqual([]);
  });

  it('a trace of an ipvsadm dump alone gives each real server its share, summing to 1, and says why the VIP is local', async () => {
    const snap = await snapshot();
    const res = await resolveServices(snap);
    const t = tracePacket(snap, res, parseDestination('10.96.0.20:80/tcp') as Destination, 'tcp', { from: 'pod', assumptions: { established: false, affinityHit: false } });
    expect(t.outcomes.map((o) => [o.verdict, o.destination, Number(o.probability.toFixed(9))])).toEqual([
      ['DNAT', '10.244.2.6:8080', 0.666666667],
      ['DNAT', '10.244.1.5:8080', 0.333333333],
    ]);
    expect(t.scenarios).toEqual([{ conditions: [], outcomes: [0, 1] }]);
    expect(t.assumptions).toContainEqual({ code: 'ipvs-address-local', address: '10.96.0.20' });
    expect(t.outcomes[0].steps).toEqual([expect.objectContaining({ code: 'ipvs-real-server', dialect: 'ipvs', address: '10.244.2.6', port: 8080, weight: 2, rule: 6 })]);
  });

  it('a real server printed by name (ipvsadm -L without -n) takes its share to an UNKNOWN end, not a silent DROP', async () => {
    const f = join(tmp, 'ipvsadm-L.txt');
    writeFileSync(f, IPVSADM.split('\n').slice(0, 3).join('\n') + '\nTCP  10.96.0.40:80 rr\n  -> web-7d9c8-abcde.default.svc.c:8080 Masq 1 0 0\n  -> 10.244.2.6:8080              Masq    1      0          0\n');
    const snap = await loadSnapshot([f], {});
    const t = tracePacket(snap, undefined, parseDestination('10.96.0.40:80/tcp') as Destination, 'tcp', { from: 'pod', assumptions: { established: false, affinityHit: false } });
    expect(t.outcomes.map((o) => [o.verdict, o.probability, o.unknown ?? null])).toEqual([
      ['DNAT', 0.5, null],
      ['UNKNOWN', 0.5, { code: 'real-server-name', name: 'web-7d9c8-abcde.default.svc.c' }],
    ]);
  });

  // ip_vs_leave() (net/netfilter/ipvs/ip_vs_core.c): no destination for a new connection → ICMP port
  // unreachable to the client, TCP and UDP alike: refused at once, not a timeout.
  it('a virtual server whose real servers all have weight 0 refuses new connections (ICMP port unreachable)', async () => {
    const snap = await snapshot();
    const t = tracePacket(snap, undefined, parseDestination('10.96.0.30:80/tcp') as Destination, 'tcp', { from: 'pod', assumptions: { established: false, affinityHit: false } });
    expect(t.outcomes.map((o) => [o.verdict, o.probability, o.steps.at(-1)?.code])).toEqual([['REJECT', 1, 'ipvs-draining']]);
  });
});
