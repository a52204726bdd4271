/**
 * A bundle directory mixing every format, some files damaged the way real pastes are (CRLF,
 * indentation, a pasted prompt, a code fence, gzip), loads into one snapshot; `kpx inspect`
 * reports per file the detected format, counts and diagnostics (issue 3, acceptance 4).
 * The inputs are the repository's samples, damaged here in the test.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

const samples = new URL('../../samples/', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'kpx-bundle-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const crlf = (t: string) => t.replace(/\n/g, '\r\n');
const indent = (t: string) => t.replace(/^/gm, '    ');

describe('a messy bundle of every format', () => {
  const dir = join(tmp, 'bundle');
  cpSync(join(samples, 'ipvs-mode-node'), dir, { recursive: true });
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  writeFileSync(join(dir, 'iptables-save.txt'), crlf(`[root@node-a ~]# iptables-save\n${read('iptables-save.txt')}`));
  writeFileSync(join(dir, 'ipvsadm-Ln.txt'), indent(read('ipvsadm-Ln.txt')));
  writeFileSync(join(dir, 'ip-route.txt'), '```\n' + read('ip-route.txt') + '```\n');
  writeFileSync(join(dir, 'ipset-list.txt.gz'), gzipSync(read('ipset-list.txt')));
  rmSync(join(dir, 'ipset-list.txt'));
  // What `nft -j list ruleset` prints for an empty ruleset (nftables 1.0.6).
  writeFileSync(join(dir, 'nft-ruleset.json'), '{"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}]}\n');
  cpSync(join(samples, 'nftables-mode-node', 'nft-ruleset.txt'), join(dir, 'nft-kube-proxy.txt'));
  writeFileSync(join(dir, 'mystery.txt'), 'hello\nthis is not a dump\n');

  it('reports each file with its format, counts and diagnostics, and exits 1 for the unreadable one', async () => {
    const r = await cli(['inspect', dir, '-o', 'json']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    const byName = Object.fromEntries(j.files.map((f: { path: string }) => [f.path.split('/').pop(), f]));
    expect(byName['iptables-save.txt']).toMatchObject({ format: 'iptables-save' });
    expect(byName['iptables-save.txt'].diagnostics.filter((d: { severity: string }) => d.severity !== 'info')).toEqual([]);
    expect(byName['iptables-save.txt'].diagnostics).toContainEqual(expect.objectContaining({ severity: 'info', code: 'input/noise', line: 1 }));
    expect(byName['ipvsadm-Ln.txt'].format).toBe('ipvsadm');
    expect(byName['ipvsadm-Ln.txt'].counts.virtualServers).toBeGreaterThan(10);
    expect(byName['ip-route.txt'].format).toBe('ip-route');
    expect(byName['ipset-list.txt.gz']).toMatchObject({ format: 'ipset-list' });
    expect(byName['ipset-list.txt.gz'].counts.sets).toBeGreaterThan(5);
    expect(byName['ip-addr.txt'].format).toBe('ip-addr');
    expect(byName['sysctl.txt'].format).toBe('sysctl');
    expect(byName['nft-kube-proxy.txt']).toMatchObject({ format: 'nft' });
    expect(byName['nft-ruleset.json']).toMatchObject({ format: 'nft-json' });
    expect(byName['mystery.txt']).toMatchObject({ format: 'unknown', diagnostics: [expect.objectContaining({ severity: 'error', code: 'input/unknown-format' })] });
    expect(j.snapshot.proxyModes).toEqual(expect.arrayContaining(['ipvs', 'nftables']));
    expect(j.snapshot.counts.virtualServers).toBeGreaterThan(10);
  });

  it('says the same in text, and the Services resolve from the damaged files', async () => {
    const r = await cli(['inspect', dir]);
    expect(r.stdout).toMatch(/ipvsadm-Ln\.txt +ipvsadm/);
    expect(r.stdout).toMatch(/mystery\.txt +unknown/);
    const s = JSON.parse((await cli(['services', '-i', dir, '-o', 'json'])).stdout);
    expect(s.services.filter((x: { mode: string }) => x.mode === 'ipvs').length).toBeGreaterThan(10);
  });
});
