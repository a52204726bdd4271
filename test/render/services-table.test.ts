/**
 * `kpx services` the kubectl way: borderless columns, fitted to the width (120 when piped) by
 * leaving out REASON then ENDPOINTS (said below the table) and never cutting a name, unhealthy
 * first, unnamed ports as `<unset>`, `-o wide` with the lists, and the detail view in 120 columns.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, type KpxResult } from '../helpers/cli.js';
import { elideMiddle, renderColumns } from '../../src/render/columns.js';
import { renderServicesTable } from '../../src/render/services.js';
import { chalkInit } from '../../src/render/colors.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';

const SAMPLES = fileURLToPath(new URL('../../samples', import.meta.url));
const NODE = join(SAMPLES, 'iptables-mode-node');
const IPVS = join(SAMPLES, 'ipvs-mode-node');
/** Piped output, no COLUMNS: the 120-column default. */
const piped = (args: string[], columns = '') => cli(args, { COLUMNS: columns });
const lines = (s: string) => s.trimEnd().split('\n');
const width = (l: string) => [...stripVTControlCharacters(l)].length;

describe('kpx services table', () => {
  let out: KpxResult;
  let rows: string[];
  let at120: KpxResult;
  beforeAll(async () => {
    at120 = await piped(['services', '-i', NODE]);
    // A terminal wide enough for every column: the reason of each unhealthy port.
    out = await piped(['services', '-i', NODE], '140');
    rows = lines(out.stdout);
  });

  it('is borderless, upper-case headed, one line per Service port, within 120 columns', async () => {
    expect(out.code).toBe(0);
    expect(rows[0]).toMatch(/^SERVICE +CLUSTER-IP +PORT\(S\) +ENDPOINTS +STATE +REASON$/);
    expect(out.stdout).not.toMatch(/[│─┌┐└┘├┤┼]/);
    const json = JSON.parse((await piped(['services', '-i', NODE, '-o', 'json'])).stdout);
    // header + one row per Service port + the summary line (the old boxed table took 70 lines for 33).
    expect(rows).toHaveLength(json.services.length + 2);
    expect(rows.at(-1)).toBe('33 Service ports (4 no-endpoints, 2 no-local-endpoints, 27 healthy).');
    // At 120 columns the reason is left out, and said so: every name is whole.
    const r120 = lines(at120.stdout);
    expect(r120[0]).toMatch(/^SERVICE +CLUSTER-IP +PORT\(S\) +ENDPOINTS +STATE$/);
    expect(r120.at(-1)).toBe('REASON left out to fit 120 columns: -o wide shows every column.');
    expect(at120.stdout).not.toContain('…');
    for (const l of r120) expect(width(l), l).toBeLessThanOrEqual(120);
    for (const l of rows) expect(width(l), l).toBeLessThanOrEqual(140);
    // Columns line up: each row's STATE starts where the header's does.
    const at = rows[0].indexOf('STATE');
    for (const l of rows.slice(1, -1)) expect(l.slice(at), l).toMatch(/^(healthy|no-endpoints|no-local-endpoints|partial|unknown)\b/);
  });

  it('lists unhealthy Service ports first, each with a reason; healthy ones have none', () => {
    const at = rows[0].indexOf('STATE');
    const reasonAt = rows[0].indexOf('REASON');
    const states = rows.slice(1, -1).map((l) => l.slice(at).split(/ +/)[0]);
    expect(states.slice(0, 6)).toEqual(['no-endpoints', 'no-endpoints', 'no-endpoints', 'no-endpoints', 'no-local-endpoints', 'no-local-endpoints']);
    expect(new Set(states.slice(6))).toEqual(new Set(['healthy']));
    for (const l of rows.slice(1, 7)) expect(l.slice(reasonAt), l).toMatch(/^(no-endpoint-rules|int-policy-local|ext-policy-local)( \+\d+)?$/);
    for (const l of rows.slice(7, -1)) expect(l.length, l).toBeLessThanOrEqual(reasonAt);
    expect(out.stdout).toMatch(/^shapes\/internal-local-no-local-endpoints:http +10\.111\.50\.149 +80\/TCP +0 +no-local-endpoints +int-policy-local$/m);
    expect(out.stdout).toMatch(/^shapes\/nodeport-local-no-local-endpoints:http +10\.98\.212\.16 +80:31214\/TCP +2 \(0 local\) +no-local-endpoints +ext-policy-local$/m);
  });

  it('says unnamed ports as kubectl does, and summarises endpoints with how many are local', async () => {
    expect(out.stdout).toMatch(/^shapes\/unnamed-port:<unset> +10\.108\.239\.108 +8080\/TCP +2 \(1 local\) +healthy$/m);
    expect(out.stdout).toMatch(/^shapes\/sctp-nodeport:<unset> +10\.104\.173\.113 +9999:30483\/SCTP +1 \(1 local\) +healthy$/m);
    expect(out.stdout).not.toMatch(/\(unnamed\)|\?:0|-:0/);
    // An IPVS NodePort alone names no Service and no Service port.
    expect((await piped(['services', '-i', IPVS], '140')).stdout).toMatch(/^<unnamed> +<none> +<unknown>:32006\/TCP +0 +no-endpoints +no-real-servers$/m);
  });

  it('fits a narrower terminal by leaving columns out, never cutting a name (a long one alone on its line)', async () => {
    const narrow = lines((await piped(['services', '-i', NODE], '80')).stdout);
    expect(narrow[0]).toMatch(/^SERVICE +CLUSTER-IP +PORT\(S\) +STATE$/);
    expect(narrow.at(-1)).toBe('REASON and ENDPOINTS left out to fit 80 columns: -o wide shows every column.');
    expect(narrow.filter((l) => l.includes('…'))).toEqual([]);
    const alone = narrow.filter((l) => width(l) > 80);
    for (const l of alone) expect(l, l).toMatch(/^\S+$/);
    // A name alone on its line: the rest of its row below, in the columns.
    const i = narrow.indexOf('shapes/loadbalancer-source-ranges-node:http');
    expect(i).toBeGreaterThan(0);
    expect(narrow[i + 1]).toMatch(/^ +10\.\d+\.\d+\.\d+ +80:\d+\/TCP +healthy$/);
  });

  it('-o wide adds type, external IPs, policy, mode, identification, the Service chains and every endpoint (local ones starred)', async () => {
    const wide = (await piped(['services', '-i', NODE, '-o', 'wide'])).stdout;
    expect(lines(wide)[0]).toMatch(/ REASON +TYPE +EXTERNAL-IP +POLICY +MODE +IDENTIFIED-BY +CHAINS +ENDPOINT-LIST$/);
    expect(wide).toMatch(/^kube-system\/kube-dns:dns .* ClusterIP +<none> +Cluster +iptables +comment +KUBE-SVC-TCOU7JCQXEZGVUNU +10\.244\.0\.2:53,10\.244\.1\.2:53\*$/m);
    // Nothing is cut in wide output.
    expect(wide).not.toContain('…');
  });

  it('--service fits 120 columns, with the reason; long rules and sentences are wrapped, not cut', async () => {
    for (const sel of ['shapes/loadbalancer-source-ranges:http', 'shapes/external-ips-no-endpoints:http']) {
      const r = await piped(['services', '-i', NODE, '--service', sel]);
      expect(r.code).toBe(0);
      for (const l of lines(r.stdout)) expect(width(l), l).toBeLessThanOrEqual(120);
    }
    const d = (await piped(['services', '-i', NODE, '--service', 'shapes/external-ips-no-endpoints:http'])).stdout;
    expect(lines(d)[0]).toMatch(/^shapes\/external-ips-no-endpoints:http {2}80\/TCP {2}no-endpoints \(no-endpoint-rules \+1\)/);
    // A rule's target is at its end: still there, on a continuation line.
    const lb = (await piped(['services', '-i', NODE, '--service', 'shapes/loadbalancer-source-ranges:http'])).stdout;
    expect(lb).toMatch(/iptables-save\.txt:52 {2}-A KUBE-PROXY-FIREWALL -d 172\.18\.200\.3\/32 .*\n {8}.*\n {8}--dport 80 -j DROP\n/);
    // A problem sentence is wrapped, not cut: its last words are there.
    expect(d.replace(/\n +/g, ' ')).toContain('listed as externalIPs');
  });
});

describe('the table renderer', () => {
  it('elides in the middle', () => {
    expect(elideMiddle('kube-system/very-long-service-name:metrics', 20)).toBe('kube-syst…me:metrics');
    expect(elideMiddle('short', 20)).toBe('short');
    expect(elideMiddle('abcdef', 5)).toBe('ab…ef');
  });

  it('colour takes no room: a coloured table is the plain one, painted', async () => {
    const res = await resolveServices(await loadSnapshot([NODE]));
    const plain = renderServicesTable(res, chalkInit(false), { width: 120 });
    const coloured = renderServicesTable(res, chalkInit(true), { width: 120 });
    expect(coloured).not.toBe(plain);
    expect(stripVTControlCharacters(coloured)).toBe(plain);
  });

  it('shrinks only the columns marked to, and never below their minimum', () => {
    const t = renderColumns(
      [{ head: 'name', shrink: true, min: 10 }, { head: 'fixed' }],
      [['a-very-long-name-indeed-yes', 'keep-this-whole']],
      { width: 20 },
    );
    expect(t).toBe('NAME        FIXED\na-ve…d-yes  keep-this-whole\n');
  });
});

describe('kpx inspect', () => {
  it('keeps the end of a long path (the file name), in kubectl-style columns within the width', async () => {
    const { mkdtempSync, mkdirSync, copyFileSync, readdirSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const tmp = mkdtempSync(join(tmpdir(), 'kpx-inspect-'));
    try {
      const deep = join(tmp, 'a-very-long-directory-name-for-a-bundle', 'node-worker-17.example.internal');
      mkdirSync(deep, { recursive: true });
      for (const f of readdirSync(NODE)) copyFileSync(join(NODE, f), join(deep, f));
      // A bundle: its directory once (its start elided to fit), then each file by its whole name.
      const r = await piped(['inspect', deep], '80');
      expect(r.code).toBe(0);
      const rows = lines(r.stdout);
      expect(rows[0]).toMatch(/^…\S*\/node-worker-17\.example\.internal\/$/);
      expect(rows[1]).toMatch(/^FILE +FORMAT +CONTENTS +ERRORS +WARNINGS$/);
      expect(r.stdout).not.toMatch(/[│─]/);
      for (const f of readdirSync(NODE).filter((x) => x.endsWith('.txt'))) expect(r.stdout, f).toMatch(new RegExp(`^${f.replace('.', '\\.')} +\\S`, 'm'));
      // The contents give up room to fit 80 columns; the file names stay whole.
      expect(r.stdout).toMatch(/^iptables-save\.txt +iptables-save +3 tables, 144\S*…\S*, 379 rules +0 +0$/m);
      for (const l of rows) expect(width(l), l).toBeLessThanOrEqual(80);
      // One file with a long path: the start goes, the file name stays.
      const one = lines((await piped(['inspect', join(deep, 'iptables-save.txt')], '80')).stdout);
      expect(one[1]).toMatch(/^…\S*\/iptables-save\.txt +iptables-save +3 tables/);
      for (const l of one) expect(width(l), l).toBeLessThanOrEqual(120);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('kpx services --nodes', () => {
  it('compares nodes in kubectl-style columns, differing Service ports first, each difference in words below, within 120 columns', async () => {
    const { mkdtempSync, readFileSync, writeFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { generateCluster } = await import('../../src/generate/index.js');
    const { writeClusterBundle } = await import('../../src/generate/cluster-bundle.js');
    const tmp = mkdtempSync(join(tmpdir(), 'kpx-nodes-'));
    try {
      const dir = join(tmp, 'cluster');
      const nodes = writeClusterBundle(generateCluster({ seed: 3, services: 10, nodes: 3 }), 'iptables', dir);
      // One node lost kube-dns:metrics' rules.
      const save = join(dir, nodes[2], 'iptables-save.txt');
      writeFileSync(save, readFileSync(save, 'utf8').split('\n').filter((l) => !l.includes('kube-dns:metrics')).join('\n'));
      const r = await piped(['services', '--nodes', '-i', dir, '--all']);
      expect(r.code).toBe(0);
      const rows = lines(r.stdout);
      expect(r.stdout).not.toMatch(/[│─┌┐└┘├┤┼]/);
      for (const l of rows) expect(width(l), l).toBeLessThanOrEqual(120);
      expect(rows[1]).toMatch(/^SERVICE +CLUSTER-IP +PORT\(S\) +AGREE +DIFFERENCES$/);
      // The differing port comes first, though it sorts after the kubernetes Service by name.
      expect(rows.find((l) => l.startsWith('kube-system/kube-dns:metrics '))).toMatch(/^kube-system\/kube-dns:metrics +10\.96\.0\.10 +9153\/TCP +2\/3 +missing-service$/);
      expect(rows.findIndex((l) => l.startsWith('kube-system/kube-dns:metrics'))).toBeLessThan(rows.findIndex((l) => l.startsWith('default/kubernetes:https')));
      const below = r.stdout.slice(r.stdout.indexOf('\nDIFFERENCES\n'));
      expect(below).toContain(`\n  kube-system/kube-dns:metrics\n    - not on ${nodes[2]} (present on 2 of 3 nodes)\n`);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('-o yaml', () => {
  it('is the JSON document, with no raw control character even where YAML would leave one', async () => {
    const { renderYaml, renderJson } = await import('../../src/render/json.js');
    const { parse } = await import('yaml');
    const value = { schemaVersion: 1, name: 'evil\u0085\u009b[2J\u001b[31m\u2028x', 'key\u0090': [1, 'plain'], nested: { ok: 'fine: yes #no' } };
    const y = renderYaml(value);
    expect(y).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
    expect(parse(y)).toEqual(JSON.parse(renderJson(value)));
  });
});
