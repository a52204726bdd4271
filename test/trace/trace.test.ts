/**
 * kpx trace semantics on the seed kind sample (issue 5, acceptance 2) and on small hand-written
 * dumps for jump/goto/return, policies, marks and undecidable matches.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { parseDestination, type Destination } from '../../src/trace/packet.js';
import { protocolsFor, tracePacket, type SourceSpec } from '../../src/trace/trace.js';
import { assumptionText, conditionText, stepText } from '../../src/render/trace/index.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';

const KIND = new URL('../../samples/iptables-mode-kind/iptables-save.txt', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'kpx-trace-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function snapshotOf(text: string, nodeIps: string[] = []): Promise<NodeSnapshot> {
  const f = join(tmp, `dump-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(f, text);
  return loadSnapshot([f], { nodeIps });
}

async function trace(snap: NodeSnapshot, dest: string, from: SourceSpec = 'pod', extra: { established?: boolean; affinityHit?: boolean } = {}) {
  const d = parseDestination(dest) as Destination;
  const res = await resolveServices(snap);
  return protocolsFor(res, d, snap).map((p) =>
    tracePacket(snap, res, d, p, { from, assumptions: { established: Boolean(extra.established), affinityHit: Boolean(extra.affinityHit) } }),
  );
}

const summary = (t: Awaited<ReturnType<typeof trace>>[number]) => t.outcomes.map((o) => `${o.verdict} ${o.destination} ${o.probability}${o.masquerade ? ' masq' : ''}`).sort();

describe('the seed kind dump (issue 5 acceptance 2)', () => {
  it('10.96.0.10:53/udp from a pod: the two CoreDNS pods, 50/50, not masqueraded', async () => {
    const snap = await loadSnapshot([KIND], { nodeIps: ['172.18.0.2'] });
    const [t] = await trace(snap, '10.96.0.10:53/udp');
    expect(t.services).toEqual(['kube-system/kube-dns:dns']);
    expect(summary(t)).toEqual(['DNAT 10.244.0.3:53 0.5', 'DNAT 10.244.0.4:53 0.5']);
    const probs = t.outcomes.reduce((n, o) => n + o.probability, 0);
    expect(probs).toBeCloseTo(1, 10);
    expect(t.outcomes[0].steps.map((s) => s.rule)).toContain(98);
  });

  it('10.96.0.10:53/udp from outside the pod network: masqueraded (KUBE-MARK-MASQ → KUBE-POSTROUTING)', async () => {
    const snap = await loadSnapshot([KIND], { nodeIps: ['172.18.0.2'] });
    const [t] = await trace(snap, '10.96.0.10:53/udp', 'external');
    expect(summary(t)).toEqual(['DNAT 10.244.0.3:53 0.5 masq', 'DNAT 10.244.0.4:53 0.5 masq']);
    expect(t.outcomes[0].steps.some((s) => s.code === 'masquerade' && s.flags.includes('random-fully'))).toBe(true);
    expect(t.outcomes[0].steps.map(stepText)).toContainEqual(expect.stringMatching(/^MASQUERADE .*--random-fully/));
  });

  it('10.96.0.10:53 without a protocol traces both the UDP dns and the TCP dns-tcp ports', async () => {
    const snap = await loadSnapshot([KIND]);
    const traces = await trace(snap, '10.96.0.10:53');
    expect(traces.map((t) => [t.packet.protocol, t.services])).toEqual([
      ['udp', ['kube-system/kube-dns:dns']],
      ['tcp', ['kube-system/kube-dns:dns-tcp']],
    ]);
  });

  it('10.96.0.1:443 → 172.18.0.3:6443', async () => {
    const snap = await loadSnapshot([KIND], { nodeIps: ['172.18.0.2'] });
    const [t] = await trace(snap, '10.96.0.1:443/tcp');
    // The API server (172.18.0.3) is outside the pod network and not this node (172.18.0.2), so
    // kind-masq-agent's last rule masquerades the pod's packet: the kernel does the same.
    expect(summary(t)).toEqual(['DNAT 172.18.0.3:6443 1 masq']);
    expect(t.outcomes[0].steps.map((s) => s.chain)).toContain('KIND-MASQ-AGENT');
  });

  it("without the node's addresses, addrtype LOCAL is undecided: two scenarios, each naming the match and its line", async () => {
    const snap = await loadSnapshot([KIND]);
    const [t] = await trace(snap, '10.96.0.1:443/tcp');
    // kind-masq-agent's `-m addrtype ! --dst-type LOCAL` decides whether the pod's packet is masqueraded.
    expect(summary(t)).toEqual(['DNAT 172.18.0.3:6443 1', 'DNAT 172.18.0.3:6443 1 masq']);
    // Two conditional alternatives, each summing to 1 under its own condition (not 2 outcomes at 100%).
    expect(t.scenarios.map((s) => [s.outcomes.length, s.outcomes.reduce((n, i) => n + t.outcomes[i].probability, 0)])).toEqual([
      [1, 1],
      [1, 1],
    ]);
    const conds = t.scenarios.map((s) => s.conditions.map(conditionText));
    expect(conds).toEqual([
      [expect.stringMatching(/^if 172\.18\.0\.3 is one of this node's addresses \(.*iptables-save\.txt:\d+ `-m addrtype ! --dst-type LOCAL`\)$/)],
      [expect.stringMatching(/^if 172\.18\.0\.3 is not one of this node's addresses \(.*iptables-save\.txt:\d+ `-m addrtype ! --dst-type LOCAL`\)$/)],
    ]);
    // Not masqueraded exactly when the API server's address is the node's own.
    const masq = t.outcomes.find((o) => o.masquerade)!;
    expect(masq.conditions).toEqual([expect.objectContaining({ code: 'local-address', subject: '172.18.0.3', holds: false })]);
  });

  it('10.96.0.10:9999 → NONE: no rule claims it', async () => {
    const snap = await loadSnapshot([KIND], { nodeIps: ['172.18.0.2'] });
    const [t] = await trace(snap, '10.96.0.10:9999');
    // No DNAT: the packet goes on to 10.96.0.10:9999; kind-masq-agent masquerades pod traffic
    // to non-local destinations outside the pod network, which is reported, not counted as a claim.
    expect(summary(t)).toEqual(['NONE 10.96.0.10:9999 1 masq']);
    expect(t.services).toEqual([]);
  });

  it('from the node itself: the OUTPUT path, masqueraded (not from the pod network)', async () => {
    const snap = await loadSnapshot([KIND], { nodeIps: ['172.18.0.2'] });
    const [t] = await trace(snap, '10.96.0.1:443/tcp', 'node');
    expect(t.packet.local).toBe(true);
    expect(summary(t)).toEqual(['DNAT 172.18.0.3:6443 1 masq']);
    expect(t.outcomes[0].steps.find((s) => s.table === 'nat')).toMatchObject({ table: 'nat', chain: 'OUTPUT' });
  });

  it('hairpin: an endpoint reaching itself through its Service is masqueraded by its KUBE-SEP rule', async () => {
    const snap = await loadSnapshot([KIND], { nodeIps: ['172.18.0.2'] });
    const [t] = await trace(snap, '10.96.0.10:53/udp', { ip: '10.244.0.3' });
    const self = t.outcomes.find((o) => o.destination === '10.244.0.3:53')!;
    const other = t.outcomes.find((o) => o.destination === '10.244.0.4:53')!;
    expect(self.masquerade).toBe(true);
    expect(other.masquerade).toBe(false);
  });

  it('states every assumption it makes', async () => {
    const snap = await loadSnapshot([KIND]);
    const [t] = await trace(snap, '10.96.0.10:53/udp');
    const text = t.assumptions.map(assumptionText).join('\n');
    expect(text).toMatch(/pod 10\.244\.0\.10/);
    expect(text).toMatch(/NEW/);
    expect(text).toMatch(/node's own addresses are unknown/);
    expect(t.assumptions.map((a) => a.code)).toEqual(['source', 'source-port', 'connection', 'affinity', 'node-addresses-unknown', 'no-routes', 'switch-assumed', 'switch-assumed']);
    // No sysctl dump: the switches the packet meets on its way to a pod are named as assumed.
    expect(text).toMatch(/^forwarding is not in the dumps: assumed on \(kube-proxy needs it\)$/m);
    expect(text).toMatch(/^rp_filter is not in the dumps: assumed off or loose$/m);
  });
});

describe('kernel semantics on hand-written dumps', () => {
  // Hand-written: goto returns to the caller's caller; RETURN in a user chain; policy at the end.
  const GOTO = `*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:A - [0:0]
:B - [0:0]
-A FORWARD -j A
-A FORWARD -d 10.0.0.1/32 -j ACCEPT
-A A -g B
-A A -j DROP
-A B -p tcp -j RETURN
-A B -j REJECT
COMMIT
`;
  it('-g returns to the caller of the chain that jumped, -j to the next rule, and the built-in policy ends it', async () => {
    const snap = await snapshotOf(GOTO, ['192.168.0.1']);
    const [tcp] = await trace(snap, '10.0.0.1:80/tcp', 'external');
    // FORWARD → A → goto B → RETURN goes back to FORWARD (not to A's DROP) → ACCEPT.
    expect(summary(tcp)).toEqual(['ACCEPT 10.0.0.1:80 1']);
    const [udp] = await trace(snap, '10.0.0.1:80/udp', 'external');
    expect(summary(udp)).toEqual(['REJECT 10.0.0.1:80 1']);
    const [other] = await trace(snap, '10.0.0.2:80/tcp', 'external');
    expect(summary(other)).toEqual(['DROP 10.0.0.2:80 1']);
    expect(other.outcomes[0].steps.at(-1)).toMatchObject({ code: 'policy', policy: 'DROP', base: 'built-in', chain: 'FORWARD' });
    expect(stepText(other.outcomes[0].steps.at(-1)!)).toBe('end of built-in chain: policy DROP');
  });

  it('marks set earlier on the path decide later mark matches', async () => {
    const snap = await snapshotOf(`*mangle
:PREROUTING ACCEPT [0:0]
-A PREROUTING -p udp -j MARK --set-xmark 0x4000/0x4000
COMMIT
*filter
:FORWARD ACCEPT [0:0]
-A FORWARD -m mark --mark 0x4000/0x4000 -j DROP
COMMIT
`, ['192.168.0.1']);
    expect(summary((await trace(snap, '10.0.0.1:53/udp', 'external'))[0])).toEqual(['DROP 10.0.0.1:53 1']);
    expect(summary((await trace(snap, '10.0.0.1:53/tcp', 'external'))[0])).toEqual(['NONE 10.0.0.1:53 1']);
  });

  it('follows both outcomes of a match it cannot decide, labelled, never guessing', async () => {
    const snap = await snapshotOf(`*filter
:FORWARD ACCEPT [0:0]
-A FORWARD -m limit --limit 3/min -j DROP
COMMIT
`, ['192.168.0.1']);
    const [t] = await trace(snap, '10.0.0.1:80/tcp', 'external');
    expect(t.outcomes.map((o) => [o.verdict, o.probability, o.conditions.map(conditionText).join(' ')]).sort()).toEqual([
      ['DROP', 1, expect.stringMatching(/^if `-m limit .*` matches \(.*:3\)$/)],
      ['NONE', 1, expect.stringMatching(/^if `-m limit .*` does not match \(.*:3\)$/)],
    ]);
  });

  it('a statistic ladder of 3 gives each endpoint a third, summing to 1', async () => {
    const snap = await snapshotOf(`*nat
:PREROUTING ACCEPT [0:0]
-A PREROUTING -d 10.96.0.5/32 -p tcp -m statistic --mode random --probability 0.33333333349 -j DNAT --to-destination 10.244.0.1:80
-A PREROUTING -d 10.96.0.5/32 -p tcp -m statistic --mode random --probability 0.50000000000 -j DNAT --to-destination 10.244.0.2:80
-A PREROUTING -d 10.96.0.5/32 -p tcp -j DNAT --to-destination 10.244.0.3:80
COMMIT
`, ['192.168.0.1']);
    const [t] = await trace(snap, '10.96.0.5:80/tcp', 'external');
    expect(t.outcomes.map((o) => o.probability.toFixed(6))).toEqual(['0.333333', '0.333333', '0.333333']);
    expect(t.outcomes.reduce((n, o) => n + o.probability, 0)).toBeCloseTo(1, 9);
  });

  it('--established skips the nat table (conntrack reuses the first packet\'s NAT) and says so', async () => {
    const snap = await loadSnapshot([KIND], { nodeIps: ['172.18.0.2'] });
    const [t] = await trace(snap, '10.96.0.10:53/udp', 'pod', { established: true });
    expect(t.assumptions).toContainEqual({ code: 'connection', established: true });
    expect(t.assumptions.map(assumptionText).join(' ')).toMatch(/ESTABLISHED/);
    expect(t.outcomes.every((o) => !o.steps.some((s) => s.table === 'nat'))).toBe(true);
  });
});

describe('policy routing (ip rule) after DNAT', () => {
  it('routes with the table an ip rule picks for the packet, and says which rule', async () => {
    const dir = mkdtempSync(join(tmp, 'rules-'));
    const { readFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'iptables-save.txt'), readFileSync(KIND, 'utf8'));
    // Hand-written, in `ip route show table all` / `ip rule show` form: pod traffic uses table 100.
    writeFileSync(join(dir, 'ip-route.txt'), 'default via 172.18.0.1 dev eth0 \n10.244.0.0/24 dev cni0 proto kernel scope link src 10.244.0.1 \n172.18.0.0/16 dev eth0 proto kernel scope link src 172.18.0.2 \n10.244.0.0/16 via 172.18.0.9 dev eth0 table 100 \n');
    writeFileSync(join(dir, 'ip-rule.txt'), '0:\tfrom all lookup local\n100:\tfrom 10.244.0.0/16 lookup 100\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n');
    const snap = await loadSnapshot([dir], { nodeIps: ['172.18.0.2'] });
    expect(snap.files.map((f) => f.format).sort()).toEqual(['ip-route', 'ip-rule', 'iptables-save']);
    const [fromPod] = await trace(snap, '10.96.0.10:53/udp', { ip: '10.244.0.50' });
    expect(fromPod.outcomes.map((o) => [o.destination, o.route?.via, o.route?.policyRule?.startsWith('100:\tfrom 10.244.0.0/16 lookup 100')])).toEqual([
      ['10.244.0.3:53', '172.18.0.9', true],
      ['10.244.0.4:53', '172.18.0.9', true],
    ]);
    const [fromOutside] = await trace(snap, '10.96.0.10:53/udp', 'external');
    expect(fromOutside.outcomes.map((o) => [o.route?.dev, o.route?.policyRule])).toEqual([
      ['cni0', undefined],
      ['cni0', undefined],
    ]);
  });
});
