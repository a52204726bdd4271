/**
 * Endpoints and their evidence when SEP chains are read once per dump rather than per endpoint:
 * a SEP chain jumped to twice gives each endpoint its own evidence list (its own jump rule first),
 * is listed once in `chains`, and an unused SEP chain stays among the other chains.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveIptables } from '../../src/kube/resolve-iptables.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { problemText } from '../../src/render/problems.js';
const texts = (ps: readonly Parameters<typeof problemText>[0][]) => ps.map(problemText);

/** The kind sample, with a third (unreachable) jump of kube-dns:dns to its first SEP chain and an unused SEP chain. */
function editedKindSample(): string {
  const out: string[] = [];
  for (const line of readFileSync(new URL('../../samples/iptables-mode-kind/iptables-save.txt', import.meta.url), 'utf8').split('\n')) {
    out.push(line);
    if (line.startsWith(':KUBE-SEP-ZXMNUKOKXUTL2MK2')) out.push(':KUBE-SEP-AAAAAAAAAAAAAAAA - [0:0]');
    if (line.startsWith('-A KUBE-SEP-ZXMNUKOKXUTL2MK2 -p tcp')) out.push('-A KUBE-SEP-AAAAAAAAAAAAAAAA -p tcp -m tcp -j DNAT --to-destination 10.244.0.9:53');
    if (line.startsWith('-A KUBE-SVC-TCOU7JCQXEZGVUNU') && line.includes('KUBE-SEP-WXWGHGKZOCNYRYI7')) {
      out.push('-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.3:53" -j KUBE-SEP-6E7XQMQ4RAYOWTTM');
    }
  }
  return out.join('\n');
}

describe('SEP chains shared between endpoints', () => {
  it('give each endpoint its own evidence, and are owned once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kpx-sep-'));
    const text = editedKindSample();
    writeFileSync(join(dir, 'iptables-save.txt'), text);
    const res = resolveIptables(await loadSnapshot([dir]));
    rmSync(dir, { recursive: true });
    const lineOf = (start: string) => text.split('\n').findIndex((l) => l.startsWith(start)) + 1;
    const jumps = text.split('\n').flatMap((l, i) => (l.startsWith('-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment') ? [i + 1] : []));
    const sep6E7 = [lineOf('-A KUBE-SEP-6E7XQMQ4RAYOWTTM -s'), lineOf('-A KUBE-SEP-6E7XQMQ4RAYOWTTM -p')];
    const sepWXW = [lineOf('-A KUBE-SEP-WXWGHGKZOCNYRYI7 -s'), lineOf('-A KUBE-SEP-WXWGHGKZOCNYRYI7 -p')];

    const dns = res.services.find((s) => s.id === 'kube-system/kube-dns:dns/udp')!;
    expect(dns.endpoints.map((e) => [e.ip, e.port, e.probability, e.via, e.evidence.map((v) => v.line)])).toEqual([
      ['10.244.0.3', 53, 0.5, 'KUBE-SEP-6E7XQMQ4RAYOWTTM', [jumps[0], ...sep6E7]],
      ['10.244.0.4', 53, 0.5, 'KUBE-SEP-WXWGHGKZOCNYRYI7', [jumps[1], ...sepWXW]],
      ['10.244.0.3', 53, 0, 'KUBE-SEP-6E7XQMQ4RAYOWTTM', [jumps[2], ...sep6E7]],
    ]);
    expect(dns.endpoints[0].evidence).not.toBe(dns.endpoints[2].evidence);
    expect(dns.endpoints[2].evidence.map((v) => v.where)).toEqual(['nat/KUBE-SVC-TCOU7JCQXEZGVUNU', 'nat/KUBE-SEP-6E7XQMQ4RAYOWTTM', 'nat/KUBE-SEP-6E7XQMQ4RAYOWTTM']);
    expect(dns.chains).toEqual({ svc: 'KUBE-SVC-TCOU7JCQXEZGVUNU', sep0: 'KUBE-SEP-6E7XQMQ4RAYOWTTM', sep1: 'KUBE-SEP-WXWGHGKZOCNYRYI7' });
    expect(dns.evidence.map((v) => v.line)).toEqual([lineOf('-A KUBE-SERVICES -d 10.96.0.10/32 -p udp'), lineOf('-A KUBE-SVC-TCOU7JCQXEZGVUNU !'), ...jumps]);
    expect(texts(dns.problems)[0]).toBe('endpoint rule 3 of KUBE-SVC-TCOU7JCQXEZGVUNU can never be reached (an earlier rule takes every packet)');
    expect(dns.state).toBe('partial');
    expect(dns.hashVerified).toBe(true);

    const others = res.others.filter((o) => o.name.startsWith('KUBE-SEP-') || o.name.startsWith('KUBE-SVC-')).map((o) => `${o.table}/${o.name}`);
    expect(others).toEqual(['nat/KUBE-SEP-AAAAAAAAAAAAAAAA']);
  });
});
