/**
 * NONE vs ACCEPT: the kernel cannot tell them apart (both leave the packet's destination
 * unchanged, the oracle calls both PASS), so kpx's labels are checked here without a kernel:
 * NONE when no rule claimed the packet (policies let it through), ACCEPT when a rule accepted
 * it explicitly, for iptables dumps and for nftables rulesets alike.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseDestination } from '../../../src/trace/packet.js';
import { tracePacket } from '../../../src/trace/trace.js';
import { kpxTrace, loadKpx, predictionOf, type KpxNode } from './compare.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
const NODE = '172.18.0.2';

const verdicts = (kpx: KpxNode, dst: string, dport: number, source: string, established = false) => {
  const d = parseDestination(`${dst}:${dport}/tcp`);
  if (typeof d === 'string') throw new Error(d);
  const t = established
    ? tracePacket(kpx.snapshot, kpx.resolution, d, 'tcp', { from: { ip: source }, sport: 40000, assumptions: { established: true, affinityHit: false } })
    : kpxTrace(kpx, { proto: 'tcp', dst, dport }, source, 40000);
  return { verdicts: [...new Set(t.outcomes.map((o) => o.verdict))], trace: t };
};

describe('kpx labels what the kernel cannot tell apart: NONE vs ACCEPT', () => {
  it('kind sample: an unclaimed VIP port is NONE, from outside and from a pod', async () => {
    const kpx = await loadKpx({ name: 'kind', scenario: { iptables: read('samples/iptables-mode-kind/iptables-save.txt'), nodeAddresses: [NODE], podCidr: '10.244.0.0/16' } });
    for (const src of ['203.0.113.10', '10.244.1.250']) {
      const { verdicts: v, trace } = verdicts(kpx, '10.96.0.10', 9999, src);
      expect(v).toEqual(['NONE']);
      expect(trace.outcomes[0].destination).toBe('10.96.0.10:9999');
      // The oracle sees both labels as one observable outcome: the destination unchanged.
      const p = predictionOf(trace);
      expect(p.outcomes.map((o) => [o.key, o.verdict, o.kpxVerdicts])).toEqual([['10.96.0.10:9999', 'PASS', ['NONE']]]);
    }
    // A Service port is DNAT, never NONE/ACCEPT.
    expect(verdicts(kpx, '10.96.0.10', 53, '10.244.1.250').verdicts).toEqual(['DNAT']);
  });

  it('kind sample: an ESTABLISHED packet to the same VIP is ACCEPTed by KUBE-FORWARD\'s conntrack rule', async () => {
    const kpx = await loadKpx({ name: 'kind', scenario: { iptables: read('samples/iptables-mode-kind/iptables-save.txt'), nodeAddresses: [NODE], podCidr: '10.244.0.0/16' } });
    const { verdicts: v, trace } = verdicts(kpx, '10.96.0.10', 9999, '203.0.113.10', true);
    expect(v).toEqual(['ACCEPT']);
    expect(trace.outcomes[0].steps.map((s) => s.chain)).toContain('KUBE-FORWARD');
    expect(predictionOf(trace).outcomes[0]).toMatchObject({ key: '10.96.0.10:9999', verdict: 'PASS', kpxVerdicts: ['ACCEPT'] });
  });

  it('hand-written dump: an explicit -j ACCEPT is ACCEPT, no rule is NONE, DNAT stays DNAT (FORWARD and OUTPUT paths)', async () => {
    const kpx = await loadKpx({ name: 'accept', scenario: { iptables: read('test/fixtures/oracle/accept.iptables'), nodeAddresses: [NODE], podCidr: '10.244.0.0/16' } });
    for (const src of ['203.0.113.10', NODE]) {
      expect(verdicts(kpx, '10.96.5.5', 80, src).verdicts).toEqual(['ACCEPT']);
      expect(verdicts(kpx, '10.96.5.6', 80, src).verdicts).toEqual(['NONE']);
      expect(verdicts(kpx, '10.96.5.7', 80, src).verdicts).toEqual(['DNAT']);
    }
    const acc = predictionOf(verdicts(kpx, '10.96.5.5', 80, '203.0.113.10').trace);
    const none = predictionOf(verdicts(kpx, '10.96.5.6', 80, '203.0.113.10').trace);
    expect([acc.outcomes[0].verdict, none.outcomes[0].verdict]).toEqual(['PASS', 'PASS']);
  });

  it('nftables: `accept` in a base chain is ACCEPT, falling off a policy-accept chain is NONE', async () => {
    const nft = [
      'table ip t {',
      '\tchain fwd {',
      '\t\ttype filter hook forward priority filter; policy accept;',
      '\t\tip daddr 10.96.5.5 tcp dport 80 accept',
      '\t}',
      '}',
      '',
    ].join('\n');
    const kpx = await loadKpx({ name: 'accept-nft', scenario: { nft, nodeAddresses: [NODE], podCidr: '10.244.0.0/16' } });
    expect(verdicts(kpx, '10.96.5.5', 80, '203.0.113.10').verdicts).toEqual(['ACCEPT']);
    expect(verdicts(kpx, '10.96.5.6', 80, '203.0.113.10').verdicts).toEqual(['NONE']);
    expect(verdicts(kpx, '10.96.5.5', 81, '203.0.113.10').verdicts).toEqual(['NONE']);
  });
});
