/**
 * kube-proxy's own restore payload (what it pipes into `iptables-restore --noflush`), written
 * by the generator: it must parse with no error and resolve to the Services the same node's
 * iptables-save resolves to (issue 14). The kernel accepts it: test/kernel/iptables-differential.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubeProxyOrder, kubeProxyRestorePayload } from '../../src/generate/index.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { extractIptablesSave } from '../../src/extract/iptables-save.js';
import { generatedNode, SCHEMA_FIELDS, type GeneratedNode } from '../helpers/generated.js';
import type { ServicePort } from '../../src/kube/types.js';

const nodes: GeneratedNode[] = [];
afterAll(() => nodes.forEach((n) => n.cleanup()));

/** What a Service is, for comparing two readings of one node (not where the evidence is). */
function essence(s: ServicePort) {
  const fields = Object.fromEntries(SCHEMA_FIELDS.map((f) => [f, s[f]]));
  return { ...fields, endpoints: s.endpoints.map((e) => `${e.ip}:${e.port} ${e.probability!.toFixed(9)} ${e.local}`).sort() };
}

describe('the generator writes kube-proxy restore payloads kpx reads like the dump', () => {
  it('writes rules in proxier.go order, with bare addresses, 10-digit probabilities and --or/--xor-mark', () => {
    expect(kubeProxyOrder('-A KUBE-SVC-X -d 172.30.0.43/32 ! -s 10.0.0.0/8 -p tcp -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ')).toBe(
      '-A KUBE-SVC-X -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ',
    );
    expect(kubeProxyOrder('-A KUBE-SERVICES ! -d 127.0.0.0/8 -m comment --comment "nodeports" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS')).toBe(
      '-A KUBE-SERVICES -m comment --comment "nodeports" -m addrtype --dst-type LOCAL ! -d 127.0.0.0/8 -j KUBE-NODEPORTS',
    );
    expect(kubeProxyOrder('-A KUBE-SVC-X -m comment --comment a -m statistic --mode random --probability 0.33333333349 -j KUBE-SEP-Y')).toBe(
      '-A KUBE-SVC-X -m comment --comment a -m statistic --mode random --probability 0.3333333333 -j KUBE-SEP-Y',
    );
    expect(kubeProxyOrder('-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000')).toBe('-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000');
    expect(kubeProxyOrder('-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0')).toBe('-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000');
  });

  for (const mode of ['iptables', 'ipvs'] as const) {
    for (const family of [4, 6] as const) {
      it(`${mode} mode, IPv${family}: no built-in chain, zero errors, the same Services as iptables-save`, async () => {
        const node = await generatedNode(mode, { seed: 11 + family, services: 40, family });
        nodes.push(node);
        const file = join(node.dir, 'iptables-save.txt');
        const payload = kubeProxyRestorePayload(readFileSync(file, 'utf8'));
        expect(payload).not.toMatch(/^:(PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) /m);
        expect(payload).not.toMatch(/^-A (PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) /m);
        expect(payload).toMatch(/^-A KUBE-\S+ -m comment --comment .* -j /m);
        const parsed = extractIptablesSave(payload, 'payload');
        expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
        expect(parsed.data.ruleCount).toBeGreaterThan(mode === 'iptables' ? 200 : 20);

        const before = (await resolveServices(node.snapshot)).services.map(essence);
        writeFileSync(file, payload);
        const after = (await resolveServices(await loadSnapshot([node.dir]))).services.map(essence);
        expect(before.length).toBeGreaterThan(30);
        expect(after).toEqual(before);
      });
    }
  }
});
