/** The kpx binary: exit codes, stdout/stderr discipline, JSON shapes, no stack traces for user errors. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { kpxSpawn } from '../helpers/exec.js';

const KIND = new URL('../../samples/iptables-mode-kind/iptables-save.txt', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'kpx-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('kpx dump', () => {
  it('prints the parsed dump back as iptables-save', async () => {
    const r = await cli(['dump', KIND]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.3:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-6E7XQMQ4RAYOWTTM');
    expect(r.stdout.split('\n').filter((l) => l.startsWith('-A')).length).toBe(64);
  });
  it('prints the model as JSON, reading stdin and gzip', async () => {
    const gz = join(tmp, 'kind.gz');
    writeFileSync(gz, gzipSync(Buffer.from('*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j ACCEPT\nCOMMIT\n')));
    const r = await cli(['dump', gz, '-o', 'json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.format).toBe('iptables-save');
    expect(j.model.tables[0].chains[0].rules[0].target).toEqual({ kind: 'accept' });
    const s = await kpxSpawn(['dump', '-', '-o', 'json'], '*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n');
    expect(JSON.parse(s.stdout).counts).toEqual({ tables: 1, chains: 1, rules: 0 });
  });
});

describe('kpx inspect', () => {
  it('reports per file format, counts and diagnostics as JSON; exit 1 when a file has errors', async () => {
    const dir = join(tmp, 'bundle');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.txt'), '$ iptables-save\r\n*filter\r\n:INPUT ACCEPT [0:0]\r\n   -A INPUT -j ACCEPT\r\nCOMMIT\r\n');
    writeFileSync(join(dir, 'b.txt'), 'default via 10.0.0.1 dev eth0 proto dhcp metric 100 \n10.244.1.0/24 dev cni0 proto kernel scope link src 10.244.1.1 \n');
    writeFileSync(join(dir, 'c.txt'), '*filter\n-A INPUT -m\nCOMMIT\n');
    const r = await cli(['inspect', dir, '-o', 'json']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j.files.map((f: { format: string }) => f.format)).toEqual(['iptables-save', 'ip-route', 'iptables-save']);
    expect(j.files[0].counts).toEqual({ tables: 1, chains: 1, rules: 1 });
    expect(j.files[2].diagnostics[0]).toMatchObject({ severity: 'error', code: 'parse/unexpected-token', line: 2, column: 12 });
    expect(j.snapshot.missing.join(' ')).toMatch(/ip addr/);
  });
  it('exits 2 for a missing input, with a one-line message and no stack trace', async () => {
    const r = await cli(['inspect', '-i', join(tmp, 'nope')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^kpx: .*no such file or directory \(ENOENT\)\n$/);
    expect(r.stderr).not.toMatch(/at .*\.js/);
  });
});

describe('kpx inspect on nft rulesets', () => {
  it('says which nft tables are iptables-nft\'s and which are kube-proxy\'s nftables mode', async () => {
    const ipt = JSON.parse((await cli(['inspect', new URL('../../samples/iptables-mode-node', import.meta.url).pathname, '-o', 'json'])).stdout);
    expect(ipt.snapshot.nftTables).toContainEqual({ family: 'ip', name: 'nat', writtenBy: 'iptables-nft' });
    expect(ipt.snapshot.proxyModes).toEqual(['iptables']);
    const nft = JSON.parse((await cli(['inspect', new URL('../../samples/nftables-mode-node', import.meta.url).pathname, '-o', 'json'])).stdout);
    expect(nft.snapshot.nftTables).toEqual([{ family: 'ip', name: 'kube-proxy', writtenBy: 'kube-proxy nftables mode' }]);
    expect(nft.snapshot.proxyModes).toEqual(['nftables']);
  });
});

describe('kpx services', () => {
  it('lists Services with names first, and -o json follows the schema', async () => {
    const t = await cli(['services', '-i', KIND]);
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(/^kube-system\/kube-dns:dns +10\.96\.0\.10 +53\/UDP +2 +healthy$/m);
    expect(t.stdout).not.toMatch(/\u001b\[/);
    const j = JSON.parse((await cli(['services', '-i', KIND, '-o', 'json'])).stdout);
    const dns = j.services.find((s: { name: string; portName: string }) => s.name === 'kube-dns' && s.portName === 'dns');
    expect(dns).toMatchObject({ namespace: 'kube-system', protocol: 'udp', port: 53, clusterIP: '10.96.0.10', nodePort: null, externalIPs: [], loadBalancerIPs: [], state: 'healthy' });
    expect(dns.endpoints).toEqual([
      expect.objectContaining({ ip: '10.244.0.3', port: 53, probability: 0.5, local: null }),
      expect.objectContaining({ ip: '10.244.0.4', port: 53, probability: 0.5, local: null }),
    ]);
  });
  it('shows one Service in detail with its dump lines', async () => {
    const r = await cli(['services', '-i', KIND, '--service', 'kube-system/kube-dns:dns']);
    expect(r.stdout).toContain('iptables-save.txt:98');
    expect(r.stdout).toContain('chain hash verified');
  });
  it('rejects a bad --state with exit 2', async () => {
    expect((await cli(['services', '-i', KIND, '--state', 'weird'])).code).toBe(2);
  });
});

describe('kpx trace', () => {
  it('prints {schemaVersion, traces: [one trace]} for a named protocol, with probabilities summing to 1', async () => {
    const r = await cli(['trace', '10.96.0.10:53/udp', '-i', KIND, '--node-ip', '172.18.0.2', '-o', 'json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual(['schemaVersion', 'traces']);
    expect(doc.traces).toHaveLength(1);
    const t = doc.traces[0];
    expect(t.packet).toMatchObject({ protocol: 'udp', dst: '10.96.0.10', dport: 53 });
    expect(t.outcomes.map((o: { destination: string }) => o.destination).sort()).toEqual(['10.244.0.3:53', '10.244.0.4:53']);
    expect(t.outcomes.reduce((n: number, o: { probability: number }) => n + o.probability, 0)).toBeCloseTo(1, 9);
    // Steps are data: a code and typed fields (no English `action`); scenarios say which outcomes sum to 1.
    expect(t.outcomes[0].steps[0]).toEqual(expect.objectContaining({ code: expect.any(String), dialect: 'iptables', table: expect.any(String), chain: expect.any(String), file: expect.any(String) }));
    expect(t.outcomes[0].steps[0]).not.toHaveProperty('action');
    expect(t.scenarios).toEqual([{ conditions: [], outcomes: [0, 1] }]);
  });
  it('gives the same shape, one trace per protocol, when no protocol is named', async () => {
    const t = JSON.parse((await cli(['trace', '10.96.0.10:53', '-i', KIND, '-o', 'json'])).stdout);
    expect(Object.keys(t)).toEqual(['schemaVersion', 'traces']);
    expect(t.traces.map((x: { packet: { protocol: string } }) => x.packet.protocol)).toEqual(['udp', 'tcp']);
  });
  it('tells the story in text: Service first, then hops with line numbers', async () => {
    const r = await cli(['trace', '10.96.0.10:53/udp', '-i', KIND, '--node-ip', '172.18.0.2']);
    expect(r.stdout.split('\n')[0]).toMatch(/^kube-system\/kube-dns:dns\s+10\.96\.0\.10:53\/udp/);
    expect(r.stdout).toMatch(/50%\s+DNAT → 10\.244\.0\.3:53/);
    expect(r.stdout).toMatch(/nat\/KUBE-SERVICES:98/);
  });
  it('exits 2 on a bad destination', async () => {
    for (const bad of ['10.96.0.10:99999', 'not an address', 'nodeport:70000']) {
      const r = await cli(['trace', bad, '-i', KIND]);
      expect(r.code, bad).toBe(2);
      expect(r.stderr, bad).toMatch(/expected VIP:PORT|out of range/);
    }
  });
});

describe('terminal hygiene', () => {
  it('never prints raw control characters from a dump', async () => {
    const f = join(tmp, 'evil.txt');
    writeFileSync(f, '*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m comment --comment "\u001b[31mred\u0007" -j ACCEPT\n-A INPUT -m \u001b[2J\nCOMMIT\n');
    const r = await cli(['inspect', f]);
    expect(r.stdout + r.stderr).not.toMatch(/[\u0007\u001b]/);
  });
});

describe('a reader that goes away', () => {
  it('stops quietly with exit 0 when stdout is closed early (`| head`)', async () => {
    const { spawn } = await import('node:child_process');
    const { BIN } = await import('../helpers/exec.js');
    // The reader is gone before kpx writes a byte.
    const child = spawn(process.execPath, [BIN, 'services', '-i', 'samples/iptables-mode-node', '-o', 'json'], { env: { ...process.env, CI: '1' } });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(stderr).not.toMatch(/EPIPE|at .*\(node:/);
    expect(code).toBe(0);
  });
});
