/**
 * `kpx redact`: the redacted bundle must read the same — same Services (with the mapped names and
 * addresses), states, endpoint counts and shares, hash verification, lint finding counts and
 * trace shapes — on generated bundles of every mode and on samples/iptables-mode-node.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { generateCluster, writeBundle, type Mode } from '../../src/generate/index.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { resolveNft } from '../../src/kube/resolve-nft.js';
import type { Resolution, ServicePort } from '../../src/kube/types.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { IpMapper, Redactor } from '../../src/redact/index.js';
import { redactBundle, redactFiles } from '../../src/redact/bundle.js';
import { redactAction } from '../../src/cli/commands/redact.js';
import { parseIp, formatIp, parseCidr, cidrContains } from '../../src/model/addr.js';
import { tracePacket } from '../../src/trace/trace.js';
import { parseDestination, type Destination } from '../../src/trace/packet.js';
import { lintSnapshot } from '../../src/lint/run.js';

const KEY = 'test-key-1';
const SAMPLE = new URL('../../samples/iptables-mode-node', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'kpx-redact-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function resolveAll(s: NodeSnapshot): Promise<Resolution> {
  const r = await resolveServices(s);
  if (r.services.some((x) => x.mode === 'nftables') || s.nft.length === 0) return r;
  const n = resolveNft(s);
  return { services: [...r.services, ...n.services], others: [...r.others, ...n.others], problems: [...r.problems, ...n.problems] };
}

/** A Service port as data, with names and addresses passed through `m` (identity for the redacted side). */
function shape(s: ServicePort, r: Redactor | undefined) {
  const ip = (x: string | null) => (x === null || !r ? x : r.ip(x));
  const name = (k: 'ns' | 'svc', x: string | null) => (x === null || !r ? x : r.name(k, x));
  const cidr = (x: string) => {
    if (!r) return x;
    const [a, l] = x.split('/');
    return r.ips.mapCidrText(a, Number(l)) ?? x;
  };
  return {
    namespace: name('ns', s.namespace),
    name: name('svc', s.name),
    portName: s.portName,
    protocol: s.protocol,
    port: s.port,
    family: s.family,
    mode: s.mode,
    clusterIP: ip(s.clusterIP),
    nodePort: s.nodePort,
    externalIPs: s.externalIPs.map((x) => ip(x)).sort(),
    loadBalancerIPs: s.loadBalancerIPs.map((x) => ip(x)).sort(),
    loadBalancerSourceRanges: s.loadBalancerSourceRanges.map(cidr).sort(),
    externalTrafficPolicy: s.externalTrafficPolicy,
    internalTrafficPolicy: s.internalTrafficPolicy,
    sessionAffinity: s.sessionAffinity,
    state: s.state,
    identifiedBy: s.identifiedBy,
    hashVerified: s.hashVerified,
    problems: s.problems.length,
    endpoints: s.endpoints.map((e) => ({ ip: ip(e.ip), port: e.port, probability: e.probability, local: e.local, weight: e.weight })),
  };
}

const sortShapes = <T>(xs: T[]) => xs.map((x) => JSON.stringify(x)).sort();

function traceShape(snapshot: NodeSnapshot, res: Resolution, dest: Destination, protocol: 'tcp' | 'udp' | 'sctp') {
  const t = tracePacket(snapshot, res, dest, protocol, { from: 'pod', assumptions: { established: false, affinityHit: false } });
  return t.outcomes.map((o) => ({
    probability: o.probability,
    verdict: o.verdict,
    delivery: o.delivery,
    masquerade: o.masquerade,
    route: o.route?.type ?? null,
    steps: o.steps.map((s) => `${s.table}`),
    destination: o.destination,
  }));
}

async function compareBundles(original: string[], redactedDir: string, opts: { traces: number; redactor: Redactor }) {
  const so = await loadSnapshot(original);
  const sr = await loadSnapshot([redactedDir]);
  const ro = await resolveAll(so);
  const rr = await resolveAll(sr);
  // The redactor that wrote the copy: it learned the bundle's networks (their addresses map to the mapped networks' addresses).
  const r = opts.redactor;
  expect(ro.services.length).toBeGreaterThan(0);
  // Services: the same, once names and addresses are mapped.
  expect(sortShapes(rr.services.map((s) => shape(s, undefined)))).toEqual(sortShapes(ro.services.map((s) => shape(s, r))));
  // The redacted side really is different.
  const named = ro.services.filter((s) => s.namespace && !['default', 'kube-system'].includes(s.namespace));
  for (const s of named) expect(JSON.stringify(rr.services)).not.toContain(`"${s.namespace}/${s.name}`);
  // Lint: the same finding counts per rule.
  const count = async (s: NodeSnapshot, res: Resolution) => {
    const l = await lintSnapshot(s, { resolution: res });
    const m: Record<string, number> = {};
    for (const f of l.findings) m[f.ruleId] = (m[f.ruleId] ?? 0) + 1;
    return m;
  };
  expect(await count(sr, rr)).toEqual(await count(so, ro));
  // Traces: the same shape for the first few Services with a cluster IP.
  const picks = ro.services.filter((s) => s.clusterIP !== null).slice(0, opts.traces);
  for (const s of picks) {
    const dOrig = parseDestination(`${s.family === 6 ? `[${s.clusterIP}]` : s.clusterIP}:${s.port}`) as Destination;
    const mapped = r.ip(s.clusterIP!);
    const dRed = parseDestination(`${s.family === 6 ? `[${mapped}]` : mapped}:${s.port}`) as Destination;
    const a = traceShape(so, ro, dOrig, s.protocol!).map((o) => ({ ...o, destination: mapDest(r, o.destination) }));
    const b = traceShape(sr, rr, dRed, s.protocol!);
    // Outcomes are listed in address order, which redaction changes: compare them as a set.
    const bySort = (xs: typeof a) => [...xs].sort((x, y) => (x.destination < y.destination ? -1 : x.destination > y.destination ? 1 : 0));
    expect(bySort(b)).toEqual(bySort(a));
    expect(a.length).toBeGreaterThan(0);
  }
  return { so, sr, ro, rr };
}

function mapDest(r: Redactor, d: string): string {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(d);
  if (!m) return d;
  const ip = r.ip(m[1]);
  return ip.includes(':') ? `[${ip}]:${m[2]}` : `${ip}:${m[2]}`;
}

describe('prefix-preserving address map', () => {
  const m = new IpMapper('k');
  it('keeps prefixes, classes and special addresses; is injective', () => {
    const a = parseIp('10.244.1.3')!;
    const b = parseIp('10.244.1.77')!;
    const c = parseIp('10.244.2.3')!;
    const ma = m.map(a);
    const mb = m.map(b);
    const mc = m.map(c);
    const common = (x: bigint, y: bigint) => 32 - (x ^ y).toString(2).padStart(32, '0').length + (x ^ y).toString(2).padStart(32, '0').indexOf('1') + 0;
    expect(common(ma.value, mb.value)).toBe(common(a.value, b.value));
    expect(common(ma.value, mc.value)).toBe(common(a.value, c.value));
    expect(formatIp(ma).startsWith('10.')).toBe(true);
    expect(formatIp(m.map(parseIp('172.18.0.2')!))).toMatch(/^172\.(1[6-9]|2\d|3[01])\./);
    for (const keep of ['127.0.0.1', '0.0.0.0', '255.255.255.255', '255.255.255.0', '169.254.169.254', '::1', '::', 'ff02::1']) expect(m.mapText(keep)).toBe(keep);
    expect(m.mapText('fe80::1')!.startsWith('fe80::')).toBe(true);
    expect(m.mapText('fd00:10:96::a')!).toMatch(/^f[cd]/);
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(formatIp(m.map({ family: 4, value: 0x0af40000n + BigInt(i) })));
    expect(seen.size).toBe(2000);
    expect(new IpMapper('k').mapText('10.96.0.10')).toBe(m.mapText('10.96.0.10'));
    expect(new IpMapper('other').mapText('10.96.0.10')).not.toBe(m.mapText('10.96.0.10'));
  });
  it('maps networks to networks that contain the mapped addresses', () => {
    const net = m.mapCidrText('10.244.1.0', 24)!;
    expect(net).toMatch(/\.0\/24$/);
    expect(cidrContains(parseCidr(net)!, m.map(parseIp('10.244.1.200')!))).toBe(true);
    expect(m.mapCidrText('10.244.1.1', 24)).toBe(`${m.mapText('10.244.1.1')}/24`);
  });
});

describe('text rewriting', () => {
  const r = new Redactor({ key: KEY, hostnames: ['prod-node-7.corp.example'] });
  it('rewrites comments, chains, addresses, MACs and host names, keeping syntax', () => {
    const line = '-A KUBE-SERVICES -d 10.96.5.7/32 -p tcp -m comment --comment "payments/api:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-ABCDEFGHIJKLMNOP';
    const out = r.text(line);
    expect(out).toMatch(/^-A KUBE-SERVICES -d 10\.\d+\.\d+\.\d+\/32 -p tcp -m comment --comment "ns-[a-z2-7]{8}\/svc-[a-z2-7]{8}:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-[A-Z2-7]{16}$/);
    expect(out).not.toContain('payments');
    expect(r.text('    link/ether 02:42:ac:12:00:02 brd ff:ff:ff:ff:ff:ff')).toMatch(/link\/ether ([0-9a-f]{2}:){5}[0-9a-f]{2} brd ff:ff:ff:ff:ff:ff/);
    expect(r.text('    link/ether 02:42:ac:12:00:02 brd')).not.toContain('02:42:ac:12:00:02');
    expect(r.text('kernel.hostname = prod-node-7.corp.example')).toMatch(/^kernel\.hostname = host-[a-z2-7]{8}$/);
    expect(r.text('-A FOO -m comment --comment "ACME billing backdoor" -j ACCEPT')).toMatch(/--comment "redacted-[a-z2-7]{8}"/);
    expect(r.text('-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE')).toContain('"kubernetes service traffic requiring SNAT"');
    expect(r.text('Thu Jan 15 12:00:00 2026 v1.8.9 [0:0] 30000:32767 0x4000/0x4000')).toBe('Thu Jan 15 12:00:00 2026 v1.8.9 [0:0] 30000:32767 0x4000/0x4000');
    expect(r.text('-A X --to-destination [fd00:10:244:1::5]:8080')).toMatch(/\[f[cd][0-9a-f:]+\]:8080/);
    expect(r.text('default/kubernetes:https')).toBe('default/kubernetes:https');
  });
  it('is deterministic for a key', () => {
    const a = new Redactor({ key: KEY }).text('-A X -s 10.1.2.3/32 -m comment --comment "a/b:c" -j KUBE-SEP-ABCDEFGHIJKLMNOP');
    const b = new Redactor({ key: KEY }).text('-A X -s 10.1.2.3/32 -m comment --comment "a/b:c" -j KUBE-SEP-ABCDEFGHIJKLMNOP');
    expect(a).toBe(b);
  });
});

describe('redacted bundles read the same', () => {
  for (const mode of ['iptables', 'ipvs', 'nftables'] as Mode[]) {
    it(`generated ${mode}-mode bundle (IPv4 and IPv6)`, async () => {
      for (const family of [4, 6] as const) {
        const cluster = generateCluster({ seed: 5, services: 40, family });
        const dir = join(tmp, `${mode}-${family}`);
        writeBundle(cluster, mode, dir);
        for (const f of ['truth.json', 'ipset-save.txt', 'nft-script.nft']) rmSync(join(dir, f), { force: true });
        const out = join(tmp, `${mode}-${family}-red`);
        const { redactor } = await redactBundle([dir], out, { key: KEY });
        const { ro } = await compareBundles([dir], out, { traces: 8, redactor });
        if (mode !== 'ipvs') expect(ro.services.filter((s) => s.hashVerified === true).length).toBeGreaterThan(10);
      }
    });
  }

  it('samples/iptables-mode-node, through the command', async () => {
    const out = join(tmp, 'sample-red');
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await redactAction([SAMPLE], { output: out, key: KEY })).toBe(0);
    } finally {
      err.mockRestore();
    }
    expect(readdirSync(out).sort()).toEqual(readdirSync(SAMPLE).sort());
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    expect(manifest.host).toMatch(/^host-[a-z2-7]{8}$/);
    // Same key, same output (and the redactor that wrote it, to map the original's values).
    const out2 = join(tmp, 'sample-red2');
    const { redactor } = await redactBundle([SAMPLE], out2, { key: KEY });
    const { ro } = await compareBundles([SAMPLE], out, { traces: 10, redactor });
    expect(ro.services.length).toBeGreaterThan(5);
    const text = readFileSync(join(out, 'iptables-save.txt'), 'utf8');
    for (const s of ro.services) if (s.namespace && !['default', 'kube-system'].includes(s.namespace)) expect(text).not.toContain(`${s.namespace}/${s.name}`);
    expect(readFileSync(join(out2, 'iptables-save.txt'), 'utf8')).toBe(text);
    expect(await redactFiles([SAMPLE], join(tmp, 'sample-red3'), { key: KEY })).toHaveLength(readdirSync(SAMPLE).length);
  });
});
