/**
 * The kernel's switches judged by the kernel: each test builds a small node in throw-away
 * namespaces (an uplink to a client, a cni0 bridge with two pods, kube-proxy-shaped rules), sets
 * a switch one way, sends real connections, collects the node with `kpx collect` inside its
 * namespace, and checks that kpx's trace of that bundle says what happened (delivered, dropped,
 * where). Then the other way. Namespaces are deleted whatever happens.
 *
 *   client ns  eth0 198.18.0.2/24 (+198.51.100.7 for rp_filter)  ── veth ──  node ns eth0 198.18.0.1/24
 *   node ns    cni0 10.244.0.1/24, ports va, vb; eth1 (a veth to nowhere) 192.0.2.1/24 holds the way to 198.51.100.0/24
 *   pod A ns   eth0 10.244.0.2/24 (behind va)      pod B ns   eth0 10.244.0.3/24 (behind vb), responder on :80
 *
 * Services (hand-written kube-proxy-shaped rules, labelled: not a real node's): 10.96.0.10:80 and
 * NodePort 30080 → pod B; 10.96.0.11:80 → pod A (its own Service: hairpin).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createNetns, deleteNetns, leftoverNetns, requireKernel, type Netns } from '../helpers/netns.js';
import { BIN } from '../helpers/exec.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { parseDestination } from '../../src/trace/packet.js';
import { tracePacket } from '../../src/trace/trace.js';
import type { Trace, TraceOutcome } from '../../src/trace/types.js';
import type { SourceSpec } from '../../src/trace/source.js';

const kernel = requireKernel();
const HARNESS = join(dirname(fileURLToPath(import.meta.url)), 'harness');
const tmp = mkdtempSync(join(tmpdir(), 'kpx-switches-'));
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  // Every namespace this file made is gone, also after a failed test.
  expect(leftoverNetns().filter((n) => n.startsWith('kpxt-sw'))).toEqual([]);
});

const RULES = `*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-SVC-WEB - [0:0]
:KUBE-EXT-WEB - [0:0]
:KUBE-SEP-WEB - [0:0]
:KUBE-SVC-SELF - [0:0]
:KUBE-SEP-SELF - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-WEB
-A KUBE-SERVICES -d 10.96.0.11/32 -p tcp -m comment --comment "default/self:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-SELF
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-NODEPORTS -p tcp -m comment --comment "default/web:http" -m tcp --dport 30080 -j KUBE-EXT-WEB
-A KUBE-EXT-WEB -m comment --comment "masquerade traffic for default/web:http external destinations" -j KUBE-MARK-MASQ
-A KUBE-EXT-WEB -j KUBE-SVC-WEB
-A KUBE-SVC-WEB -d 10.96.0.10/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ
-A KUBE-SVC-WEB -m comment --comment "default/web:http -> 10.244.0.3:80" -j KUBE-SEP-WEB
-A KUBE-SEP-WEB -s 10.244.0.3/32 -m comment --comment "default/web:http" -j KUBE-MARK-MASQ
-A KUBE-SEP-WEB -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination 10.244.0.3:80
-A KUBE-SVC-SELF -m comment --comment "default/self:http -> 10.244.0.2:80" -j KUBE-SEP-SELF
-A KUBE-SEP-SELF -s 10.244.0.2/32 -m comment --comment "default/self:http" -j KUBE-MARK-MASQ
-A KUBE-SEP-SELF -p tcp -m comment --comment "default/self:http" -m tcp -j DNAT --to-destination 10.244.0.2:80
COMMIT
`;

interface Lab {
  readonly client: Netns;
  readonly node: Netns;
  readonly podA: Netns;
  readonly podB: Netns;
}

const children: ChildProcess[] = [];

function veth(a: Netns, aName: string, b: Netns, bName: string): void {
  a.exec('ip', ['link', 'add', aName, 'type', 'veth', 'peer', 'name', bName, 'netns', b.name]);
}

/** Start the harness responder in a namespace (TCP on every address, the given ports); resolves when it listens. */
function responder(ns: Netns, addresses: string[], ports: number[]): Promise<void> {
  const p = spawn('ip', ['netns', 'exec', ns.name, process.execPath, join(HARNESS, 'responder.mjs'), JSON.stringify({ addresses, ports })], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(p);
  return new Promise((resolve, reject) => {
    p.stdout!.on('data', (d: Buffer) => (String(d).startsWith('ready') ? resolve() : undefined));
    p.on('exit', (code) => reject(new Error(`responder exited ${code}`)));
  });
}

/** Build the lab; a failure half-way deletes what was built (the caller never got the lab to destroy). */
async function build(): Promise<Lab> {
  const made: Netns[] = [];
  const ns = (tag: string) => {
    const n = createNetns(tag);
    made.push(n);
    return n;
  };
  try {
    return await wire({ client: ns('swc'), node: ns('swn'), podA: ns('swa'), podB: ns('swb') });
  } catch (e) {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    made.forEach((n) => deleteNetns(n));
    throw e;
  }
}

async function wire(lab: Lab): Promise<Lab> {
  const { client, node, podA, podB } = lab;
  veth(node, 'eth0', client, 'eth0');
  node.exec('ip', ['addr', 'add', '198.18.0.1/24', 'dev', 'eth0']);
  client.exec('ip', ['addr', 'add', '198.18.0.2/24', 'dev', 'eth0']);
  client.exec('ip', ['addr', 'add', '198.51.100.7/32', 'dev', 'eth0']);
  // No dummy driver in every kernel: a veth whose peer stays in the node (eth1p) goes nowhere just as well.
  node.exec('ip', ['link', 'add', 'eth1', 'type', 'veth', 'peer', 'name', 'eth1p']);
  node.exec('ip', ['addr', 'add', '192.0.2.1/24', 'dev', 'eth1']);
  node.exec('ip', ['link', 'add', 'cni0', 'type', 'bridge']);
  node.exec('ip', ['addr', 'add', '10.244.0.1/24', 'dev', 'cni0']);
  veth(node, 'va', podA, 'eth0');
  veth(node, 'vb', podB, 'eth0');
  for (const p of ['va', 'vb']) node.exec('ip', ['link', 'set', p, 'master', 'cni0']);
  for (const l of ['eth0', 'eth1', 'eth1p', 'cni0', 'va', 'vb']) node.exec('ip', ['link', 'set', l, 'up']);
  client.exec('ip', ['link', 'set', 'eth0', 'up']);
  for (const [ns, addr] of [
    [podA, '10.244.0.2/24'],
    [podB, '10.244.0.3/24'],
  ] as const) {
    ns.exec('ip', ['addr', 'add', addr, 'dev', 'eth0']);
    ns.exec('ip', ['link', 'set', 'eth0', 'up']);
    ns.exec('ip', ['route', 'add', 'default', 'via', '10.244.0.1']);
  }
  client.exec('ip', ['route', 'add', '10.96.0.0/12', 'via', '198.18.0.1']);
  client.exec('ip', ['route', 'add', '10.244.0.0/16', 'via', '198.18.0.1']);
  node.exec('ip', ['route', 'add', '198.51.100.0/24', 'dev', 'eth1']);
  node.exec('sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
  node.exec('iptables-restore', [], RULES);
  await responder(podB, ['10.244.0.3'], [80]);
  await responder(podA, ['10.244.0.2'], [80]);
  return lab;
}

function destroy(lab: Lab | undefined): void {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  if (!lab) return;
  for (const ns of [lab.client, lab.node, lab.podA, lab.podB]) deleteNetns(ns);
}

/** One TCP connection from `ns` (optionally from `src`); 'reply' when the responder answered. */
function connect(ns: Netns, dst: string, dport: number, src?: string): string {
  const spec = { proto: 'tcp', family: 4, dst, dport, src: src ?? null, ports: [41000 + Math.floor(Math.random() * 2000)], timeoutMs: 1500, sequential: true, clear: [] };
  const out = ns.exec(process.execPath, [join(HARNESS, 'sender.mjs'), JSON.stringify(spec)]);
  return (JSON.parse(out) as { results: { status: string }[] }).results[0].status;
}

/** SYNs to port 80 that reached a pod: counted by a rule in the pod's own namespace. */
function synCounter(ns: Netns): () => number {
  ns.exec('iptables', ['-I', 'INPUT', '-p', 'tcp', '--syn', '--dport', '80']);
  return () => Number(/^\s*(\d+)/m.exec(ns.exec('iptables', ['-nvxL', 'INPUT']).split('\n').slice(2).join('\n'))?.[1] ?? NaN);
}

let bundles = 0;
/** `kpx collect` inside the node namespace, then trace the bundle. */
async function collectAndTrace(lab: Lab, dst: string, from: SourceSpec, inInterface?: string): Promise<Trace> {
  const dir = join(tmp, `b${++bundles}`);
  lab.node.exec(process.execPath, [BIN, 'collect', '-o', dir]);
  const snap = await loadSnapshot([dir]);
  const res = await resolveServices(snap);
  const d = parseDestination(dst);
  if (typeof d === 'string') throw new Error(d);
  return tracePacket(snap, res, d, 'tcp', { from, ...(inInterface ? { inInterface } : {}), assumptions: { established: false, affinityHit: false } });
}

const only = (t: Trace): TraceOutcome => {
  expect(t.outcomes).toHaveLength(1);
  return t.outcomes[0];
};
const switchSteps = (o: TraceOutcome, name: string) => o.steps.filter((s) => s.code === 'kernel-switch' && s.switch === name);

describe.runIf(kernel)('kernel switches: kpx trace agrees with the kernel', () => {
  it('forwarding: on, an external client reaches the pod; off, the node drops it at the routing decision', async () => {
    let lab: Lab | undefined;
    try {
      lab = await build();
      expect(connect(lab.client, '10.96.0.10', 80)).toBe('reply');
      let o = only(await collectAndTrace(lab, '10.96.0.10:80', { ip: '198.18.0.2' }));
      expect([o.verdict, o.delivery, o.destination, o.fate]).toEqual(['DNAT', 'forward', '10.244.0.3:80', undefined]);
      expect(switchSteps(o, 'forwarding')).toMatchObject([{ effect: 'pass', iface: 'eth0', evidence: [{ key: 'net.ipv4.conf.eth0.forwarding', value: '1' }] }]);

      lab.node.exec('sysctl', ['-qw', 'net.ipv4.ip_forward=0']);
      const syn = synCounter(lab.podB);
      expect(connect(lab.client, '10.96.0.10', 80)).toBe('timeout');
      expect(syn()).toBe(0);
      o = only(await collectAndTrace(lab, '10.96.0.10:80', { ip: '198.18.0.2' }));
      expect([o.verdict, o.delivery]).toEqual(['DROP', 'stopped']);
      expect(o.fate).toMatchObject({ code: 'dropped-forwarding-off', iface: 'eth0', evidence: [{ key: 'net.ipv4.conf.eth0.forwarding', value: '0', file: expect.stringMatching(/sysctl\.txt$/), line: expect.any(Number) }] });
      // The DNAT happened first (PREROUTING), the drop after it, before FORWARD.
      const codes = o.steps.map((s) => s.code);
      expect(codes.indexOf('dnat')).toBeLessThan(codes.indexOf('kernel-switch'));
      expect(o.steps.some((s) => s.chain === 'FORWARD')).toBe(false);

      // Per interface: ip_forward stays 0 and eth0's own forwarding on lets the request through (IN_DEV_FORWARD
      // of the input device): the SYN reaches the pod, whose answer, coming in on cni0 (still off), is dropped.
      lab.node.exec('sysctl', ['-qw', 'net.ipv4.conf.eth0.forwarding=1']);
      const before = syn();
      expect(connect(lab.client, '10.96.0.10', 80)).toBe('timeout');
      expect(syn()).toBeGreaterThan(before);
      o = only(await collectAndTrace(lab, '10.96.0.10:80', { ip: '198.18.0.2' }));
      expect([o.verdict, o.fate]).toEqual(['DNAT', undefined]);
      expect(switchSteps(o, 'forwarding')).toMatchObject([{ effect: 'pass', iface: 'eth0', evidence: [{ key: 'net.ipv4.conf.eth0.forwarding', value: '1' }] }]);
      lab.node.exec('sysctl', ['-qw', 'net.ipv4.conf.cni0.forwarding=1']);
      expect(connect(lab.client, '10.96.0.10', 80)).toBe('reply');
    } finally {
      destroy(lab);
    }
  });

  it('rp_filter: strict drops a source whose route back leaves by another interface; loose and off let it through', async () => {
    let lab: Lab | undefined;
    try {
      lab = await build();
      const syn = synCounter(lab.podB);
      const seen: Record<string, { kernel: number; kpx: TraceOutcome }> = {};
      for (const mode of ['1', '2', '0']) {
        lab.node.exec('sysctl', ['-qw', `net.ipv4.conf.all.rp_filter=${mode}`, `net.ipv4.conf.eth0.rp_filter=${mode}`]);
        const before = syn();
        // The reply goes out of eth1: no answer either way. A SYN let through is counted at pod B; on a loaded
        // machine one can be late, so a mode that lets packets through gets up to three tries (strict gets them too:
        // none of its SYNs may arrive).
        for (let k = 0; k < 3 && syn() === before; k++) connect(lab.client, '10.96.0.10', 80, '198.51.100.7');
        // The packet comes in on eth0 though the route back leaves by eth1: said with --in-interface, as a user would.
        seen[mode] = { kernel: syn() - before, kpx: only(await collectAndTrace(lab, '10.96.0.10:80', { ip: '198.51.100.7' }, 'eth0')) };
      }
      expect(seen['1'].kernel).toBe(0);
      expect(seen['1'].kpx).toMatchObject({ verdict: 'DROP', fate: { code: 'dropped-rp-filter', value: 1, iface: 'eth0' } });
      for (const m of ['2', '0']) {
        expect(seen[m].kernel).toBeGreaterThan(0);
        expect(seen[m].kpx).toMatchObject({ verdict: 'DNAT', destination: '10.244.0.3:80' });
        expect(seen[m].kpx.fate).toBeUndefined();
      }
    } finally {
      destroy(lab);
    }
  });

  it('route_localnet: a NodePort on 127.0.0.1 answers with it on and is refused at rerouting with it off', async () => {
    let lab: Lab | undefined;
    try {
      lab = await build();
      lab.node.exec('sysctl', ['-qw', 'net.ipv4.conf.all.route_localnet=1']);
      expect(connect(lab.node, '127.0.0.1', 30080)).toBe('reply');
      let o = only(await collectAndTrace(lab, '127.0.0.1:30080', 'node'));
      expect(o).toMatchObject({ verdict: 'DNAT', destination: '10.244.0.3:80', masquerade: true });
      expect(switchSteps(o, 'route_localnet')).toMatchObject([{ effect: 'pass', chain: 'rerouting', iface: 'cni0' }]);

      lab.node.exec('sysctl', ['-qw', 'net.ipv4.conf.all.route_localnet=0']);
      expect(connect(lab.node, '127.0.0.1', 30080)).not.toBe('reply');
      o = only(await collectAndTrace(lab, '127.0.0.1:30080', 'node'));
      expect(o).toMatchObject({ verdict: 'DROP', fate: { code: 'dropped-route-localnet', iface: 'cni0' } });
    } finally {
      destroy(lab);
    }
  });

  it('br_netfilter: pod to a Service on the same bridge works with bridge-nf-call-iptables=1 and breaks with 0 (the reply skips reverse NAT)', async () => {
    let lab: Lab | undefined;
    try {
      lab = await build();
      lab.node.exec('sysctl', ['-qw', 'net.bridge.bridge-nf-call-iptables=1']);
      expect(connect(lab.podA, '10.96.0.10', 80)).toBe('reply');
      let o = only(await collectAndTrace(lab, '10.96.0.10:80', { ip: '10.244.0.2' }));
      expect(o).toMatchObject({ verdict: 'DNAT', destination: '10.244.0.3:80' });
      expect(o.fate).toBeUndefined();
      expect(switchSteps(o, 'bridge-nf-call-iptables')).toMatchObject([{ effect: 'pass', iface: 'cni0' }]);

      lab.node.exec('sysctl', ['-qw', 'net.bridge.bridge-nf-call-iptables=0']);
      expect(connect(lab.podA, '10.96.0.10', 80)).not.toBe('reply');
      o = only(await collectAndTrace(lab, '10.96.0.10:80', { ip: '10.244.0.2' }));
      expect(o).toMatchObject({ verdict: 'DNAT', destination: '10.244.0.3:80', fate: { code: 'reply-bypasses-nat', iface: 'cni0', evidence: [{ key: 'net.bridge.bridge-nf-call-iptables', value: '0' }] } });
    } finally {
      destroy(lab);
    }
  });

  it('hairpin: a pod reaching itself through its Service over br_netfilter needs hairpin on its bridge port', async () => {
    let lab: Lab | undefined;
    try {
      lab = await build();
      lab.node.exec('sysctl', ['-qw', 'net.bridge.bridge-nf-call-iptables=1']);
      for (const p of ['va', 'vb']) lab.node.exec('bridge', ['link', 'set', 'dev', p, 'hairpin', 'off']);
      expect(connect(lab.podA, '10.96.0.11', 80)).not.toBe('reply');
      let o = only(await collectAndTrace(lab, '10.96.0.11:80', { ip: '10.244.0.2' }));
      expect(o).toMatchObject({ verdict: 'DROP', fate: { code: 'dropped-hairpin-off', iface: 'cni0' } });

      for (const p of ['va', 'vb']) lab.node.exec('bridge', ['link', 'set', 'dev', p, 'hairpin', 'on']);
      expect(connect(lab.podA, '10.96.0.11', 80)).toBe('reply');
      o = only(await collectAndTrace(lab, '10.96.0.11:80', { ip: '10.244.0.2' }));
      expect(o).toMatchObject({ verdict: 'DNAT', destination: '10.244.0.2:80', masquerade: true });
      expect(switchSteps(o, 'hairpin')).toMatchObject([{ effect: 'pass' }]);
    } finally {
      destroy(lab);
    }
  });
});

describe.runIf(kernel)('MTU along the path', () => {
  it('a VXLAN tunnel with MTU 1500 on a 1500-byte uplink is flagged with the numbers; 1450 leaves room', async () => {
    let node: Netns | undefined;
    try {
      node = createNetns('swm');
      node.exec('ip', ['link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth0p']);
      node.exec('ip', ['link', 'set', 'eth0p', 'up']);
      node.exec('ip', ['link', 'set', 'eth0', 'mtu', '1500', 'up']);
      node.exec('ip', ['addr', 'add', '172.18.0.3/16', 'dev', 'eth0']);
      // As flannel creates it: `local` names the underlay by its address (with `dev eth0` the kernel itself caps the MTU at 1450).
      node.exec('ip', ['link', 'add', 'flannel.1', 'type', 'vxlan', 'id', '1', 'local', '172.18.0.3', 'dstport', '8472', 'nolearning']);
      node.exec('ip', ['link', 'set', 'flannel.1', 'mtu', '1500', 'up']);
      node.exec('ip', ['addr', 'add', '10.244.0.0/32', 'dev', 'flannel.1']);
      node.exec('ip', ['route', 'add', '10.244.1.0/24', 'via', '10.244.1.0', 'dev', 'flannel.1', 'onlink']);
      node.exec('sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
      node.exec('iptables-restore', [], RULES.replace(/10\.244\.0\.3/g, '10.244.1.5'));
      const trace = async () => {
        const dir = join(tmp, `m${++bundles}`);
        node!.exec(process.execPath, [BIN, 'collect', '-o', dir]);
        const snap = await loadSnapshot([dir]);
        const d = parseDestination('10.96.0.10:80');
        if (typeof d === 'string') throw new Error(d);
        return only(tracePacket(snap, await resolveServices(snap), d, 'tcp', { from: { ip: '198.18.0.2' }, assumptions: { established: false, affinityHit: false } }));
      };
      let o = await trace();
      let mtu = o.steps.filter((s) => s.code === 'mtu');
      expect(mtu).toMatchObject([{ largest: 1450, shortfall: { tunnel: 'flannel.1', kind: 'vxlan', tunnelMtu: 1500, overhead: 50, underlay: 'eth0', underlayMtu: 1500, excess: 50 } }]);

      node.exec('ip', ['link', 'set', 'flannel.1', 'mtu', '1450']);
      o = await trace();
      mtu = o.steps.filter((s) => s.code === 'mtu');
      expect(mtu).toHaveLength(1);
      expect(mtu[0]).toMatchObject({ largest: 1450 });
      expect(mtu[0]).not.toHaveProperty('shortfall');
    } finally {
      if (node) deleteNetns(node);
    }
  });
});
