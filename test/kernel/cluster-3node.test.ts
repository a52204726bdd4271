/**
 * Issue 10, acceptance 1: a 3-node cluster built for real in network namespaces, collected with
 * `kpx collect` on each node, loaded as one cluster bundle; the cross-node trace names the right
 * nodes and interfaces, and the same packets sent for real reach the pods kpx named.
 *
 *   underlay ns: bridge br0 ── ul0 / ul1 / ul2 (veths) ── eth0 of each node
 *   node i ns (hostname k8s-…, ip_forward=1): eth0 172.18.0.(2+i)/16, cni0 10.244.i.1/24,
 *       host-gw routes 10.244.j.0/24 via 172.18.0.(2+j) dev eth0, kube-proxy rules (generated
 *       for this node: its own endpoints local) loaded with iptables-restore
 *   pods i ns: eth0 (veth, host end vethpods<i> on cni0) holding node i's endpoint addresses
 *   client ns: eth0 (veth, host end vethclient on node A's cni0) 10.244.A.250: the pod that sends
 *
 * Every namespace is deleted in `finally`, and the last test asserts none is left.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCluster, iptablesSave, type Cluster } from '../../src/generate/index.js';
import { nodeView } from '../../src/generate/cluster-bundle.js';
import { isClusterBundle, loadCluster } from '../../src/cluster/load.js';
import { traceAcross, type CrossTrace } from '../../src/cluster/trace.js';
import { compareNodes } from '../../src/cluster/compare.js';
import { renderCrossTraceText } from '../../src/cluster/render.js';
import type { ClusterSnapshot } from '../../src/cluster/types.js';
import { chalkInit } from '../../src/render/colors.js';
import { parseDestination, type Destination } from '../../src/trace/packet.js';
import { createNetns, deleteNetns, leftoverNetns, requireKernel, type Netns } from '../helpers/netns.js';
import { parseConntrack } from './harness/conntrack.js';

const kernel = requireKernel();
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'dist/src/cli/main.js');
const RESPONDER = join(ROOT, 'test/kernel/harness/responder.mjs');
const SENDER = join(ROOT, 'test/kernel/harness/sender.mjs');

interface Built {
  cluster: Cluster;
  nodes: Netns[];
  pods: Netns[];
  client: Netns;
  underlay: Netns;
  a: number;
  clientIp: string;
  dir: string;
  responders: ChildProcess[];
}

const nodeIp = (i: number) => `172.18.0.${2 + i}`;

function dest(text: string): Destination {
  const d = parseDestination(text);
  if (typeof d === 'string') throw new Error(d);
  return d;
}

/** Start the harness responder in a namespace; resolves once its sockets are bound. */
function startResponder(ns: Netns, addresses: string[], ports: number[]): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const p = spawn('ip', ['netns', 'exec', ns.name, process.execPath, RESPONDER, JSON.stringify({ addresses, ports })], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`responder in ${ns.name} did not start: ${out}`)), 10_000);
    p.stdout!.on('data', (d) => {
      out += String(d);
      if (out.includes('ready')) {
        clearTimeout(timer);
        resolve(p);
      }
    });
    p.on('error', reject);
  });
}

/** One TCP connection from the client namespace; the responder's answer names the pod reached. */
/** One TCP connection per source port, one after another, from one sender process. */
function sendAll(client: Netns, dst: string, dport: number, sports: number[]): { status: string; reply?: string }[] {
  const spec = { proto: 'tcp', family: 4, dst, dport, src: null, ports: sports, timeoutMs: 3000, sequential: true, clear: [] };
  const out = client.exec(process.execPath, [SENDER, JSON.stringify(spec)]);
  const { results } = JSON.parse(out.trim().split('\n').pop()!) as { results: { status: string; reply?: string }[] };
  expect(results).toHaveLength(sports.length);
  return results;
}

function send(client: Netns, dst: string, dport: number, sport: number): { status: string; reply?: string } {
  return sendAll(client, dst, dport, [sport])[0];
}

describe.runIf(kernel)('a 3-node cluster in network namespaces (issue 10, acceptance 1)', () => {
  let b: Built | undefined;
  let cluster: ClusterSnapshot;
  const created: Netns[] = [];

  const cleanup = () => {
    for (const p of b?.responders ?? []) if (p.pid && p.exitCode === null) p.kill('SIGKILL');
    while (created.length) deleteNetns(created.pop()!);
    if (b?.dir) rmSync(b.dir, { recursive: true, force: true });
  };

  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npx tsc -p tsconfig.json; npm test does it)`);
    try {
      const gen = generateCluster({ seed: 41, services: 2, nodes: 3, cni: 'flannel', shapes: ['single-endpoint', 'three-endpoints'] });
      const single = gen.services.find((s) => s.name === 'single-endpoint')!;
      const ownerIdx = gen.nodes.findIndex((n) => n.name === single.ports[0].endpoints[0].nodeName);
      // Node A: one that does NOT host the single endpoint (so the trace must cross nodes).
      const a = (ownerIdx + 1) % 3;
      const mk = (tag: string) => {
        const ns = createNetns(tag);
        created.push(ns);
        return ns;
      };
      const underlay = mk('ul');
      underlay.exec('ip', ['link', 'add', 'br0', 'type', 'bridge']);
      underlay.exec('ip', ['link', 'set', 'br0', 'up']);
      const nodes: Netns[] = [];
      const pods: Netns[] = [];
      for (let i = 0; i < 3; i++) {
        const n = mk(`n${i}`);
        nodes.push(n);
        n.exec('sysctl', ['-qw', 'net.ipv4.ip_forward=1', 'net.ipv4.conf.all.rp_filter=0', 'net.ipv4.conf.default.rp_filter=0']);
        n.exec('ip', ['link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', `ul${i}`, 'netns', underlay.name]);
        underlay.exec('ip', ['link', 'set', `ul${i}`, 'master', 'br0', 'up']);
        n.exec('ip', ['addr', 'add', `${nodeIp(i)}/16`, 'dev', 'eth0']);
        n.exec('ip', ['link', 'set', 'eth0', 'up']);
        n.exec('ip', ['link', 'add', 'cni0', 'type', 'bridge']);
        n.exec('ip', ['addr', 'add', `10.244.${i}.1/24`, 'dev', 'cni0']);
        n.exec('ip', ['link', 'set', 'cni0', 'up']);
        for (let j = 0; j < 3; j++) if (j !== i) n.exec('ip', ['route', 'add', `10.244.${j}.0/24`, 'via', nodeIp(j), 'dev', 'eth0']);
        // The pods of node i: every endpoint address the generator placed on it.
        const p = mk(`p${i}`);
        pods.push(p);
        n.exec('ip', ['link', 'add', `vethpods${i}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', p.name]);
        n.exec('ip', ['link', 'set', `vethpods${i}`, 'master', 'cni0', 'up']);
        const mine = [...new Set(gen.services.flatMap((s) => s.ports.flatMap((x) => x.endpoints.filter((e) => e.nodeName === gen.nodes[i].name).map((e) => e.ip))))];
        for (const ip of mine) p.exec('ip', ['addr', 'add', `${ip}/24`, 'dev', 'eth0']);
        p.exec('ip', ['link', 'set', 'eth0', 'up']);
        p.exec('ip', ['route', 'add', 'default', 'via', `10.244.${i}.1`]);
        // kube-proxy's rules for this node (its own endpoints marked local), loaded for real.
        const rules = iptablesSave(nodeView(gen, i), { cniRules: false });
        const r = n.run('iptables-restore', [], rules);
        if (r.status !== 0) throw new Error(`iptables-restore on ${gen.nodes[i].name}: ${r.stderr}`);
      }
      const client = mk('cl');
      const clientIp = `10.244.${a}.250`;
      nodes[a].exec('ip', ['link', 'add', 'vethclient', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', client.name]);
      nodes[a].exec('ip', ['link', 'set', 'vethclient', 'master', 'cni0', 'up']);
      client.exec('ip', ['addr', 'add', `${clientIp}/24`, 'dev', 'eth0']);
      client.exec('ip', ['link', 'set', 'eth0', 'up']);
      client.exec('ip', ['route', 'add', 'default', 'via', `10.244.${a}.1`]);

      // kpx collect on every node, each with its own hostname (a UTS namespace per run).
      const dir = mkdtempSync(join(tmpdir(), 'kpx-3node-'));
      b = { cluster: gen, nodes, pods, client, underlay, a, clientIp, dir, responders: [] };
      for (let i = 0; i < 3; i++) {
        const out = join(dir, `node${i}`);
        const r = spawnSync('ip', ['netns', 'exec', nodes[i].name, 'unshare', '--uts', 'sh', '-c', `hostname "$1" && exec "$2" "$3" collect -o "$4"`, 'sh', gen.nodes[i].name, process.execPath, BIN, out], { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`kpx collect on ${gen.nodes[i].name}: ${r.stderr}`);
      }
      // Responders: every pod address answers on its target port.
      for (let i = 0; i < 3; i++) {
        const mine = [...new Set(gen.services.flatMap((s) => s.ports.flatMap((x) => x.endpoints.filter((e) => e.nodeName === gen.nodes[i].name).map((e) => e.ip))))];
        if (mine.length) b.responders.push(await startResponder(pods[i], mine, [8080]));
      }
      cluster = await loadCluster(dir);
    } catch (e) {
      cleanup();
      throw e;
    }
  }, 180_000);

  afterAll(() => cleanup());

  it('the bundle is a cluster of three nodes named by their manifests', () => {
    expect(isClusterBundle(b!.dir)).toBe(true);
    expect(isClusterBundle(join(b!.dir, 'node0'))).toBe(false);
    expect(cluster.nodes.map((n) => n.name)).toEqual(['k8s-control-plane', 'k8s-worker', 'k8s-worker2']);
    const m = JSON.parse(readFileSync(join(b!.dir, 'node1', 'manifest.json'), 'utf8')) as { kind: string; host: string };
    expect(m).toMatchObject({ kind: 'kpx-bundle', host: 'k8s-worker' });
    for (const [i, n] of cluster.nodes.entries()) {
      expect(n.dir).toBe(join(b!.dir, `node${i}`));
      expect(n.snapshot.name).toBe(n.name);
      expect(n.snapshot.interfaces.find((x) => x.name === 'eth0')?.addresses.filter((a) => a.family === 4).map((a) => a.address)).toEqual([nodeIp(i)]);
      expect(n.snapshot.routes.filter((r) => r.via).map((r) => `${r.dstText} via ${r.via!.address}`).sort()).toEqual(
        [0, 1, 2].filter((j) => j !== i).map((j) => `10.244.${j}.0/24 via ${nodeIp(j)}`),
      );
    }
  });

  it('the nodes agree on every Service; each endpoint is local exactly on the node that holds it', async () => {
    const cmp = await compareNodes(cluster);
    expect(cmp.nodes).toHaveLength(3);
    const labels = cmp.services.map((s) => s.label).sort();
    expect(labels).toEqual(['shapes/single-endpoint:http', 'shapes/three-endpoints:http']);
    for (const s of cmp.services) {
      expect(s.differences, s.label).toEqual([]);
      expect(s.agreeing).toEqual(cmp.nodes);
      const truth = b!.cluster.services.find((x) => `shapes/${x.name}:http` === s.label)!.ports[0].endpoints;
      expect(s.endpoints.map((e) => e.endpoint).sort()).toEqual(truth.map((e) => `${e.ip}:8080`).sort());
      for (const e of s.endpoints) {
        const owner = truth.find((t) => `${t.ip}:8080` === e.endpoint)!.nodeName;
        expect({ e: e.endpoint, localOn: e.localOn, owner: e.owner }).toEqual({ e: e.endpoint, localOn: [owner], owner });
      }
    }
  });

  it('kpx traces the single-endpoint ClusterIP from node A across to the pod on node B, by real interfaces and dump lines', async () => {
    const gen = b!.cluster;
    const svc = gen.services.find((s) => s.name === 'single-endpoint')!;
    const ep = svc.ports[0].endpoints[0];
    const A = gen.nodes[b!.a].name;
    const B = ep.nodeName;
    expect(A).not.toBe(B);
    const t: CrossTrace = await traceAcross(cluster, dest(`${svc.clusterIP}:80`), 'tcp', { node: A, from: { ip: b!.clientIp } });
    const text = renderCrossTraceText(t, chalkInit(false), { cluster });
    if (process.env.KPX_SHOW) console.log(text);
    expect(t.paths, text).toHaveLength(1);
    const p = t.paths[0];
    expect(p.probability).toBe(1);
    expect(p.verdict).toBe('DNAT');
    expect(p.destination).toBe(`${ep.ip}:8080`);
    expect(p.nodes).toEqual([A, B]);
    expect(p.problems).toEqual([]);
    // Hop 1: A's rules DNAT (a KUBE-SEP line in A's iptables-save), A's route sends it to B's eth0 address.
    const h0 = p.hops[0];
    expect(h0.role).toBe('origin');
    expect(t.origin.trace.packet).toMatchObject({ src: b!.clientIp, inInterface: 'cni0' });
    const dnat = h0.outcome.steps.find((s) => s.code === 'dnat')!;
    expect(dnat.chain).toMatch(/^KUBE-SEP-/);
    expect(dnat.file).toBe(join(b!.dir, `node${b!.a}`, 'iptables-save.txt'));
    expect(readFileSync(dnat.file!, 'utf8').split('\n')[dnat.rule! - 1]).toContain(`--to-destination ${ep.ip}:8080`);
    expect(h0.outcome.route).toMatchObject({ dev: 'eth0', via: nodeIp(gen.nodes.findIndex((n) => n.name === B)) });
    expect(h0.next).toMatchObject({ node: B, how: 'gateway', gateway: nodeIp(gen.nodes.findIndex((n) => n.name === B)), dev: 'eth0' });
    const routeLine = readFileSync(h0.next!.file, 'utf8').split('\n')[h0.next!.line - 1];
    expect(routeLine).toMatch(new RegExp(`^10\\.244\\.\\d\\.0/24 via ${nodeIp(gen.nodes.findIndex((n) => n.name === B)).replace(/\./g, '\\.')} dev eth0`));
    // Hop 2: B receives the pod's own source (no masquerade from pod to pod) on eth0; no NAT; into cni0.
    const h1 = p.hops[1];
    expect(h1).toMatchObject({ node: B, role: 'destination', arriving: { src: b!.clientIp, dst: ep.ip, dport: 8080 } });
    expect(h1.trace!.packet.inInterface).toBe('eth0');
    expect(h1.outcome.verdict).toBe('NONE');
    expect(h1.outcome.route).toMatchObject({ dev: 'cni0', interfaceRole: 'bridge' });
    expect(p.end).toMatchObject({ kind: 'pod', node: B, interface: 'cni0', owner: { node: B, kind: 'pod-subnet', interface: 'cni0' } });
    expect(readFileSync(p.end.owner!.file, 'utf8').split('\n')[p.end.owner!.line - 1]).toMatch(/^10\.244\.\d\.0\/24 dev cni0 proto kernel scope link src 10\.244\.\d\.1/);
    expect(text).toContain(`${A} → ${B}`);
    expect(text).toContain(`[${B}] destination  arrives ${b!.clientIp}:40000 → ${ep.ip}:8080 in on eth0`);
  });

  it('the same packet sent for real reaches the pod kpx named (conntrack on A, the responder on B)', async () => {
    const gen = b!.cluster;
    const svc = gen.services.find((s) => s.name === 'single-endpoint')!;
    const t = await traceAcross(cluster, dest(`${svc.clusterIP}:80`), 'tcp', { node: gen.nodes[b!.a].name, from: { ip: b!.clientIp }, sport: 41000 });
    const p = t.paths[0];
    const r = send(b!.client, svc.clusterIP, 80, 41000);
    expect(r.status).toBe('reply');
    // The responder says which address answered and whom it saw: the pod kpx named, the client unmasqueraded.
    const [local, localPort, remote] = r.reply!.trim().split(' ');
    expect(`${local}:${localPort}`).toBe(p.destination);
    expect(remote).toBe(b!.clientIp);
    // The responder runs in the pods namespace of the node kpx named.
    const B = gen.nodes.findIndex((n) => n.name === p.end.node);
    expect(b!.pods[B].exec('ip', ['-o', '-4', 'addr', 'show', 'dev', 'eth0'])).toContain(` ${local}/24`);
    // conntrack on A: the VIP connection's reply comes from that pod; nothing was SNATed.
    const ct = parseConntrack(b!.nodes[b!.a].exec('conntrack', ['-L', '-p', 'tcp', '--orig-dst', svc.clusterIP]));
    const mine = ct.filter((e) => e.orig.sport === 41000);
    expect(mine).toHaveLength(1);
    expect(`${mine[0].reply.src}:${mine[0].reply.sport}`).toBe(p.destination);
    expect(mine[0].reply.dst).toBe(b!.clientIp);
    // B saw the connection as a plain forwarded one to the pod (no NAT there), as kpx said.
    const ctB = parseConntrack(b!.nodes[B].exec('conntrack', ['-L', '-p', 'tcp', '--orig-src', b!.clientIp]));
    expect(ctB.filter((e) => e.orig.sport === 41000).map((e) => `${e.orig.dst}:${e.orig.dport}>${e.reply.src}:${e.reply.sport}`)).toEqual([`${local}:8080>${local}:8080`]);
  });

  it('three endpoints spread over the nodes: every pod the kernel picks is one of kpx\'s paths, ending on its node', async () => {
    const gen = b!.cluster;
    const svc = gen.services.find((s) => s.name === 'three-endpoints')!;
    const A = gen.nodes[b!.a].name;
    const t = await traceAcross(cluster, dest(`${svc.clusterIP}:80`), 'tcp', { node: A, from: { ip: b!.clientIp } });
    expect(t.paths.map((p) => p.destination).sort()).toEqual(svc.ports[0].endpoints.map((e) => `${e.ip}:8080`).sort());
    for (const p of t.paths) {
      const owner = svc.ports[0].endpoints.find((e) => `${e.ip}:8080` === p.destination)!.nodeName;
      expect(p.probability).toBeCloseTo(1 / 3, 6);
      expect(p.end).toMatchObject({ kind: 'pod', node: owner, interface: 'cni0' });
      expect(p.nodes).toEqual(owner === A ? [A] : [A, owner]);
    }
    const seen = new Map<string, number>();
    for (const r of sendAll(b!.client, svc.clusterIP, 80, Array.from({ length: 24 }, (_, k) => 42000 + k))) {
      expect(r.status).toBe('reply');
      const [local, port] = r.reply!.trim().split(' ');
      seen.set(`${local}:${port}`, (seen.get(`${local}:${port}`) ?? 0) + 1);
    }
    for (const key of seen.keys()) expect(t.paths.map((p) => p.destination)).toContain(key);
    // 24 connections over three 1/3 endpoints: all three are hit (P(miss one) < 1e-4).
    expect(seen.size).toBe(3);
  }, 600_000); // a bound for a hang, not for speed: 24 connections one after another took over 120 s at load 45

  it('leaves no namespace behind', () => {
    cleanup();
    expect(leftoverNetns()).toEqual([]);
  });
});
