/** Linking conntrack entries to Service front ends and endpoints, and the per-endpoint counts `services --service` prints. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KIND, snapshotOf } from '../lint/helpers.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { connectionsOf, frontEndIndex } from '../../src/kube/conntrack.js';
import { renderServiceDetail } from '../../src/render/services.js';
import { chalkInit } from '../../src/render/colors.js';

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/conntrack/${name}`, import.meta.url), 'utf8');
const KIND_48370 = KIND.split('10.96.0.10').join('10.15.240.10');

describe('conntrack entries linked to Services', () => {
  it('counts entries per current endpoint and those going elsewhere', async () => {
    const translated = fixture('k8s-48370-translated.txt');
    const text = [translated, translated.replace('sport=43145', 'sport=43146').replace('dport=43145', 'dport=43146').replace('src=10.12.0.11', 'src=10.244.0.4'), fixture('k8s-48370-unreplied.txt').replace(/43145/g, '43147')].join('');
    const snapshot = await snapshotOf({ 'iptables-save.txt': KIND_48370, 'conntrack.txt': text });
    const res = await resolveServices(snapshot);
    const dns = res.services.find((s) => s.name === 'kube-dns' && s.protocol === 'udp')!;
    const c = connectionsOf(snapshot.conntrack!.tables, dns, snapshot);
    expect(c).toEqual({ perEndpoint: new Map([['10.244.0.4:53', 1]]), elsewhere: 2, total: 3 });
    const idx = frontEndIndex(res.services, snapshot);
    const t = snapshot.conntrack!.tables[0];
    expect([0, 1, 2].map((i) => { const l = idx.link(t, i); return [l?.front.kind, l?.endpoint?.ip, l?.untranslated]; })).toEqual([
      ['cluster-ip', undefined, false],
      ['cluster-ip', '10.244.0.4', false],
      ['cluster-ip', undefined, true],
    ]);
    const out = renderServiceDetail(dns, chalkInit(false), c);
    expect(out).toContain('endpoints        2   (conntrack: 3 entries to this Service port)');
    expect(out).toMatch(/10\.244\.0\.3:53 .* 0 conns/);
    expect(out).toMatch(/10\.244\.0\.4:53 .* 1 conns/);
    expect(out).toContain('2 conntrack entries go to no current endpoint');
  });
});
