/**
 * Acceptance (issue 18): real UDP/TCP traffic through a generated kube-proxy ruleset fills the
 * kernel's conntrack table; the test then restores the NEXT ruleset (endpoints removed, replaced,
 * one Service emptied) and asks the kernel which entries kube-proxy's cleanup deletes — by running
 * the deletions kube-proxy issues for removed endpoints (`conntrack -D -p udp --orig-dst VIP
 * --orig-port-dst PORT --reply-src OLD`, and `--orig-port-dst NODEPORT` for NodePorts, built here
 * from the generator's ground truth, not from kpx) and diffing the table. kpx, given the table as
 * `conntrack -L` and as `/proc/net/nf_conntrack` (both read from the namespace before the
 * deletions) and the node's `iptables-save`, must flag exactly those entries and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { generateCluster, iptablesSave, type Cluster, type Service, type ServicePort } from '../../src/generate/index.js';
import { requireKernel } from '../helpers/netns.js';
import { withKernelNode } from './harness/index.js';
import { lintFiles, of, snapshotOf } from '../lint/helpers.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { tracePacket } from '../../src/trace/trace.js';
import { traceRequest } from '../../src/cli/commands/trace.js';

const canRun = requireKernel();

const MIX = { udp: 0.6, nodePort: 0.5, noEndpoints: 0, multiPort: 0, sourceRanges: 0, externalLocal: 0, internalLocal: 0, affinity: 0, loadBalancer: 0, externalIPs: 0, sctp: 0 };

function withPort(c: Cluster, name: string, f: (p: ServicePort) => ServicePort): Cluster {
  const services = c.services.map((s): Service => (s.name === name ? { ...s, ports: s.ports.map(f) } : s));
  return { ...c, services, syncOrder: c.syncOrder.map((r) => ({ service: services.find((s) => s.name === r.service.name)!, port: services.find((s) => s.name === r.service.name)!.ports[0] })) };
}

/** `src:sport>dst:dport` of the original direction: how the test names an entry. */
function flowsOf(listing: string): Set<string> {
  const out = new Set<string>();
  for (const l of listing.split('\n')) {
    const m = /(udp|tcp)\s+\d+\s+(?:\d+\s+)?(?:[A-Z_]+\s+)?src=(\S+) dst=(\S+) sport=(\d+) dport=(\d+)/.exec(l);
    if (m) out.add(`${m[1]} ${m[2]}:${m[4]}>${m[3]}:${m[5]}`);
  }
  return out;
}
const flowOfFinding = (text: string | undefined): string => [...flowsOf(text ?? '')][0];

describe.runIf(canRun)('conntrack entries kube-proxy cleanup deletes, judged by the kernel', () => {
  it('flags exactly the UDP entries whose endpoint went away (conntrack -L and /proc/net/nf_conntrack alike)', async () => {
    let before = generateCluster({ seed: 5, services: 5, shapes: [], endpoints: { min: 3, max: 4 }, mix: MIX });
    // One TCP Service too: its entries to a removed endpoint must NOT be flagged (kube-proxy cleans UDP only).
    before = withPort(before, 'queue-store-2', (p) => ({ ...p, protocol: 'tcp' }));
    const svc = (name: string) => before.services.find((s) => s.name === name)!;
    const nodePortSvc = svc('front-metrics-4');
    const emptied = svc('billing-cache-1');
    const replaced = svc('search-gw-0');
    const tcp = svc('queue-store-2');
    expect(nodePortSvc.ports[0].nodePort).not.toBeNull();

    // The next state: front-metrics-4 loses its first endpoint, search-gw-0 has its first replaced,
    // billing-cache-1 has none left, queue-store-2 (TCP) loses one.
    let after = withPort(before, 'front-metrics-4', (p) => ({ ...p, endpoints: p.endpoints.slice(1) }));
    after = withPort(after, 'search-gw-0', (p) => ({ ...p, endpoints: [{ ...p.endpoints[0], ip: '10.244.0.99' }, ...p.endpoints.slice(1)] }));
    after = withPort(after, 'billing-cache-1', (p) => ({ ...p, endpoints: [] }));
    after = withPort(after, 'queue-store-2', (p) => ({ ...p, endpoints: p.endpoints.slice(1) }));

    await withKernelNode({ iptables: iptablesSave(before), nodeAddresses: [before.node.ip], podCidr: '10.244.0.0/16' }, async (node) => {
      const send = (proto: 'udp' | 'tcp', dst: string, dport: number, from: 'pod' | 'external', packets = 24) =>
        node.send({ proto, dst, dport, from, packets, keepConntrack: true });
      for (const s of [nodePortSvc, emptied, replaced]) await send('udp', s.clusterIP, s.ports[0].port, 'pod');
      await send('udp', before.node.ip, nodePortSvc.ports[0].nodePort!, 'external');
      await send('tcp', tcp.clusterIP, tcp.ports[0].port, 'pod');

      // kube-proxy syncs the next state.
      node.nodeExec('iptables-restore', [], iptablesSave(after));
      const listing = node.nodeExec('conntrack', ['-L']);
      const proc = node.nodeExec('cat', ['/proc/net/nf_conntrack']);
      const save = node.nodeExec('iptables-save', []);

      // The kernel's answer: run kube-proxy's deletions for the removed endpoints, diff the table.
      for (const s of after.services) {
        const was = before.services.find((b) => b.name === s.name)!.ports[0];
        const now = s.ports[0];
        if (now.protocol !== 'udp' || now.endpoints.length === 0) continue; // no serving endpoints: no cleanup
        const removed = was.endpoints.map((e) => e.ip).filter((ip) => !now.endpoints.some((e) => e.ip === ip));
        for (const ip of removed) {
          node.nodeExec('sh', ['-c', `conntrack -D -p udp --orig-dst ${s.clusterIP} --orig-port-dst ${now.port} --reply-src ${ip} || true`]);
          if (now.nodePort) node.nodeExec('sh', ['-c', `conntrack -D -p udp --orig-port-dst ${now.nodePort} --reply-src ${ip} || true`]);
        }
      }

      const remaining = flowsOf(node.nodeExec('conntrack', ['-L']));
      const all = flowsOf(listing);
      const deleted = new Set([...all].filter((f) => !remaining.has(f)));
      // The case must test something: deletions through both the ClusterIP and the NodePort, and entries kept.
      expect(deleted.size).toBeGreaterThanOrEqual(6);
      expect([...deleted].some((f) => f.includes(`>${before.node.ip}:${nodePortSvc.ports[0].nodePort}`))).toBe(true);
      expect([...deleted].some((f) => f.includes(`>${replaced.clusterIP}:`))).toBe(true);
      expect(all.size - deleted.size).toBeGreaterThan(20);

      for (const [name, text] of [['conntrack-L.txt', listing], ['nf_conntrack', proc]] as const) {
        const lint = await lintFiles({ 'iptables-save.txt': save, [name]: text });
        const stale = of(lint, 'conntrack-stale-udp-endpoint');
        const flagged = new Set(stale.map((f) => flowOfFinding(f.text)));
        expect(flagged.size, name).toBe(stale.length);
        expect([...flagged].sort(), name).toEqual([...deleted].sort());
        // The emptied Service's entries: not deleted by kube-proxy, flagged as pinned to a gone endpoint instead.
        const pinned = of(lint, 'conntrack-no-endpoints');
        expect(pinned.length, name).toBeGreaterThan(0);
        for (const f of pinned) expect(f.message, name).toContain(`${emptied.namespace}/${emptied.name}`);
        // Nothing else: no untranslated entries in this traffic; TCP entries to the removed endpoint are left alone.
        expect(of(lint, 'conntrack-unreplied-untranslated'), name).toEqual([]);
        expect(stale.every((f) => f.text?.startsWith('udp')), name).toBe(true);
      }

      // The trace of one of these established flows names the entry that pins it, from the real listing.
      const pinned = [...deleted].find((f) => f.includes(`>${replaced.clusterIP}:`))!;
      const m = /^udp (\S+):(\d+)>(\S+):(\d+)$/.exec(pinned)!;
      const snapshot = await snapshotOf({ 'iptables-save.txt': save, 'conntrack-L.txt': listing });
      const { dest } = traceRequest(`${m[3]}:${m[4]}/udp`, { from: m[1] } as never);
      const t = tracePacket(snapshot, await resolveServices(snapshot), dest, 'udp', { from: { ip: m[1] }, sport: Number(m[2]), assumptions: { established: true, affinityHit: false } });
      const line = listing.split('\n').findIndex((l) => l.includes(`src=${m[1]} dst=${m[3]} sport=${m[2]} dport=${m[4]}`)) + 1;
      const replySrc = /src=\S+ dst=\S+ sport=\d+ dport=\d+ src=(\S+) dst=\S+ sport=(\d+)/.exec(listing.split('\n')[line - 1])!;
      expect(line).toBeGreaterThan(0);
      expect(t.assumptions[0]).toMatchObject({ code: 'conntrack-pinned', file: 'conntrack-L.txt', line, to: `${replySrc[1]}:${replySrc[2]}`, current: false });
    });
  }, 120_000);
});
