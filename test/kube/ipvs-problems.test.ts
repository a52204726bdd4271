/**
 * IPVS resolver problems are typed codes with fields (issue 15); only src/render/problems.ts words
 * them. A listing with an empty virtual server and a Local-policy mismatch, read from `ipvsadm -Ln` text.
 */
import { describe, expect, it } from 'vitest';
import { resolveServices } from '../../src/kube/resolve.js';
import { problemText } from '../../src/render/problems.js';
import { snapshotOf } from '../lint/helpers.js';

// The shape of `ipvsadm -Ln` on a kube-proxy IPVS node (header and columns as ipvsadm 1.31 prints them).
const LISTING = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.96.0.1:443 rr
  -> 172.18.0.2:6443              Masq    1      0          0
TCP  10.96.0.20:80 rr
UDP  10.96.0.10:53 rr
  -> 10.244.0.2:53                Masq    0      0          0
  -> 10.244.1.2:53                Masq    1      0          0
`;

describe('IPVS problems are typed', () => {
  it('no real servers and some draining: codes with fields, the same sentences as before', async () => {
    const res = await resolveServices(await snapshotOf({ 'ipvsadm.txt': LISTING }));
    const empty = res.services.find((s) => s.id === '10.96.0.20:80/tcp')!;
    expect(empty.state).toBe('no-endpoints');
    expect(empty.problems).toEqual([{ code: 'ipvs-no-real-servers' }]);
    expect(empty.problems.map(problemText)).toEqual(['no real servers: new connections get no destination']);
    const dns = res.services.find((s) => s.id === '10.96.0.10:53/udp')!;
    expect(dns.problems).toEqual([{ code: 'ipvs-some-draining', zero: 1, of: 2 }]);
    expect(dns.problems.map(problemText)).toEqual(['1 of 2 real servers have weight 0 (draining: no new connections)']);
    // No problem is a sentence wrapped in a placeholder code any more.
    for (const s of res.services) for (const p of s.problems) expect(Object.keys(p)).not.toContain('text');
  });
});

describe('a real server printed as a name (ipvsadm -L without -n) is not an endpoint', () => {
  // Unit test: a constructed listing where one real server field is a host name, not an address.
  const NAMED = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.96.0.30:80 rr
  -> web-0.example:80             Masq    1      0          0
TCP  10.96.0.31:80 rr
  -> 10.244.1.7:80                Masq    1      0          0
  -> db-1.example:80              Masq    1      0          0
`;
  it('the Service port is unknown, not healthy and not empty; its endpoints are the addresses only', async () => {
    const res = await resolveServices(await snapshotOf({ 'ipvsadm.txt': NAMED }));
    const only = res.services.find((s) => s.id === '10.96.0.30:80/tcp')!;
    expect(only.endpoints).toEqual([]);
    expect(only.state).toBe('unknown');
    expect(only.problems.map((p) => p.code)).toEqual(['real-server-not-an-address']);
    expect(only.problems.map(problemText)[0]).toContain('real server web-0.example of TCP/10.96.0.30:80');
    const mixed = res.services.find((s) => s.id === '10.96.0.31:80/tcp')!;
    expect(mixed.endpoints.map((e) => e.ip)).toEqual(['10.244.1.7']);
    expect(mixed.state).toBe('partial');
    expect(mixed.problems.map((p) => p.code)).toContain('real-server-not-an-address');
  });
});
