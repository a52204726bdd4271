/**
 * `kpx redact` leaks nothing (issue 34, acceptance 2): a bundle with names, addresses, MACs,
 * hashes and host names planted in every format kpx reads (./planted.ts, constructed) is
 * redacted; no planted value is left anywhere in the copy, the same value has the same token in
 * every file, networks keep their own addresses, and kpx reads the copy the same way: every file
 * in the same format with the same counts, and the same Services, endpoints and shares.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { resolveNft } from '../../src/kube/resolve-nft.js';
import type { Resolution, ServicePort } from '../../src/kube/types.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { redactBundle, type SkippedFile } from '../../src/redact/bundle.js';
import type { Redactor } from '../../src/redact/index.js';
import { PLANTED, writePlantedBundle, type Planted } from './planted.js';

const KEY = 'planted-key';
let tmp = '';
let planted: Planted;
let out = '';
let redactor: Redactor;
const skipped: SkippedFile[] = [];

/** Every file under `dir`, hidden ones too. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

async function resolveAll(s: NodeSnapshot): Promise<Resolution> {
  const r = await resolveServices(s);
  if (r.services.some((x) => x.mode === 'nftables') || s.nft.length === 0) return r;
  const n = resolveNft(s);
  return { services: [...r.services, ...n.services], others: [...r.others, ...n.others], problems: [...r.problems, ...n.problems] };
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'kpx-planted-'));
  const root = join(tmp, 'bundle');
  mkdirSync(root);
  planted = writePlantedBundle(root);
  out = join(tmp, 'redacted');
  redactor = (await redactBundle([root], out, { key: KEY }, skipped)).redactor;
}, 120_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('a bundle with values planted in every format', () => {
  it('covers every format kpx reads (the planted bundle is read in each)', async () => {
    const formats = new Set<string>();
    for (const n of [...planted.nodes, planted.pastes]) for (const f of (await loadSnapshot([n])).files) formats.add(f.format);
    const { sniffers } = await import('../../src/load/registry.js');
    const every = sniffers.map((s) => s.id).sort();
    expect([...formats].filter((f) => every.includes(f as never)).sort()).toEqual(every);
  });

  it('leaves no planted value in any file of the copy', () => {
    const copied = files(out);
    expect(copied.length).toBeGreaterThan(30);
    // The chain hashes of the planted Service, as the generator wrote them.
    const ipt = readFileSync(join(planted.root, 'node-iptables', 'iptables-save.txt'), 'utf8');
    const hashes = [...ipt.matchAll(/KUBE-(?:SVC|SEP|EXT|FW)-([A-Z2-7]{16})[^\n]*payments-prod\/checkout-api/g)].map((m) => m[1]);
    expect(hashes.length).toBeGreaterThan(1);
    const values = [...planted.values, ...hashes];
    const leaks: string[] = [];
    for (const f of copied) {
      const text = readFileSync(f, 'utf8');
      for (const v of values) if (text.includes(v)) leaks.push(`${relative(out, f)}: ${v}`);
    }
    expect(leaks).toEqual([]);
  });

  it('copies no note, hidden file or link out of the bundle, and says why', () => {
    const names = files(out).map((f) => relative(out, f));
    for (const n of ['README', 'node-iptables/.iptables-save', 'node-iptables/outside-sysctl.txt']) expect(names).not.toContain(n);
    for (const n of ['README', '.iptables-save', 'outside-sysctl.txt', 'truth.json']) expect(skipped.map((s) => s.input.split('/').pop())).toContain(n);
    expect(skipped.find((s) => s.input.endsWith('outside-sysctl.txt'))!.why).toMatch(/outside the bundle/);
    // Deny by default: text tables whose columns kpx cannot yet tell apart are not copied, and say so.
    expect(names).toContain('pastes/iptables-L.txt');
    for (const n of ['pastes/kubectl-get-svc.txt', 'pastes/cilium-lb.txt']) expect(names).not.toContain(n);
    expect(skipped.find((s) => s.input.endsWith('kubectl-get-svc.txt'))!.why).toMatch(/kubectl's text tables .* not copied/);
    expect(skipped.find((s) => s.input.endsWith('cilium-lb.txt'))!.why).toMatch(/not kube-proxy's dataplane/);
  });

  it('gives the same value the same token in every file, and keeps networks with their own addresses', () => {
    const host = redactor.name('host', PLANTED.node);
    const ns = redactor.name('ns', PLANTED.namespace);
    const where = (token: string) => files(out).filter((f) => readFileSync(f, 'utf8').includes(token)).map((f) => relative(out, f));
    // The node's name is in the sysctl, uname, manifest, logs, config, API objects: one token everywhere.
    expect(where(host)).toEqual(expect.arrayContaining(['node-iptables/sysctl.txt', 'node-iptables/uname.txt', 'node-iptables/manifest.json', 'node-iptables/kube-proxy.log', 'node-iptables/kube-proxy-journal.log', 'node-iptables/kube-proxy-configmap.yaml', 'node-iptables/api-extra.json']));
    expect(where(ns)).toEqual(expect.arrayContaining(['node-iptables/iptables-save.txt', 'node-ipvs/ipset-save.txt', 'node-nftables/nft-ruleset.txt', 'node-nftables/nft-ruleset.json', 'node-iptables/api-extra.yaml', 'node-iptables/kube-proxy.log']));
    expect(where(redactor.name('netns', PLANTED.netns)).sort()).toEqual(['node-iptables/ip-link.txt', 'node-ipvs/ip-link.json']);
    // `10.244.0.0/24 via 10.244.0.0`: the route and its gateway in the same redacted network, the gateway its address.
    const route = readFileSync(join(out, 'node-iptables', 'ip-route-extra.txt'), 'utf8').split('\n')[0];
    const m = /^(\d+\.\d+\.\d+)\.0\/24 via (\d+\.\d+\.\d+)\.0 dev flannel\.1 onlink$/.exec(route);
    expect(m, route).not.toBeNull();
    expect(m![1]).toBe(m![2]);
    expect(m![1]).not.toBe('10.244.0');
    const json = JSON.parse(readFileSync(join(out, 'node-ipvs', 'ip-route.json'), 'utf8')) as { dst: string; gateway: string }[];
    expect(json[0].dst).toBe(`${json[0].gateway}/24`);
  });

  it('is read the same way: every file in its format with the same counts, the same Services, endpoints and shares', async () => {
    for (const node of planted.nodes) {
      const copy = join(out, relative(planted.root, node));
      expect(existsSync(copy)).toBe(true);
      const so = await loadSnapshot([node]);
      const sr = await loadSnapshot([copy]);
      const counts = (s: NodeSnapshot) =>
        s.files.filter((f) => f.format !== 'unknown').map((f) => `${relative(f.path.startsWith(out) ? copy : node, f.path)} ${f.format} ${JSON.stringify(f.counts)}`).sort();
      expect(counts(sr)).toEqual(counts(so));
      const ro = await resolveAll(so);
      const rr = await resolveAll(sr);
      expect(ro.services.length).toBeGreaterThan(10);
      const shape = (s: ServicePort, mapped: boolean) => {
        const ip = (x: string | null) => (x === null || !mapped ? x : redactor.ip(x));
        const name = (k: 'ns' | 'svc', x: string | null) => (x === null || !mapped ? x : redactor.name(k, x));
        return JSON.stringify({
          ns: name('ns', s.namespace),
          name: name('svc', s.name),
          port: s.port,
          protocol: s.protocol,
          mode: s.mode,
          clusterIP: ip(s.clusterIP),
          state: s.state,
          hashVerified: s.hashVerified,
          endpoints: s.endpoints.map((e) => `${ip(e.ip)}:${e.port} ${e.probability} ${e.local}`).sort(),
        });
      };
      expect(rr.services.map((s) => shape(s, false)).sort()).toEqual(ro.services.map((s) => shape(s, true)).sort());
    }
  });
});
