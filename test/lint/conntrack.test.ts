import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KIND, lintFiles, of } from './helpers.js';
import { CONN_TITLE, LIST_TITLE, VERSION_LINE, left } from '../fixtures/ipvsadm/printf.js';

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/conntrack/${name}`, import.meta.url), 'utf8');
/** The kind sample with kube-dns moved to the VIP of kubernetes#48370 (10.15.240.10), so that entries meet a Service. */
const KIND_48370 = KIND.split('10.96.0.10').join('10.15.240.10');
const ids = (r: Awaited<ReturnType<typeof lintFiles>>) => r.findings.filter((f) => f.ruleId.startsWith('conntrack')).map((f) => f.ruleId);

describe('conntrack lint rules on public samples', () => {
  it('kubernetes#48370, untranslated: the entry from before the endpoint came back is flagged as untranslated, not as stale', async () => {
    const r = await lintFiles({ 'iptables-save.txt': KIND_48370, 'conntrack.txt': fixture('k8s-48370-unreplied.txt') });
    expect(ids(r)).toEqual(['conntrack-unreplied-untranslated']);
    const [f] = of(r, 'conntrack-unreplied-untranslated');
    expect(f).toMatchObject({ file: 'conntrack.txt', line: 1, service: 'kube-system/kube-dns:dns' });
    expect(f.message).toContain('udp 10.12.0.14:43145 → 10.15.240.10:53');
    expect(f.message).toContain('skip the 2 endpoint(s)');
    expect(f.text).toContain('[UNREPLIED] src=10.15.240.10');
  });
  it('kubernetes#48370, translated to a pod that is not an endpoint now: stale (what kube-proxy deletes)', async () => {
    const r = await lintFiles({ 'iptables-save.txt': KIND_48370, 'conntrack.txt': fixture('k8s-48370-translated.txt') });
    expect(ids(r)).toEqual(['conntrack-stale-udp-endpoint']);
    const [f] = of(r, 'conntrack-stale-udp-endpoint');
    expect(f.message).toContain('is pinned to 10.12.0.11, which is not a serving endpoint now (10.244.0.3, 10.244.0.4)');
    expect(f.message).toContain('for 29s more');
  });
  it('entries to the current endpoints, other addresses, and TCP are left alone', async () => {
    const fine = fixture('k8s-48370-translated.txt').replace('src=10.12.0.11', 'src=10.244.0.4');
    const r = await lintFiles({ 'iptables-save.txt': KIND_48370, 'a.txt': fine, 'b.txt': fixture('k8s-91216-tcp-time-wait.txt'), 'c.txt': fixture('k8s-129617-udp-accounting.txt') });
    expect(ids(r)).toEqual([]);
  });
  it('without conntrack input the rules neither run nor ask for it', async () => {
    const r = await lintFiles({ 'iptables-save.txt': KIND });
    expect(r.skipped.filter((s) => s.ruleId.startsWith('conntrack'))).toEqual([]);
    expect(r.rules.filter((id) => id.startsWith('conntrack'))).toEqual([]);
  });
  it('per-CPU -S samples with zero insert_failed/drop give nothing; non-zero counters are named with their CPUs', async () => {
    const quiet = await lintFiles({ 's.txt': fixture('stats-rke2-3924.txt'), 'iptables-save.txt': KIND });
    expect(of(quiet, 'conntrack-insert-failed')).toEqual([]);
    const raced = fixture('stats-rke2-3924.txt').replace('cpu=3           found=0 invalid=137 insert=0 insert_failed=0 drop=0', 'cpu=3           found=0 invalid=137 insert=0 insert_failed=12 drop=12');
    const r = await lintFiles({ 's.txt': raced, 'iptables-save.txt': KIND });
    const fs = of(r, 'conntrack-insert-failed');
    // Findings come sorted by message at one line: drop, then insert_failed.
    expect(fs.map((f) => [f.line, f.message.split(':')[0]])).toEqual([
      [4, 'conntrack -S counts drop=12 on CPU 3'],
      [4, 'conntrack -S counts insert_failed=12 on CPU 3'],
    ]);
    expect(fs[0].message).toContain('most are likely insert races');
  });
});

describe('conntrack-table-full', () => {
  const sysctl = (max: number) => `net.netfilter.nf_conntrack_max = ${max}\n`;
  it('warns at 80%, errs at 95%, names where the count came from', async () => {
    // The count as `conntrack -S` prints it in its one-counter-per-line form (`entries N` first).
    const stats = (n: string) => `entries ${n.trim()}\nsearched 0\nfound 0\ninsert_failed 0\n`;
    const at = async (count: string, max: number) => of(await lintFiles({ 'iptables-save.txt': KIND, 'sysctl.txt': sysctl(max), 'count.txt': stats(count) }), 'conntrack-table-full');
    expect(await at('79\n', 100)).toEqual([]);
    const [w] = await at('80\n', 100);
    expect(w).toMatchObject({ severity: 'warning', file: 'count.txt', line: 1 });
    expect(w.message).toBe('the conntrack table is 80% full: 80 of nf_conntrack_max 100 entries (count from conntrack -S entries)');
    const [e] = await at('262144\n', 262144);
    expect(e.severity).toBe('error');
  });
  it('falls back to the listing as a lower bound', async () => {
    const [f] = of(await lintFiles({ 'iptables-save.txt': KIND, 'sysctl.txt': sysctl(5), 'ct.txt': fixture('k8s-91216-tcp-time-wait.txt') }), 'conntrack-table-full');
    expect(f.message).toContain('100% full: 5 of nf_conntrack_max 5 entries (count from the conntrack -L listing (a lower bound))');
  });
});

describe('conntrack-ipvs-stale-real-server (hand-made ipvsadm listings, printf formats of ipvsadm.c)', () => {
  const list = [VERSION_LINE, ...LIST_TITLE, 'UDP  10.96.0.10:53 rr', '  -> 10.244.0.3:53                Masq    1      0          3', '  -> 10.244.0.4:53                Masq    0      0          2', ''].join('\n');
  const conn = (dest: string) => `${left('UDP', 3)} ${left('04:51', 6)} ${left('UDP', 11)} ${left('10.244.1.7:41000', 18)} ${left('10.96.0.10:53', 18)} ${dest}`;
  it('names weight-0 and gone real servers with the sysctls that decide', async () => {
    const conns = [...CONN_TITLE, conn('10.244.0.3:53'), conn('10.244.0.4:53'), conn('10.244.0.9:53'), ''].join('\n');
    const r = await lintFiles({ 'ipvsadm-Ln.txt': list, 'ipvsadm-Lnc.txt': conns, 'sysctl.txt': 'net.ipv4.vs.conn_reuse_mode = 0\nnet.ipv4.vs.expire_nodest_conn = 0\n' });
    const fs = of(r, 'conntrack-ipvs-stale-real-server');
    expect(fs.map((f) => [f.file, f.line])).toEqual([
      ['ipvsadm-Lnc.txt', 4],
      ['ipvsadm-Lnc.txt', 5],
    ]);
    expect(fs[0].message).toContain('goes to real server 10.244.0.4:53 whose weight is 0');
    expect(fs[0].message).toContain('conn_reuse_mode=0: a new connection reusing this source port is sent to the same real server');
    expect(fs[1].message).toContain('10.244.0.9:53, which is no longer a real server');
    expect(fs[1].message).toContain('expire_nodest_conn=0: its packets are dropped for the 291s the entry has left');
  });
});
