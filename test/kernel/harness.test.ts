/**
 * Proves the kernel harness itself on small hand-written dumps (test/fixtures/kernel/, each
 * saying what the kernel must do). Statistical assertions use a fixed alpha = 1e-6.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { requireKernel } from '../helpers/netns.js';
import {
  binomialBound,
  chiSquareConsistent,
  dnatTargets,
  leftovers,
  parseConntrack,
  samplesToDistinguish,
  TOPOLOGY,
  withKernelNode,
  type KernelObservation,
} from './harness/index.js';

const FIX = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/kernel');
const fx = (name: string) => readFileSync(join(FIX, name), 'utf8');
const NODE = '172.18.0.2';
const POD_CIDR = '10.244.0.0/16';

const kernel = requireKernel();

/** Every packet NATed to one of `keys`, distributed like `probs`. */
function expectDistribution(obs: KernelObservation, probs: Record<string, number>) {
  expect(obs.total).toBeGreaterThan(0);
  const chi = chiSquareConsistent(obs.outcomes, probs);
  expect(chi.reason ?? 'ok', JSON.stringify(obs.outcomes)).toBe('ok');
  for (const [k, p] of Object.entries(probs)) {
    const { lo, hi } = binomialBound(obs.total, p);
    const n = obs.outcomes[k] ?? 0;
    expect(n, `${k}: ${n} of ${obs.total} outside [${lo}, ${hi}]`).toBeGreaterThanOrEqual(lo);
    expect(n, `${k}: ${n} of ${obs.total} outside [${lo}, ${hi}]`).toBeLessThanOrEqual(hi);
  }
}

describe('statistics helpers', () => {
  it('binomialBound brackets the mean and tells 0.5 from 1/3 at N=400', () => {
    const b = binomialBound(400, 0.5);
    expect(b.lo).toBeLessThan(200);
    expect(b.hi).toBeGreaterThan(200);
    expect(b.lo).toBeGreaterThan(133); // the mean under p=1/3 is outside: a wrong ladder fails
    expect(binomialBound(10, 0)).toEqual({ lo: 0, hi: 0 });
    expect(binomialBound(10, 1)).toEqual({ lo: 10, hi: 10 });
  });
  it('chiSquareConsistent accepts a fair split and rejects a wrong ladder or an unexpected outcome', () => {
    expect(chiSquareConsistent({ a: 205, b: 195 }, { a: 0.5, b: 0.5 }).consistent).toBe(true);
    expect(chiSquareConsistent({ a: 200, b: 100, c: 100 }, { a: 1 / 3, b: 1 / 3, c: 1 / 3 }).consistent).toBe(false);
    const odd = chiSquareConsistent({ a: 10, DROP: 1 }, { a: 1 });
    expect(odd.consistent).toBe(false);
    expect(odd.reason).toContain('DROP');
  });
  it('samplesToDistinguish gives the N needed', () => {
    const n = samplesToDistinguish(0.5, 1 / 3);
    expect(n).toBeGreaterThan(400);
    expect(n).toBeLessThan(700);
  });
  it('dnatTargets finds iptables and nft targets', () => {
    expect(dnatTargets([fx('ladder2.iptables')])).toEqual({ addresses: ['10.244.1.1', '10.244.1.2'], ports: [5353, 8080] });
    expect(dnatTargets([fx('ipv6.ip6tables')]).addresses).toEqual(['fd00:10:244:1::5', 'fd00:10:244:1::6']);
    expect(dnatTargets([fx('numgen.nft')])).toEqual({ addresses: ['10.244.7.1', '10.244.7.2'], ports: [8080] });
    expect(dnatTargets(['dnat ip to numgen random mod 2 map { 0 : 10.1.1.1 . 80, 1 : 10.1.1.2 . 81 }'])).toEqual({
      addresses: ['10.1.1.1', '10.1.1.2'],
      ports: [80, 81],
    });
  });
  it('parseConntrack reads original and reply tuples', () => {
    const [e] = parseConntrack(
      'udp      17 29 src=203.0.113.10 dst=10.96.0.10 sport=20000 dport=53 [UNREPLIED] src=10.244.1.1 dst=198.18.1.1 sport=5353 dport=20000 mark=0 use=1\n',
    );
    expect(e.proto).toBe('udp');
    expect(e.orig).toEqual({ src: '203.0.113.10', dst: '10.96.0.10', sport: 20000, dport: 53 });
    expect(e.reply).toEqual({ src: '10.244.1.1', dst: '198.18.1.1', sport: 5353, dport: 20000 });
  });
});

describe.runIf(kernel)('kernel harness (real netfilter in namespaces)', () => {
  afterAll(() => {
    expect(leftovers()).toEqual([]);
  });

  it('2-endpoint ladder splits ~50/50 (UDP and TCP), an unmatched VIP is not NATed', async () => {
    await withKernelNode({ iptables: fx('ladder2.iptables'), nodeAddresses: [NODE], podCidr: POD_CIDR }, async (node) => {
      expect(node.targets.addresses).toEqual(['10.244.1.1', '10.244.1.2']);
      const udp = await node.send({ proto: 'udp', dst: '10.96.0.10', dport: 53, from: 'external', packets: 400 });
      expectDistribution(udp, { '10.244.1.1:5353': 0.5, '10.244.1.2:5353': 0.5 });
      expect(udp.masqueraded).toEqual({});
      // The responders agree with conntrack: every packet was answered by its DNAT target.
      expect(udp.echoed).toEqual(udp.outcomes);

      const tcp = await node.send({ proto: 'tcp', dst: '10.96.0.10', dport: 80, from: 'external', packets: 400 });
      expectDistribution(tcp, { '10.244.1.1:8080': 0.5, '10.244.1.2:8080': 0.5 });
      expect(tcp.echoed).toEqual(tcp.outcomes);
      expect(tcp.senderStatus).toEqual({ reply: 400 });

      const none = await node.send({ proto: 'tcp', dst: '10.96.0.99', dport: 80, from: 'external', packets: 20, timeoutMs: 400 });
      expect(none.outcomes).toEqual({ '10.96.0.99:80': 20 });
      expect(none.masqueraded).toEqual({});
    });
  });

  it('3-endpoint ladder gives 1/3 each', async () => {
    await withKernelNode({ iptables: fx('ladder3.iptables'), nodeAddresses: [NODE], podCidr: POD_CIDR }, async (node) => {
      const obs = await node.send({ proto: 'tcp', dst: '10.96.0.20', dport: 80, from: 'external', packets: 600 });
      expectDistribution(obs, { '10.244.2.1:8080': 1 / 3, '10.244.2.2:8080': 1 / 3, '10.244.2.3:8080': 1 / 3 });
      // The same data refutes a wrong model (first rung 0.5 instead of 1/3).
      expect(chiSquareConsistent(obs.outcomes, { '10.244.2.1:8080': 0.5, '10.244.2.2:8080': 0.25, '10.244.2.3:8080': 0.25 }).consistent).toBe(false);
    });
  });

  it('REJECT (no endpoints) and DROP are told apart, on FORWARD and OUTPUT paths', async () => {
    await withKernelNode({ iptables: fx('reject-drop.iptables'), nodeAddresses: [NODE], podCidr: POD_CIDR }, async (node) => {
      const rejTcp = await node.send({ proto: 'tcp', dst: '10.96.0.30', dport: 80, from: 'external', packets: 30 });
      expect(rejTcp.outcomes).toEqual({ REJECT: 30 });
      expect(rejTcp.senderStatus).toEqual({ refused: 30 });
      const rejUdp = await node.send({ proto: 'udp', dst: '10.96.0.30', dport: 53, from: 'external', packets: 30 });
      expect(rejUdp.outcomes).toEqual({ REJECT: 30 });
      const rejLocal = await node.send({ proto: 'tcp', dst: '10.96.0.30', dport: 80, from: 'node', packets: 10 });
      expect(rejLocal.outcomes).toEqual({ REJECT: 10 });
      const rejLocalUdp = await node.send({ proto: 'udp', dst: '10.96.0.30', dport: 53, from: 'node', packets: 10 });
      expect(rejLocalUdp.outcomes).toEqual({ REJECT: 10 });

      const dropUdp = await node.send({ proto: 'udp', dst: '10.96.0.40', dport: 5353, from: 'external', packets: 30, timeoutMs: 400 });
      expect(dropUdp.outcomes).toEqual({ DROP: 30 });
      expect(dropUdp.senderStatus).toEqual({ timeout: 30 });
      const dropTcp = await node.send({ proto: 'tcp', dst: '10.96.0.40', dport: 80, from: 'pod', packets: 30, timeoutMs: 400 });
      expect(dropTcp.outcomes).toEqual({ DROP: 30 });
      // An unrelated VIP passes the same filter table untouched.
      const pass = await node.send({ proto: 'udp', dst: '10.96.0.41', dport: 53, from: 'external', packets: 5, timeoutMs: 300 });
      expect(pass.outcomes).toEqual({ '10.96.0.41:53': 5 });
    });
  });

  it('masquerade for an external source, none for a pod source, and the OUTPUT path from the node', async () => {
    await withKernelNode({ iptables: fx('masquerade.iptables'), nodeAddresses: [NODE], podCidr: POD_CIDR }, async (node) => {
      const ext = await node.send({ proto: 'tcp', dst: '10.96.0.50', dport: 80, from: 'external', packets: 40 });
      expect(ext.outcomes).toEqual({ '10.244.5.5:8080': 40 });
      expect(ext.masqueraded).toEqual({ '10.244.5.5:8080': 40 });
      expect(ext.snatTo).toEqual({ '10.244.5.5:8080': [TOPOLOGY.nodePodsLink[4]] });
      // The endpoint itself saw the masqueraded source.
      expect(ext.packets.every((p) => p.reply?.split(' ')[2] === TOPOLOGY.nodePodsLink[4])).toBe(true);

      const pod = await node.send({ proto: 'udp', dst: '10.96.0.50', dport: 53, from: 'pod', packets: 40 });
      expect(pod.outcomes).toEqual({ '10.244.5.5:5353': 40 });
      expect(pod.masqueraded).toEqual({});
      expect(pod.source.startsWith('10.244.')).toBe(true);
      expect(pod.echoed).toEqual({ '10.244.5.5:5353': 40 });

      const extUdp = await node.send({ proto: 'udp', dst: '10.96.0.50', dport: 53, from: { ip: '192.0.2.77' }, packets: 20 });
      expect(extUdp.outcomes).toEqual({ '10.244.5.5:5353': 20 });
      expect(extUdp.masqueraded).toEqual({ '10.244.5.5:5353': 20 });

      const local = await node.send({ proto: 'tcp', dst: '10.96.0.50', dport: 80, from: 'node', packets: 20 });
      expect(local.outcomes).toEqual({ '10.244.5.5:8080': 20 });
      expect(local.masqueraded).toEqual({ '10.244.5.5:8080': 20 });
      expect(local.packets.every((p) => p.status === 'reply')).toBe(true);
    });
  });

  it('IPv6: 2-endpoint ladder from ip6tables-save', async () => {
    await withKernelNode(
      { ip6tables: fx('ipv6.ip6tables'), nodeAddresses: [NODE, 'fd00:172:18::2'], podCidr: `${POD_CIDR},fd00:10:244::/48` },
      async (node) => {
        const obs = await node.send({ proto: 'tcp', dst: 'fd00:10:96::a', dport: 80, from: 'external', packets: 300 });
        expectDistribution(obs, { '[fd00:10:244:1::5]:8080': 0.5, '[fd00:10:244:1::6]:8080': 0.5 });
        expect(obs.echoed).toEqual(obs.outcomes);
        const pod = await node.send({ proto: 'udp', dst: 'fd00:10:96::a', dport: 80, from: 'pod', packets: 10, timeoutMs: 300 });
        expect(pod.outcomes).toEqual({ '[fd00:10:96::a]:80': 10 }); // only TCP has a rule
      },
    );
  });

  it('nftables: numgen random mod 2 vmap', async () => {
    await withKernelNode({ nft: fx('numgen.nft'), nodeAddresses: [NODE], podCidr: POD_CIDR }, async (node) => {
      const obs = await node.send({ proto: 'tcp', dst: '10.96.0.70', dport: 80, from: 'external', packets: 400 });
      expectDistribution(obs, { '10.244.7.1:8080': 0.5, '10.244.7.2:8080': 0.5 });
      const local = await node.send({ proto: 'tcp', dst: '10.96.0.70', dport: 80, from: 'node', packets: 20 });
      expect(local.total).toBe(20);
      expect(Object.keys(local.outcomes).every((k) => k === '10.244.7.1:8080' || k === '10.244.7.2:8080')).toBe(true);
      const other = await node.send({ proto: 'tcp', dst: '10.96.0.70', dport: 81, from: 'external', packets: 5, timeoutMs: 300 });
      expect(other.outcomes).toEqual({ '10.96.0.70:81': 5 });
    });
  });

  it('ipset: -m set --match-set X dst,dst then DNAT', async () => {
    await withKernelNode(
      { ipsetSave: fx('ipset.ipset'), iptables: fx('ipset.iptables'), nodeAddresses: [NODE], podCidr: POD_CIDR },
      async (node) => {
        const tcp = await node.send({ proto: 'tcp', dst: '10.96.0.60', dport: 80, from: 'external', packets: 20 });
        expect(tcp.outcomes).toEqual({ '10.244.6.1:8080': 20 });
        const udp = await node.send({ proto: 'udp', dst: '10.96.0.60', dport: 53, from: 'pod', packets: 20 });
        expect(udp.outcomes).toEqual({ '10.244.6.1:8080': 20 });
        const miss = await node.send({ proto: 'tcp', dst: '10.96.0.60', dport: 81, from: 'external', packets: 5, timeoutMs: 300 });
        expect(miss.outcomes).toEqual({ '10.96.0.60:81': 5 });
      },
    );
  });

  it('-m recent: first-packet odds with clearRecentEachPacket', async () => {
    await withKernelNode({ iptables: fx('affinity.iptables'), nodeAddresses: [NODE], podCidr: POD_CIDR }, async (node) => {
      const first = await node.send({ proto: 'tcp', dst: '10.96.0.80', dport: 80, from: 'external', packets: 200, clearRecentEachPacket: true });
      expectDistribution(first, { '10.244.8.1:8080': 0.5, '10.244.8.2:8080': 0.5 });
    });
  });

  it('SCTP (raw INIT chunks): ladder, REJECT, and the OUTPUT path', async () => {
    await withKernelNode({ iptables: fx('sctp.iptables'), nodeAddresses: [NODE], podCidr: POD_CIDR }, async (node) => {
      const obs = await node.send({ proto: 'sctp', dst: '10.96.0.90', dport: 7777, from: 'external', packets: 300 });
      expectDistribution(obs, { '10.244.9.1:7777': 0.5, '10.244.9.2:7777': 0.5 });
      // The pods namespace has no SCTP stack: each endpoint answers "protocol unreachable".
      expect(obs.senderStatus).toEqual({ reply: 300 });
      const rej = await node.send({ proto: 'sctp', dst: '10.96.0.91', dport: 7777, from: 'pod', packets: 20 });
      expect(rej.outcomes).toEqual({ REJECT: 20 });
      expect(rej.senderStatus).toEqual({ refused: 20 });
      const local = await node.send({ proto: 'sctp', dst: '10.96.0.90', dport: 7777, from: 'node', packets: 20 });
      expect(local.total).toBe(20);
      expect(Object.keys(local.outcomes).every((k) => k === '10.244.9.1:7777' || k === '10.244.9.2:7777')).toBe(true);
      const none = await node.send({ proto: 'sctp', dst: '10.96.0.92', dport: 7777, from: 'external', packets: 5, timeoutMs: 300 });
      expect(none.outcomes).toEqual({ '10.96.0.92:7777': 5 });
    });
  });

  it('IPv6 REJECT is seen as REJECT (TCP, UDP, from a client, a pod and the node itself)', async () => {
    // The ICMPv6 error must not reach the sender while connect() owns the socket (CpuPlan).
    const ip6 = [
      '*filter',
      ':INPUT ACCEPT [0:0]',
      ':FORWARD ACCEPT [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      '-A FORWARD -d fd00:10:96::30/128 -j REJECT --reject-with icmp6-port-unreachable',
      '-A OUTPUT -d fd00:10:96::30/128 -j REJECT --reject-with icmp6-port-unreachable',
      '-A FORWARD -d fd00:10:96::40/128 -j DROP',
      'COMMIT',
      '',
    ].join('\n');
    await withKernelNode({ ip6tables: ip6, nodeAddresses: [NODE, 'fd00:172:18::2'], podCidr: `${POD_CIDR},fd00:10:244::/48` }, async (node) => {
      if (node.cpus.fallback) console.warn(`harness: ${node.cpus.fallback}; IPv6 TCP REJECT waits for the SYN retransmit`);
      const tcp = await node.send({ proto: 'tcp', dst: 'fd00:10:96::30', dport: 80, from: 'external', packets: 100 });
      expect(tcp.outcomes).toEqual({ REJECT: 100 });
      expect(tcp.senderStatus).toEqual({ refused: 100 });
      const udp = await node.send({ proto: 'udp', dst: 'fd00:10:96::30', dport: 53, from: 'pod', packets: 50 });
      expect(udp.outcomes).toEqual({ REJECT: 50 });
      const local = await node.send({ proto: 'tcp', dst: 'fd00:10:96::30', dport: 80, from: 'node', packets: 30 });
      expect(local.outcomes).toEqual({ REJECT: 30 });
      const drop = await node.send({ proto: 'tcp', dst: 'fd00:10:96::40', dport: 80, from: 'external', packets: 20, timeoutMs: 400 });
      expect(drop.outcomes).toEqual({ DROP: 20 });
    });
  });

  it('hairpin: a source that is a DNAT target sends from the pods namespace', async () => {
    await withKernelNode({ iptables: fx('ladder2.iptables'), nodeAddresses: [NODE], podCidr: POD_CIDR }, async (node) => {
      const obs = await node.send({ proto: 'tcp', dst: '10.96.0.10', dport: 80, from: { ip: '10.244.1.1' }, packets: 400 });
      expect(obs.source).toBe('10.244.1.1');
      expectDistribution(obs, { '10.244.1.1:8080': 0.5, '10.244.1.2:8080': 0.5 });
      // The ladder has no masquerade rule, so conntrack is the witness here: un-masqueraded,
      // every endpoint answers the caller directly inside the pods namespace (not through the
      // node), which is exactly why kube-proxy masquerades hairpin traffic.
      expect(obs.masqueraded).toEqual({});
      expect(obs.senderStatus.refused ?? 0).toBe(0);
    });
  });

  it('nftRuleset is what the kernel printed back after loading, before the observer table', async () => {
    await withKernelNode({ nft: fx('numgen.nft'), nodeAddresses: [NODE], podCidr: POD_CIDR }, async (node) => {
      expect(node.nftRuleset).toMatch(/numgen random mod 2/);
      expect(node.nftRuleset).not.toContain('kpxt_observe');
      expect(node.nodeExec('nft', ['list', 'ruleset'])).toContain('kpxt_observe');
    });
  });

  it('a failing scenario still cleans up', async () => {
    await expect(
      withKernelNode({ iptables: '*nat\n-A NOSUCHCHAIN -j ACCEPT\nCOMMIT\n', nodeAddresses: [NODE] }, async () => 1),
    ).rejects.toThrow(/iptables-restore failed/);
    expect(leftovers()).toEqual([]);
  });

  it('leaves nothing behind', () => {
    expect(leftovers()).toEqual([]);
  });
});
