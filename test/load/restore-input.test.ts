/**
 * kube-proxy's restore payload (what it pipes to `iptables-restore --noflush`) is recognised as
 * restore input — a partial view — and resolves to the same Services as the node's dump.
 */
import { describe, expect, it } from 'vitest';
import { generateCluster, iptablesSave, ipvsIptablesSave, kubeProxyRestorePayload } from '../../src/generate/index.js';
import { parseInput } from '../../src/load/index.js';
import { assembleSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { KIND } from '../lint/helpers.js';

async function snapshot(files: Record<string, string>) {
  const parsed = [];
  for (const [path, text] of Object.entries(files)) parsed.push(await parseInput({ path, text, bytes: text.length }));
  return assembleSnapshot(parsed);
}

/** What `kpx services -o json` compares: identity, addresses, policies and endpoints. */
async function serviceView(files: Record<string, string>) {
  const r = await resolveServices(await snapshot(files));
  return r.services.map((s) => ({
    id: s.id,
    clusterIP: s.clusterIP,
    nodePort: s.nodePort,
    externalIPs: s.externalIPs,
    loadBalancerIPs: s.loadBalancerIPs,
    policies: [s.externalTrafficPolicy, s.internalTrafficPolicy],
    state: s.state,
    endpoints: s.endpoints.map((e) => `${e.ip}:${e.port} ${e.probability}`),
  }));
}

describe('kube-proxy restore payload as input', () => {
  for (const family of [4, 6] as const) {
    it(`is read as restore input and resolves like the node's dump (IPv${family})`, async () => {
      const cluster = generateCluster({ seed: 7, services: 30, family });
      const save = iptablesSave(cluster);
      const payload = kubeProxyRestorePayload(save);
      const s = await snapshot({ 'payload.txt': payload });
      expect(s.files[0]).toMatchObject({ format: 'iptables-save', variant: 'restore-input' });
      expect(s.files[0].diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      expect(s.rulesets[0].restoreInput).toBe(true);
      expect(s.rulesets[0].family).toBe(family);

      const fromSave = await serviceView({ 'save.txt': save });
      expect(fromSave.length).toBeGreaterThan(20);
      expect(await serviceView({ 'payload.txt': payload })).toEqual(fromSave);
    });
  }

  it('the IPVS-mode payload is restore input too', async () => {
    const payload = kubeProxyRestorePayload(ipvsIptablesSave(generateCluster({ seed: 7, services: 30 })));
    const s = await snapshot({ 'payload.txt': payload });
    expect(s.files[0]).toMatchObject({ format: 'iptables-save', variant: 'restore-input' });
    expect(s.files[0].diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('a dump stays a dump: with or without its header comments, and a fragment is not restore input', async () => {
    const s = await snapshot({
      'kind.txt': KIND,
      'bare.txt': KIND.split('\n').filter((l) => !l.startsWith('#')).join('\n'),
      'fragment.txt': '-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y\n-A KUBE-SVC-NPX46M4PTMTKRN6Y -j KUBE-SEP-X\n',
    });
    expect(s.files.map((f) => [f.path, f.format, f.variant])).toEqual([
      ['kind.txt', 'iptables-save', undefined],
      ['bare.txt', 'iptables-save', undefined],
      ['fragment.txt', 'iptables-save', undefined],
    ]);
    // The same dump twice (with and without its header comments) is one ruleset read once: the second is a view of the first.
    expect(s.rulesets.map((r) => [r.file, r.restoreInput])).toEqual([
      ['kind.txt', undefined],
      ['fragment.txt', undefined],
    ]);
    expect(s.secondViews?.map((v) => [v.kind, v.file, v.of, v.differingCount])).toEqual([['iptables-save', 'bare.txt', 'kind.txt', 0]]);
  });

  it('one table that declares a built-in chain makes the file a dump', async () => {
    const payload = kubeProxyRestorePayload(iptablesSave(generateCluster({ seed: 7, services: 5 })));
    const withBuiltin = payload.replace('*nat\n', '*nat\n:PREROUTING ACCEPT [0:0]\n');
    expect(withBuiltin).not.toBe(payload);
    const s = await snapshot({ 'a.txt': payload, 'b.txt': withBuiltin });
    expect(s.files.map((f) => f.variant)).toEqual(['restore-input', undefined]);
  });
});
