/**
 * Honest traces from partial evidence (issue 15), with golden text: a grep of KUBE-SERVICES and one
 * Service's chains without the PREROUTING hook, the same with its endpoint chains, an nft
 * `service-ips` map without its base chain, and undecided input interfaces (scenarios that each
 * sum to 1, not outcomes multiplied to 100% each). Fragments are lines of samples/ as pasted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { chalkInit } from '../../src/render/colors.js';
import { renderTraceText } from '../../src/render/trace/index.js';
import { parseDestination, type Destination } from '../../src/trace/packet.js';
import { tracePacket, type SourceSpec } from '../../src/trace/trace.js';
import type { Trace } from '../../src/trace/types.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpx-fragments-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function traceOf(name: string, text: string, dest: string, from: SourceSpec = 'pod', nodeIps: string[] = []): Promise<{ t: Trace; text: string }> {
  const f = join(tmp, name);
  writeFileSync(f, text);
  const snap = await loadSnapshot([f], { nodeIps });
  const d = parseDestination(dest) as Destination;
  const t = tracePacket(snap, await resolveServices(snap), d, d.protocol!, { from, assumptions: { established: false, affinityHit: false } });
  return { t, text: renderTraceText(t, chalkInit(false)).split(tmp + '/').join('') };
}

/** Shares per scenario: each must be 1. */
const scenarioSums = (t: Trace) => t.scenarios.map((s) => Number(s.outcomes.reduce((n, i) => n + t.outcomes[i].probability, 0).toFixed(9)));

// `iptables-save | grep KUBE-SVC-TCOU7JCQXEZGVUNU` on samples/iptables-mode-node (no PREROUTING, no KUBE-SEP chains).
const GREP_SVC = `-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SVC-TCOU7JCQXEZGVUNU ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-MARK-MASQ
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-YIL6JZP7A3QYXJU2
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.1.2:53" -j KUBE-SEP-Z6M7ZHWCTBNMPLD7
`;
const SEPS = `-A KUBE-SEP-YIL6JZP7A3QYXJU2 -s 10.244.0.2/32 -m comment --comment "kube-system/kube-dns:dns" -j KUBE-MARK-MASQ
-A KUBE-SEP-YIL6JZP7A3QYXJU2 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.2:53
-A KUBE-SEP-Z6M7ZHWCTBNMPLD7 -s 10.244.1.2/32 -m comment --comment "kube-system/kube-dns:dns" -j KUBE-MARK-MASQ
-A KUBE-SEP-Z6M7ZHWCTBNMPLD7 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.1.2:53
`;

describe('a grep of KUBE-SERVICES and one Service chain, without the PREROUTING hook', () => {
  it('starts at KUBE-SERVICES (a stated assumption); endpoint chains cut out of the paste are UNKNOWN, not "passes on unchanged"', async () => {
    const { t, text } = await traceOf('grep-svc.txt', GREP_SVC, '10.96.0.10:53/udp');
    expect(t.assumptions).toContainEqual({ code: 'entry-assumed', dialect: 'iptables', table: 'nat', start: 'KUBE-SERVICES', startKind: 'chain', hook: 'PREROUTING' });
    expect(text).toBe(`kube-system/kube-dns:dns  10.96.0.10:53/udp
  verdict  UNKNOWN 100%
  packet   pod 10.244.0.10:40000 → 10.96.0.10:53/udp

    50%  UNKNOWN: chain KUBE-SEP-YIL6JZP7A3QYXJU2 is not in the evidence: what happens after this jump is unknown
    50%  UNKNOWN: chain KUBE-SEP-Z6M7ZHWCTBNMPLD7 is not in the evidence: what happens after this jump is unknown

  assume  a pod 10.244.0.10 (in the pod network 10.244.0.0/16 from kube-proxy's rules) sends the packet
  assume  source port 40000
  assume  the first packet of a NEW connection (conntrack state NEW)
  assume  no session-affinity entry exists for this source yet (-m recent --rcheck does not match)
  assume  the node's own addresses are unknown (no ip addr, no --node-ip): where a rule asks whether an address is the
          node's, each answer is a scenario
  assume  no ip route dump: where the packet goes after NAT is not shown
  assume  grep-svc.txt has no *table line: its rules are read as table nat, inferred from line 1: -j
          KUBE-SVC-TCOU7JCQXEZGVUNU
  assume  the evidence has nat/KUBE-SERVICES but no PREROUTING chain that reaches it (a fragment): the walk starts at
          KUBE-SERVICES

  road shared by every outcome (2)
    nat/KUBE-SERVICES:1  jump KUBE-SVC-TCOU7JCQXEZGVUNU
    … here each outcome takes its own steps (below)

    50%  UNKNOWN: chain KUBE-SEP-YIL6JZP7A3QYXJU2 is not in the evidence: what happens after this jump is unknown
    nat/KUBE-SVC-TCOU7JCQXEZGVUNU:3  jump KUBE-SEP-YIL6JZP7A3QYXJU2 (statistic: taken, 50%)
    nat/KUBE-SVC-TCOU7JCQXEZGVUNU:3
        chain KUBE-SEP-YIL6JZP7A3QYXJU2 is not in the evidence: what happens after this jump is unknown

    50%  UNKNOWN: chain KUBE-SEP-Z6M7ZHWCTBNMPLD7 is not in the evidence: what happens after this jump is unknown
    nat/KUBE-SVC-TCOU7JCQXEZGVUNU:3  statistic: not taken (50%)
    nat/KUBE-SVC-TCOU7JCQXEZGVUNU:4  jump KUBE-SEP-Z6M7ZHWCTBNMPLD7
    nat/KUBE-SVC-TCOU7JCQXEZGVUNU:4
        chain KUBE-SEP-Z6M7ZHWCTBNMPLD7 is not in the evidence: what happens after this jump is unknown
`);
    expect(t.outcomes.map((o) => [o.verdict, o.delivery, o.unknown])).toEqual([
      ['UNKNOWN', 'unknown', { code: 'chain-missing', chain: 'KUBE-SEP-YIL6JZP7A3QYXJU2', via: 'jump' }],
      ['UNKNOWN', 'unknown', { code: 'chain-missing', chain: 'KUBE-SEP-Z6M7ZHWCTBNMPLD7', via: 'jump' }],
    ]);
    expect(scenarioSums(t)).toEqual([1]);
  });

  it('with the endpoint chains pasted too, it DNATs 50/50; a source outside the pod network meets the missing KUBE-MARK-MASQ', async () => {
    const { t } = await traceOf('grep-svc-sep.txt', GREP_SVC + SEPS, '10.96.0.10:53/udp');
    expect(t.outcomes.map((o) => [o.verdict, o.destination, o.probability])).toEqual([
      ['DNAT', '10.244.0.2:53', 0.5],
      ['DNAT', '10.244.1.2:53', 0.5],
    ]);
    const ext = await traceOf('grep-svc-sep.txt', GREP_SVC + SEPS, '10.96.0.10:53/udp', 'external');
    expect(ext.t.outcomes.map((o) => [o.verdict, o.probability, o.unknown])).toEqual([['UNKNOWN', 1, { code: 'chain-missing', chain: 'KUBE-MARK-MASQ', via: 'jump' }]]);
  });

  it('a whole dump whose PREROUTING lacks the jump is not a fragment: no assumption, the packet passes on', async () => {
    const { t } = await traceOf('no-hook.txt', `*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]\n:KUBE-MARK-MASQ - [0:0]\n:KUBE-SEP-YIL6JZP7A3QYXJU2 - [0:0]\n:KUBE-SEP-Z6M7ZHWCTBNMPLD7 - [0:0]\n${GREP_SVC}${SEPS}COMMIT\n`, '10.96.0.10:53/udp');
    expect(t.assumptions.some((a) => a.code === 'entry-assumed')).toBe(false);
    expect(t.outcomes.map((o) => [o.verdict, o.probability])).toEqual([['NONE', 1]]);
  });
});

// samples/nftables-mode-node's service-ips map and the kube-dns chains, without nat-prerouting or the services chain.
const NFT_MAP = `table ip kube-proxy {
	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		elements = { 10.96.0.10 . tcp . 53 : goto service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp,
			     10.96.0.10 . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns }
	}

	chain endpoint-2GKX576Q-kube-system/kube-dns/udp/dns__10.244.0.2/53 {
		ip saddr 10.244.0.2 jump mark-for-masquerade
		meta l4proto udp dnat to 10.244.0.2:53
	}

	chain endpoint-TF6S6XX7-kube-system/kube-dns/udp/dns__10.244.1.2/53 {
		ip saddr 10.244.1.2 jump mark-for-masquerade
		meta l4proto udp dnat to 10.244.1.2:53
	}

	chain service-FY5PMXPG-kube-system/kube-dns/udp/dns {
		ip daddr 10.96.0.10 udp dport 53 ip saddr != 10.244.0.0/16 jump mark-for-masquerade
		numgen random mod 2 vmap { 0 : goto endpoint-2GKX576Q-kube-system/kube-dns/udp/dns__10.244.0.2/53, 1 : goto endpoint-TF6S6XX7-kube-system/kube-dns/udp/dns__10.244.1.2/53 }
	}
}
`;

describe('an nft service-ips map without its base chain', () => {
  it("starts with kube-proxy's lookup in the map (a stated assumption) and follows the numgen shares", async () => {
    const { t, text } = await traceOf('nft-map.nft', NFT_MAP, '10.96.0.10:53/udp');
    expect(t.assumptions).toContainEqual({ code: 'entry-assumed', dialect: 'nft', table: 'ip kube-proxy', start: 'service-ips', startKind: 'map', hook: 'PREROUTING' });
    expect(text).toBe(`kube-system/kube-dns:dns  10.96.0.10:53/udp
  verdict  DNAT 100% to 2 endpoints; no masquerade
  packet   pod 10.244.0.10:40000 → 10.96.0.10:53/udp

    50%  DNAT → 10.244.0.2:53  route not known (no ip route dump)
    50%  DNAT → 10.244.1.2:53  route not known (no ip route dump)

  assume  a pod 10.244.0.10 (in the pod network 10.244.0.0/16 from kube-proxy's rules) sends the packet
  assume  source port 40000
  assume  the first packet of a NEW connection (conntrack state NEW)
  assume  no session-affinity entry exists for this source yet (-m recent --rcheck does not match)
  assume  the node's own addresses are unknown (no ip addr, no --node-ip): where a rule asks whether an address is the
          node's, each answer is a scenario
  assume  no ip route dump: where the packet goes after NAT is not shown
  assume  the evidence has ip kube-proxy's map service-ips but no base chain at the prerouting hook: the walk starts
          with kube-proxy's lookup in service-ips
  assume  forwarding is not in the dumps: assumed on (kube-proxy needs it)
  assume  rp_filter is not in the dumps: assumed off or loose

  road shared by every outcome (2)
    ip kube-proxy/services:2  goto service-FY5PMXPG-kube-system/kube-dns/udp/dns (@service-ips: 10.96.0.10 . udp . 53)
    … here each outcome takes its own steps (below)

    50%  DNAT → 10.244.0.2:53  route not known (no ip route dump)
    ip kube-proxy/service-FY5PMXPG-kube-system/kube-dns/udp/dns:20
        goto endpoint-2GKX576Q-kube-system/kube-dns/udp/dns__10.244.0.2/53 (numgen 0: 50%)
    ip kube-proxy/endpoint-2GKX576Q-kube-system/kube-dns/udp/dns__10.244.0.2/53:10  dnat to 10.244.0.2:53

    50%  DNAT → 10.244.1.2:53  route not known (no ip route dump)
    ip kube-proxy/service-FY5PMXPG-kube-system/kube-dns/udp/dns:20
        goto endpoint-TF6S6XX7-kube-system/kube-dns/udp/dns__10.244.1.2/53 (numgen 1: 50%)
    ip kube-proxy/endpoint-TF6S6XX7-kube-system/kube-dns/udp/dns__10.244.1.2/53:15  dnat to 10.244.1.2:53
`);
  });

  it("takes the pod source from kube-proxy's nft local detector (`ip saddr != 10.42.0.0/16`), not an assumed 10.244.0.0/16", async () => {
    // With a source outside 10.42.0.0/16 the packet would jump to mark-for-masquerade, which this paste lacks.
    const { t } = await traceOf('nft-map-42.nft', NFT_MAP.replace('10.244.0.0/16', '10.42.0.0/16'), '10.96.0.10:53/udp');
    expect(t.assumptions[0]).toEqual({ code: 'source', kind: 'pod', address: '10.42.0.10', podNetwork: '10.42.0.0/16' });
    expect(t.outcomes.map((o) => [o.verdict, o.probability, o.masquerade])).toEqual([
      ['DNAT', 0.5, false],
      ['DNAT', 0.5, false],
    ]);
  });

  it('a Service chain missing from the paste is UNKNOWN', async () => {
    const { t } = await traceOf('nft-map.nft', NFT_MAP, '10.96.0.10:53/tcp');
    expect(t.outcomes.map((o) => [o.verdict, o.probability, o.unknown])).toEqual([['UNKNOWN', 1, { code: 'chain-missing', chain: 'service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp', via: 'goto' }]]);
  });
});

describe('undecided matches fork the walk once per fact, as conditional scenarios', () => {
  // No routes: the input and output interfaces are not known.
  const IFACES = `*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -i docker0 -o docker0 -j ACCEPT
-A FORWARD -i cni0 -j ACCEPT
-A FORWARD -i eth0 -j DROP
-A FORWARD -o cni0 -j ACCEPT
*nat
:PREROUTING ACCEPT [0:0]
-A PREROUTING -d 10.96.0.5/32 -p tcp -m statistic --mode random --probability 0.5 -j DNAT --to-destination 10.244.1.5:80
-A PREROUTING -d 10.96.0.5/32 -p tcp -j DNAT --to-destination 10.244.1.6:80
COMMIT
`.replace('*nat', 'COMMIT\n*nat');

  it('every scenario sums to 1; each condition names its match and rule line; an interface, once known, decides the others', async () => {
    const { t, text } = await traceOf('ifaces.txt', IFACES, '10.96.0.5:80/tcp', 'external', ['192.168.0.1']);
    expect(scenarioSums(t)).toEqual(t.scenarios.map(() => 1));
    // arrives on docker0 / cni0 / eth0 / none of them; the -o questions met on the docker0 road end
    // the same either way (FORWARD accepts or falls to its ACCEPT policy), so those scenarios merge.
    expect(t.scenarios.map((s) => s.conditions.map((c) => `${c.holds ? '' : '!'}${c.subject}`))).toEqual([['docker0'], ['!docker0', 'cni0'], ['!docker0', '!cni0', 'eth0'], ['!docker0', '!cni0', '!eth0']]);
    // The statistic split is inside every scenario, not multiplied by it; two DROPs of the split are one end.
    expect(t.scenarios.map((s) => s.outcomes.map((i) => [t.outcomes[i].verdict, t.outcomes[i].probability]))).toEqual([
      [['DNAT', 0.5], ['DNAT', 0.5]],
      [['DNAT', 0.5], ['DNAT', 0.5]],
      [['DROP', 1]],
      [['DNAT', 0.5], ['DNAT', 0.5]],
    ]);
    for (const s of t.scenarios) {
      const arrivals = s.conditions.filter((c) => c.code === 'in-interface' && c.holds);
      expect(arrivals.length).toBeLessThanOrEqual(1);
    }
    expect(text).toContain('    if the packet arrives on docker0 (ifaces.txt:5 `-i docker0`)');
    expect(text).toContain('  and if the packet arrives on cni0 (ifaces.txt:6 `-i cni0`)');
    expect(text).toContain('  and if the packet does not arrive on cni0 (ifaces.txt:6 `-i cni0`)');
    expect(text).not.toMatch(/is not known/);
  });
});
