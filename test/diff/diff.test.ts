/** `kpx diff`: generated clusters changed through the generator's model; kpx must report exactly those changes. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  generateCluster,
  groundTruth,
  sortEndpoints,
  writeBundle,
  type Cluster,
  type Mode,
  type Service,
  type ServicePortRef,
  type TruthService,
} from '../../src/generate/index.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { diffSnapshots, ruleText, type SnapshotDiff } from '../../src/diff/index.js';
import { diffSequences } from '../../src/diff/sequence.js';
import { renderDiffText } from '../../src/render/diff/text.js';
import { chalkInit } from '../../src/render/colors.js';
import { diffAction } from '../../src/cli/commands/diff.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpx-diff-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Apply a change to a cluster model: services replaced by `edit`, sync order kept for the others. */
function changeCluster(c: Cluster, edit: (services: Service[]) => Service[]): Cluster {
  const services = edit([...c.services]);
  const byName = new Map(services.map((s) => [`${s.namespace}/${s.name}`, s]));
  const syncOrder: ServicePortRef[] = [];
  const seen = new Set<string>();
  for (const ref of c.syncOrder) {
    const s = byName.get(`${ref.service.namespace}/${ref.service.name}`);
    if (!s) continue;
    const i = ref.service.ports.indexOf(ref.port);
    const port = s.ports[i];
    if (!port) continue;
    syncOrder.push({ service: s, port });
    seen.add(`${s.namespace}/${s.name}/${i}`);
  }
  for (const s of services) s.ports.forEach((p, i) => !seen.has(`${s.namespace}/${s.name}/${i}`) && syncOrder.push({ service: s, port: p }));
  return { ...c, services, syncOrder, totalEndpoints: syncOrder.reduce((n, r) => n + r.port.endpoints.length, 0) };
}

const find = (xs: Service[], name: string) => {
  const i = xs.findIndex((s) => `${s.namespace}/${s.name}` === name);
  if (i < 0) throw new Error(`no ${name}`);
  return i;
};

function mutate(c: Cluster, flipToLocal = true): Cluster {
  const other = c.nodes.find((n) => n !== c.node)!;
  const pod = (host: number) => `${other.podCIDR.split('/')[0].replace(/\.0$/, '')}.${host}`;
  return changeCluster(c, (xs) => {
    // 1. A Service removed.
    xs.splice(find(xs, 'shapes/two-endpoints'), 1);
    // 2. A Service added.
    xs.push({
      namespace: 'web',
      name: 'added-svc',
      type: 'ClusterIP',
      clusterIP: '10.96.250.250',
      ports: [{ name: 'http', protocol: 'tcp', port: 80, targetPort: 8080, nodePort: null, endpoints: [pod(240), pod(241)].map((ip) => ({ ip, port: 8080, nodeName: other.name, local: false })) }],
      externalIPs: [],
      loadBalancerIPs: [],
      loadBalancerSourceRanges: [],
      externalTrafficPolicy: 'Cluster',
      internalTrafficPolicy: 'Cluster',
      sessionAffinity: null,
      healthCheckNodePort: null,
      shape: 'test',
    });
    // 3. An endpoint added, and one removed (from every port of a two-port Service).
    let i = find(xs, 'shapes/three-endpoints');
    xs[i] = { ...xs[i], ports: xs[i].ports.map((p) => ({ ...p, endpoints: sortEndpoints([...p.endpoints, { ip: pod(250), port: p.targetPort, nodeName: other.name, local: false }]) })) };
    i = find(xs, 'shapes/seven-endpoints');
    xs[i] = { ...xs[i], ports: xs[i].ports.map((p) => ({ ...p, endpoints: p.endpoints.filter((e) => e !== p.endpoints.find((x) => !x.local)) })) };
    // 4. externalTrafficPolicy flipped (Cluster → Local and Local → Cluster).
    i = find(xs, 'shapes/nodeport');
    if (flipToLocal) xs[i] = { ...xs[i], externalTrafficPolicy: 'Local' };
    i = find(xs, 'shapes/nodeport-local');
    xs[i] = { ...xs[i], externalTrafficPolicy: 'Cluster' };
    // 5. Session affinity dropped.
    i = find(xs, 'shapes/affinity');
    xs[i] = { ...xs[i], sessionAffinity: null };
    return xs;
  });
}

/** The expected Service-level diff, computed from ground truth alone. */
const byName = (s: TruthService) => `${s.namespace}/${s.name}${s.portName ? ':' + s.portName : ''}/${s.protocol}`;
/** IPVS dumps carry no Service names: kpx keys those Service ports by VIP:port/proto. */
const byVip = (s: TruthService) => `${s.clusterIP}:${s.port}/${s.protocol}`;

function truthDiff(a: TruthService[], b: TruthService[], key = byName) {
  const A = new Map(a.map((s) => [key(s), s]));
  const B = new Map(b.map((s) => [key(s), s]));
  const fields = ['port', 'clusterIP', 'nodePort', 'externalIPs', 'loadBalancerIPs', 'loadBalancerSourceRanges', 'externalTrafficPolicy', 'internalTrafficPolicy', 'sessionAffinity', 'state'] as const;
  const ep = (s: TruthService) => s.endpoints.map((e) => `${e.ip.includes(':') ? `[${e.ip}]` : e.ip}:${e.port}`);
  const changed: Record<string, { fields: string[]; added: string[]; removed: string[] }> = {};
  for (const [k, s] of A) {
    const t = B.get(k);
    if (!t) continue;
    const f = fields.filter((x) => JSON.stringify(s[x]) !== JSON.stringify(t[x]));
    const added = ep(t).filter((e) => !ep(s).includes(e));
    const removed = ep(s).filter((e) => !ep(t).includes(e));
    if (f.length || added.length || removed.length) changed[k] = { fields: [...f], added, removed };
  }
  return {
    added: [...B.keys()].filter((k) => !A.has(k)).sort(),
    removed: [...A.keys()].filter((k) => !B.has(k)).sort(),
    changed,
  };
}

function kpxShape(d: SnapshotDiff) {
  const changed: Record<string, { fields: string[]; added: string[]; removed: string[] }> = {};
  for (const c of d.services.changed) changed[c.key] = { fields: c.fields.map((f) => f.field), added: c.endpointsAdded.map((e) => e.address), removed: c.endpointsRemoved.map((e) => e.address) };
  return { added: d.services.added.map((s) => s.key), removed: d.services.removed.map((s) => s.key), changed };
}

async function diffOf(mode: Mode, before: Cluster, after: Cluster, name: string) {
  const a = join(tmp, `${name}-old`);
  const b = join(tmp, `${name}-new`);
  writeBundle(before, mode, a);
  writeBundle(after, mode, b);
  for (const dir of [a, b]) for (const f of ['truth.json', 'ipset-save.txt', 'nft-script.nft']) rmSync(join(dir, f), { force: true });
  const sa = await loadSnapshot([a], { name: 'old' });
  const sb = await loadSnapshot([b], { name: 'new' });
  return { d: diffSnapshots(sa, await resolveServices(sa), sb, await resolveServices(sb)), a, b };
}

describe('diffSequences', () => {
  it('finds minimal order-aware edits', () => {
    const ops = diffSequences(['a', 'b', 'c', 'd'], ['a', 'c', 'x', 'd', 'b']);
    expect(ops.filter((o) => o.op === '-').map((o) => o.a)).toEqual([1]);
    expect(ops.filter((o) => o.op === '+').map((o) => o.b)).toEqual([2, 4]);
    expect(ops.filter((o) => o.op === '=').length).toBe(3);
  });
  it('falls back to a multiset comparison beyond the edit limit', () => {
    const a = Array.from({ length: 50 }, (_, i) => `r${i}`);
    const b = [...a].reverse();
    const ops = diffSequences(a, b, 3);
    expect(ops.filter((o) => o.op !== '=')).toEqual([]);
  });
  it('strips counters from rule texts', () => {
    expect(ruleText('[12:3400] -A KUBE-SERVICES   -j ACCEPT')).toBe('-A KUBE-SERVICES -j ACCEPT');
    expect(ruleText('ip daddr 10.0.0.1 counter packets 5 bytes 300 accept')).toBe('ip daddr 10.0.0.1 counter accept');
  });
});

describe('kpx diff on generated clusters', () => {
  const before = generateCluster({ seed: 11, services: 30 });
  const after = mutate(before);
  const expected = truthDiff(groundTruth(before).services, groundTruth(after).services);

  it('the change itself is what the test says (sanity of the fixture)', () => {
    expect(expected.added).toEqual(['web/added-svc:http/tcp']);
    expect(expected.removed).toEqual(['shapes/two-endpoints:http/tcp']);
    expect(Object.keys(expected.changed).sort()).toEqual(
      ['shapes/affinity:http/tcp', 'shapes/nodeport-local:http/tcp', 'shapes/nodeport:http/tcp', 'shapes/seven-endpoints:grpc/tcp', 'shapes/seven-endpoints:http/tcp', 'shapes/three-endpoints:http/tcp'].sort(),
    );
  });

  for (const mode of ['iptables', 'ipvs'] as const) {
    it(`${mode} mode: reports exactly the Service-level changes of the truth, and explains every rule change`, async () => {
      // IPVS dumps cannot tie a NodePort without real servers (Local policy, no local endpoint)
      // to its ClusterIP: the resolver reports nodePort null there, so that flip is left out in IPVS mode.
      const changedAfter = mode === 'ipvs' ? mutate(before, false) : after;
      const { d } = await diffOf(mode, before, changedAfter, mode);
      const expected = truthDiff(groundTruth(before).services, groundTruth(changedAfter).services, mode === 'ipvs' ? byVip : byName);
      const key = (name: string) => byVip(groundTruth(mode === 'ipvs' ? before : before).services.find((s) => byName(s) === name)!);
      const nodeportKey = mode === 'ipvs' ? key('shapes/nodeport:http/tcp') : 'shapes/nodeport:http/tcp';
      const got = kpxShape(d);
      expect(got.added).toEqual(expected.added);
      expect(got.removed).toEqual(expected.removed);
      // kpx also compares `mode`; it did not change.
      expect(got.changed).toEqual(expected.changed);
      if (mode === 'iptables') expect(d.services.unchanged).toBe(groundTruth(before).services.length - 1 - Object.keys(expected.changed).length);
      else expect(d.services.unchanged).toBe(d.old.servicePorts - 1 - Object.keys(expected.changed).length);
      const policy = d.services.changed.find((c) => c.key === (mode === 'ipvs' ? key('shapes/nodeport-local:http/tcp') : nodeportKey))!;
      expect(policy.fields.find((f) => f.field === 'externalTrafficPolicy')).toEqual(
        mode === 'ipvs' ? { field: 'externalTrafficPolicy', old: 'Local', new: 'Cluster' } : { field: 'externalTrafficPolicy', old: 'Cluster', new: 'Local' },
      );
      expect(Object.keys(expected.changed).length).toBe(mode === 'ipvs' ? 5 : 6);
      // Every rule change belongs to one of those Services.
      expect(d.rules.unexplained).toEqual([]);
      expect(d.rules.explained.added + d.rules.explained.removed).toBeGreaterThan(10);
    });
  }

  it('identical snapshots give an empty diff', async () => {
    const { d } = await diffOf('iptables', before, before, 'same');
    expect(d.services.added.length + d.services.removed.length + d.services.changed.length).toBe(0);
    expect(d.rules.unexplained).toEqual([]);
    expect(d.rules.explained).toEqual({ added: 0, removed: 0, moved: 0 });
  });

  it('rule changes that no Service explains are listed per chain, with lines, and moves are told apart', async () => {
    const { a } = await diffOf('iptables', before, before, 'hand');
    const { readFileSync, writeFileSync, mkdirSync, cpSync } = await import('node:fs');
    const b = join(tmp, 'hand-edited');
    mkdirSync(b, { recursive: true });
    cpSync(a, b, { recursive: true });
    const file = join(b, 'iptables-save.txt');
    let text = readFileSync(file, 'utf8');
    text = text.replace('-A INPUT -j KUBE-FIREWALL\n', '-A INPUT -s 192.0.2.66/32 -j DROP\n-A INPUT -j KUBE-FIREWALL\n');
    // Swap the two first POSTROUTING rules of nat (a move, not an add/remove).
    const lines = text.split('\n');
    const post = lines.map((l, i) => (l.startsWith('-A POSTROUTING') ? i : -1)).filter((i) => i >= 0);
    expect(post.length).toBeGreaterThanOrEqual(2);
    [lines[post[0]], lines[post[1]]] = [lines[post[1]], lines[post[0]]];
    writeFileSync(file, lines.join('\n'));
    const sa = await loadSnapshot([a]);
    const sb = await loadSnapshot([b]);
    const d = diffSnapshots(sa, await resolveServices(sa), sb, await resolveServices(sb));
    expect(d.services.changed).toEqual([]);
    const input = d.rules.unexplained.find((u) => u.unit === 'iptables v4 filter/INPUT')!;
    expect(input.added.map((x) => x.text)).toEqual(['-A INPUT -s 192.0.2.66/32 -j DROP']);
    expect(input.added[0].line).toBeGreaterThan(0);
    const nat = d.rules.unexplained.find((u) => u.unit === 'iptables v4 nat/POSTROUTING')!;
    expect(nat.added).toEqual([]);
    expect(nat.removed).toEqual([]);
    expect(nat.moved.length).toBe(1);
    const text2 = renderDiffText(d, chalkInit(false));
    expect(text2).toContain('~ iptables v4 filter/INPUT');
    expect(text2).toContain('+ -A INPUT -s 192.0.2.66/32 -j DROP');
  });

  it('a new DROP aimed at an endpoint of a Service that also changed is not hidden among that Service\'s changes', async () => {
    const { a, b } = await diffOf('iptables', before, after, 'drop-endpoint');
    const { readFileSync, writeFileSync } = await import('node:fs');
    // An endpoint the changed Service keeps: its address is one of the tokens that explain rule changes.
    const kept = groundTruth(after).services.find((s) => s.name === 'seven-endpoints' && expected.changed[byName(s)])!.endpoints[0].ip;
    const file = join(b, 'iptables-save.txt');
    const text = readFileSync(file, 'utf8');
    const filter = text.indexOf('*filter\n');
    const decl = text.indexOf('\n:FORWARD ', filter) + 1;
    const at = text.indexOf('\n', decl) + 1;
    expect(filter).toBeGreaterThanOrEqual(0);
    writeFileSync(file, `${text.slice(0, at)}-A FORWARD -d ${kept}/32 -j DROP\n${text.slice(at)}`);
    const sa = await loadSnapshot([a]);
    const sb = await loadSnapshot([b]);
    const d = diffSnapshots(sa, await resolveServices(sa), sb, await resolveServices(sb));
    expect(d.services.changed.length).toBeGreaterThan(0);
    const forward = d.rules.unexplained.find((u) => u.unit === 'iptables v4 filter/FORWARD');
    expect(forward?.added.map((x) => x.text)).toEqual([`-A FORWARD -d ${kept}/32 -j DROP`]);
    // The Services' own rule changes are still explained, not listed.
    expect(d.rules.unexplained.filter((u) => u.unit.includes('KUBE-'))).toEqual([]);
  });

  it('the command prints text and JSON and exits 0', async () => {
    const { a, b } = await diffOf('iptables', before, after, 'cli');
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => (out.push(String(s)), true));
    try {
      expect(await diffAction(a, b, { output: 'text', color: false })).toBe(0);
      expect(await diffAction(a, b, { output: 'json' })).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(out[0]).toMatch(/^Services: 1 added, 1 removed, 6 changed/);
    expect(out[0]).toContain('+ web/added-svc:http/tcp  10.96.250.250:80  healthy, 2 endpoints (iptables)');
    expect(out[0]).toContain('    externalTrafficPolicy: Cluster → Local');
    const j = JSON.parse(out[1]) as SnapshotDiff;
    expect(j.services.added[0].key).toBe('web/added-svc:http/tcp');
    expect(j.rules.unexplained).toEqual([]);
  });
});
