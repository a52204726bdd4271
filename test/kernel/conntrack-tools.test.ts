/**
 * The real conntrack tool (and the kernel's /proc/net/nf_conntrack) judge the grammar's syntax: in a
 * namespace this test creates, entries are inserted (`conntrack -I`) and made by real pings, then every
 * listing form kpx reads is produced by the tool and read back with no error and the same tuples. The
 * bounded `kpx collect` of the same table is checked too.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requireKernel, withNetns } from '../helpers/netns.js';
import { BIN } from '../helpers/exec.js';
import { extractConntrack, extractConntrackStats } from '../../src/extract/conntrack.js';
import { detectFormat } from '../../src/load/index.js';
import { loadSnapshot } from '../../src/load/snapshot.js';

const kernel = requireKernel();
const tmp = mkdtempSync(join(tmpdir(), 'kpx-ct-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Ns = { exec(cmd: string, args: readonly string[], input?: string): string };

function fill(ns: Ns, udp: number): void {
  ns.exec('sysctl', ['-qw', 'net.netfilter.nf_conntrack_timestamp=1']);
  ns.exec('ip', ['link', 'set', 'lo', 'up']);
  for (let i = 0; i < udp; i++) {
    ns.exec('conntrack', ['-I', '-p', 'udp', '-s', '10.0.0.1', '-d', '10.96.0.10', '--sport', String(20000 + i), '--dport', '53', '--reply-src', `10.244.0.${3 + (i % 2)}`, '--reply-dst', '10.0.0.1', '--reply-port-src', '53', '--reply-port-dst', String(20000 + i), '-t', '120', '-u', 'ASSURED']);
  }
  ns.exec('conntrack', ['-I', '-p', 'tcp', '-s', '10.0.0.1', '-d', '10.96.0.1', '--sport', '1001', '--dport', '443', '--reply-src', '172.18.0.2', '--reply-dst', '10.0.0.1', '--reply-port-src', '6443', '--reply-port-dst', '1001', '--state', 'ESTABLISHED', '-t', '300', '-u', 'ASSURED', '-m', '7']);
  ns.exec('conntrack', ['-I', '-p', 'sctp', '-s', '10.0.0.1', '-d', '10.96.0.5', '--sport', '3000', '--dport', '9000', '--reply-src', '10.244.0.9', '--reply-dst', '10.0.0.1', '--reply-port-src', '9000', '--reply-port-dst', '3000', '--state', 'CLOSED', '--orig-vtag', '1', '--reply-vtag', '2', '-t', '10']);
  ns.exec('conntrack', ['-I', '-s', '10.0.0.1', '-d', '10.0.0.2', '-p', 'icmp', '-t', '29', '--icmp-type', '8', '--icmp-code', '0', '--icmp-id', '1234']);
  ns.exec('conntrack', ['-I', '-p', 'udp', '-s', 'fd00::1', '-d', 'fd00:10:96::a', '--sport', '5000', '--dport', '53', '--reply-src', 'fd00:10:244::5', '--reply-dst', 'fd00::1', '--reply-port-src', '53', '--reply-port-dst', '5000', '-t', '100']);
}

const key = (e: { proto: string; orig: { src: string; dst: string; sport?: number; dport?: number }; reply: { src: string } }) => `${e.proto} ${e.orig.src}:${e.orig.sport} ${e.orig.dst}:${e.orig.dport} ${e.reply.src}`;

describe.runIf(kernel)('conntrack listings from the real tool and kernel', () => {
  it('reads conntrack -L (plain, -o extended,id, -o ktimestamp), /proc/net/nf_conntrack, -S and -C without an error', async () => {
    await withNetns('ctlist', (ns) => {
      fill(ns, 6);
      const forms = {
        plain: ns.exec('conntrack', ['-L']),
        v6: ns.exec('conntrack', ['-L', '-f', 'ipv6']),
        extended: ns.exec('conntrack', ['-L', '-o', 'extended,id']),
        ktimestamp: ns.exec('conntrack', ['-L', '-o', 'ktimestamp']),
        proc: ns.exec('cat', ['/proc/net/nf_conntrack']),
      };
      const read = Object.fromEntries(Object.entries(forms).map(([k, text]) => [k, extractConntrack(text, k)]));
      for (const [k, r] of Object.entries(read)) {
        expect(r.diagnostics, `${k}:\n${forms[k as keyof typeof forms]}`).toEqual([]);
        expect(detectFormat(forms[k as keyof typeof forms]), k).toBe('conntrack');
      }
      const keys = (k: string) => Array.from({ length: read[k].table.size }, (_, i) => key(read[k].table.entry(i))).sort();
      expect(keys('plain').length).toBe(6 + 1 + 1 + 1 + 1); // udp, tcp, sctp, icmp, IPv6 udp
      expect(keys('v6')).toEqual(['udp fd00::1:5000 fd00:10:96::a:53 fd00:10:244::5']);
      expect(keys('extended')).toEqual(keys('plain'));
      expect(keys('ktimestamp')).toEqual(keys('plain'));
      expect(keys('proc')).toEqual(keys('plain'));
      const all = Array.from({ length: read.extended.table.size }, (_, i) => read.extended.table.entry(i));
      expect(all.every((e) => e.id !== undefined)).toBe(true);
      expect(all.find((e) => e.proto === 'tcp')).toMatchObject({ state: 'ESTABLISHED', mark: 7, assured: true, orig: { dport: 443 }, reply: { src: '172.18.0.2', sport: 6443 } });
      expect(all.find((e) => e.proto === 'sctp')).toMatchObject({ state: 'CLOSED' });
      expect(all.find((e) => e.proto === 'icmp')).toMatchObject({ orig: { type: 8, code: 0 } });
      expect(read.proc.table.variant).toBe('proc');

      const s = extractConntrackStats(ns.exec('conntrack', ['-S']), 'S');
      expect(s.diagnostics).toEqual([]);
      expect(s.stats.form).toBe('per-cpu');
      expect(s.stats.totals.insert).toBeGreaterThanOrEqual(6);
      const c = extractConntrackStats(ns.exec('conntrack', ['-C']), 'C');
      expect(c.stats.count?.value).toBe(keys('proc').length);
    });
  });

  it('kpx collect records conntrack -S and a bounded conntrack -L; --no-conntrack skips the listing', async () => {
    const capped = join(tmp, 'capped');
    const skipped = join(tmp, 'skipped');
    await withNetns('ctcollect', (ns) => {
      fill(ns, 30);
      ns.exec(process.execPath, [BIN, 'collect', '-o', capped, '--conntrack-max-entries', '10']);
      ns.exec(process.execPath, [BIN, 'collect', '-o', skipped, '--no-conntrack']);
    });
    const manifest = JSON.parse(readFileSync(join(capped, 'manifest.json'), 'utf8'));
    const step = (file: string) => manifest.steps.find((x: { file: string }) => x.file === file);
    expect(step('conntrack-L.txt')).toMatchObject({ status: 'ok', detail: 'truncated: the first 10 entries (--conntrack-max-entries)' });
    expect(step('conntrack-S.txt')).toMatchObject({ status: 'ok' });
    expect(readFileSync(join(capped, 'conntrack-L.txt'), 'utf8').split('\n').filter(Boolean)).toHaveLength(10);
    const snap = await loadSnapshot([capped]);
    expect(snap.conntrack?.tables.map((t) => t.size)).toEqual([10]);
    expect(snap.conntrack?.stats.map((t) => t.form)).toEqual(['per-cpu']);
    expect(snap.sysctls.get('net.netfilter.nf_conntrack_count')?.value).toMatch(/^\d+$/);
    expect(existsSync(join(skipped, 'conntrack-L.txt'))).toBe(false);
    expect(existsSync(join(skipped, 'conntrack-S.txt'))).toBe(true);
  });
});
