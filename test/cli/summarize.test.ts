/**
 * Fleets (issue 20): `kpx summarize -o json` writes one node's analysis; `kpx services --nodes`
 * reads summaries instead of raw dumps — alone or mixed with raw node folders — and says exactly
 * what it says from the raw dumps, disagreements included.
 */
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCluster } from '../../src/generate/index.js';
import { writeClusterBundle } from '../../src/generate/cluster-bundle.js';
import { cli } from '../helpers/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpx-summarize-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const raw = join(tmp, 'raw');
const sums = join(tmp, 'summaries');
const mixed = join(tmp, 'mixed');
let nodes: string[] = [];
/** The endpoint chain whose jump is taken out of the last node's dump (a real disagreement). */
let removed = '';

beforeAll(async () => {
  nodes = writeClusterBundle(generateCluster({ seed: 5, services: 12, nodes: 3 }), 'iptables', raw);
  const victim = join(raw, nodes[2], 'iptables-save.txt');
  const lines = readFileSync(victim, 'utf8').split('\n');
  const i = lines.findIndex((l) => /^-A KUBE-SVC-\S+ .*--probability .*-j KUBE-SEP-/.test(l));
  const sep = /-j (KUBE-SEP-\S+)/.exec(lines[i])![1];
  removed = /--to-destination (\S+)/.exec(lines.find((l) => l.startsWith(`-A ${sep} `) && l.includes('--to-destination'))!)![1];
  lines.splice(i, 1);
  writeFileSync(victim, lines.join('\n'));
  mkdirSync(sums);
  for (const n of nodes) {
    const r = await cli(['summarize', '-i', join(raw, n), '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    writeFileSync(join(sums, `${n}.json`), r.stdout);
  }
  mkdirSync(mixed);
  copyFileSync(join(sums, `${nodes[0]}.json`), join(mixed, `${nodes[0]}.json`));
  for (const n of nodes.slice(1)) cpSync(join(raw, n), join(mixed, n), { recursive: true });
});

describe('kpx summarize and services --nodes over summaries', () => {
  it('a summary is versioned, names its node, and keeps evidence as [file, line] references', () => {
    const s = JSON.parse(readFileSync(join(sums, `${nodes[1]}.json`), 'utf8'));
    expect(s).toMatchObject({ kind: 'kpx-node-summary', schemaVersion: 1, node: nodes[1], modes: ['iptables'] });
    expect(s.services.length).toBeGreaterThan(10);
    const withEndpoints = s.services.find((x: { endpoints: unknown[] }) => x.endpoints.length > 0);
    const [file, line] = withEndpoints.endpoints[0].evidence[0];
    expect(s.files[file].path).toMatch(/iptables-save\.txt$/);
    expect(line).toBeGreaterThan(0);
    // The lines it points at are that endpoint's rules: one of them is its DNAT.
    const text = readFileSync(s.files[file].path, 'utf8').split('\n');
    const e = withEndpoints.endpoints[0];
    expect(e.evidence.some(([f, l]: [number, number]) => f === file && text[l - 1].includes(`--to-destination ${e.ip}:${e.port}`))).toBe(true);
    // Much smaller than the dumps it stands for.
    expect(readFileSync(join(sums, `${nodes[1]}.json`)).length).toBeLessThan(readFileSync(join(raw, nodes[1], 'iptables-save.txt')).length);
  });

  it('services --nodes says the same from summaries, from raw dumps and from a mix (JSON and text)', async () => {
    const fromRaw = await cli(['services', '--nodes', '-i', raw, '-o', 'json']);
    expect(fromRaw.code).toBe(0);
    const j = JSON.parse(fromRaw.stdout);
    // The disagreement is there to be found…
    const found = j.services.flatMap((s: { differences: { kind: string; message: string; nodes: string[] }[] }) => s.differences).filter((d: { kind: string; message: string; nodes: string[] }) => d.kind === 'endpoints' && d.nodes.includes(nodes[2]));
    expect(found.map((d: { message: string }) => d.message).join('\n')).toContain(removed);
    // … and the summaries find it too, word for word.
    expect((await cli(['services', '--nodes', '-i', sums, '-o', 'json'])).stdout).toBe(fromRaw.stdout);
    expect((await cli(['services', '--nodes', '-i', mixed, '-o', 'json'])).stdout).toBe(fromRaw.stdout);
    expect((await cli(['services', '--nodes', '-i', sums, '--all'])).stdout).toBe((await cli(['services', '--nodes', '-i', raw, '--all'])).stdout);
    // Summary files given one by one work as node folders do.
    const one = await cli(['services', '--nodes', ...nodes.flatMap((n) => ['-i', join(sums, `${n}.json`)]), '-o', 'json']);
    expect(one.stdout).toBe(fromRaw.stdout);
  });

  it('refuses what it cannot use: another schema version, a trace over summaries', async () => {
    const bad = join(tmp, 'bad');
    mkdirSync(bad);
    for (const n of nodes) {
      const s = JSON.parse(readFileSync(join(sums, `${n}.json`), 'utf8'));
      writeFileSync(join(bad, `${n}.json`), JSON.stringify({ ...s, schemaVersion: 99 }));
    }
    const r = await cli(['services', '--nodes', '-i', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/schemaVersion 99/);
    const t = await cli(['trace', '10.96.0.10:53/udp', '-i', sums, '--node', nodes[0]]);
    expect(t.code).toBe(2);
    expect(t.stderr).toMatch(/summary holds no rules/);
  });
});
