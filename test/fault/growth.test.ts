/**
 * Size and growth (issue 34): lists of any length never crash (`push(...list)` threw past
 * ~120,000 items), every reader is linear in its input, outputs grow with their input and not
 * with its square, and what does not fit a documented limit is refused in one line. Constructed
 * inputs, made here.
 *
 * Linearity is judged on CPU time at n and 4n, best of three, against a generous bound (×10
 * where linear is ×4 and quadratic ×16): CPU time, not wall time, so a loaded machine does not
 * make it flaky. Where the work can be counted (output bytes, cached shapes, pieces written,
 * lines parsed), it is counted instead.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { detectFormat, fileInput, parseInput } from '../../src/load/index.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { diffSnapshots } from '../../src/diff/index.js';
import { lintSnapshot } from '../../src/lint/run.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { ConntrackListingReader, MAX_PLANS } from '../../grammars/conntrack/index.js';
import { writeJsonDeep } from '../../src/render/json-deep-stream.js';
import { traceAction } from '../../src/cli/commands/trace.js';
import { YAML_NODE_BUDGET } from '../../grammars/common/json-positions.js';

let tmp = '';
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'kpx-growth-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const text = (t: string, path = 'x.txt') => ({ path, bytes: t.length, text: t });

/** CPU milliseconds of `fn`, best of three. */
function cpuMs(fn: () => unknown): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = process.cpuUsage();
    fn();
    const d = process.cpuUsage(t0);
    best = Math.min(best, (d.user + d.system) / 1000);
  }
  return best;
}
async function cpuMsAsync(fn: () => Promise<unknown>): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = process.cpuUsage();
    await fn();
    const d = process.cpuUsage(t0);
    best = Math.min(best, (d.user + d.system) / 1000);
  }
  return best;
}

/** Time at 4n over time at n: about 4 for a linear reader, 16 for a quadratic one. */
async function growth(make: (n: number) => string, n: number): Promise<number> {
  const small = make(n);
  const big = make(4 * n);
  const parse = (t: string) => parseInput(text(t));
  const a = await cpuMsAsync(() => parse(small));
  const b = await cpuMsAsync(() => parse(big));
  return b / Math.max(a, 5);
}

describe('lists longer than 120,000 items', () => {
  it('routes, rules, ipsets, bridge ports and interfaces (ip -j link): read, no stack overflow', async () => {
    const dir = join(tmp, 'long');
    mkdirSync(dir);
    const N = 130_000;
    const ip = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    const lines = (f: (i: number) => string) => Array.from({ length: N }, (_, i) => f(i)).join('\n') + '\n';
    writeFileSync(join(dir, 'ip-route.txt'), lines((i) => `${ip(i)} via 172.18.0.1 dev eth0`));
    writeFileSync(join(dir, 'ip-rule.txt'), lines((i) => `${1000 + i}:\tfrom ${ip(i)} lookup 100`));
    writeFileSync(join(dir, 'bridge-link.txt'), lines((i) => `${i + 1}: p${i}@if3: <BROADCAST,UP> mtu 1500 master cni0 state forwarding priority 32 cost 2`));
    writeFileSync(join(dir, 'ipset-save.txt'), lines((i) => `create S${i} hash:ip family inet hashsize 1024 maxelem 65536`));
    writeFileSync(join(dir, 'ip-link.json'), JSON.stringify(Array.from({ length: N }, (_, i) => ({ ifindex: i + 1, ifname: `j${i}`, flags: ['UP'], mtu: 1500, addr_info: [] }))));
    const s = await loadSnapshot([dir]);
    const formats = Object.fromEntries(s.files.map((f) => [f.path.slice(dir.length + 1), [f.format, f.diagnostics.filter((d) => d.code === 'internal/parser-crash').length]]));
    expect(formats).toEqual({
      'ip-route.txt': ['ip-route', 0],
      'ip-rule.txt': ['ip-rule', 0],
      'bridge-link.txt': ['bridge-link', 0],
      'ipset-save.txt': ['ipset-save', 0],
      'ip-link.json': ['ip-addr-json', 0],
    });
    expect(s.routes.length).toBeGreaterThanOrEqual(N);
    expect(s.policyRules.length).toBe(N);
    expect(s.ipsets.length).toBe(N);
    expect(s.bridgePorts?.length).toBe(N);
    expect(s.interfaces.length).toBe(N);
  }, 300_000);

  it('diff of a chain gaining 150,000 rules, and lint with a kube-proxy configuration and 150,000 KUBE-SERVICES rules', async () => {
    const head = '*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n-A PREROUTING -j KUBE-SERVICES\n';
    const rules = Array.from({ length: 150_000 }, (_, i) => `-A KUBE-SERVICES -d 10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}/32 -p tcp -m tcp --dport 80 -j RETURN`).join('\n');
    const a = join(tmp, 'a');
    const b = join(tmp, 'b');
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(join(a, 'iptables-save.txt'), `${head}COMMIT\n`);
    writeFileSync(join(b, 'iptables-save.txt'), `${head}${rules}\nCOMMIT\n`);
    writeFileSync(join(b, 'kube-proxy.yaml'), 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: iptables\nclusterCIDR: 10.244.0.0/16\n');
    const [sa, sb] = [await loadSnapshot([a]), await loadSnapshot([b])];
    const d = diffSnapshots(sa, await resolveServices(sa), sb, await resolveServices(sb));
    expect(JSON.stringify(d).length).toBeGreaterThan(1000);
    const l = await lintSnapshot(sb, {});
    expect(l.rules.length).toBeGreaterThan(10);
  }, 300_000);
});

describe('readers are linear in their input', () => {
  it('a conntrack entry with thousands of unknown attributes (columns found in one pass, none past the cap)', async () => {
    const line = (n: number) => `tcp      6 86397 ESTABLISHED src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2 src=10.0.0.2 dst=10.0.0.1 sport=2 dport=1 [ASSURED] mark=0 ${Array.from({ length: n }, (_, i) => `foo${i}=1`).join(' ')} use=1\n`;
    expect(await growth(line, 3000)).toBeLessThan(10);
  }, 120_000);

  it('conntrack lines of distinct shapes: the shape cache stays bounded', () => {
    const read = (n: number) => {
      const r = new ConntrackListingReader('c.txt', { entry() {}, diagnostic() {} });
      for (let i = 0; i < n; i++) r.line(`udp      17 29 src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2 src=10.0.0.2 dst=10.0.0.1 sport=2 dport=1 mark=0 k${i}=1 use=1`);
      r.end();
      return r;
    };
    const r = read(MAX_PLANS + 500);
    expect(r.entries).toBe(MAX_PLANS + 500);
    expect(r.shapes).toBe(MAX_PLANS);
    expect(r.fullParses).toBe(MAX_PLANS + 500);
  });

  it('a KubeProxyConfiguration with tens of thousands of unknown keys', async () => {
    const config = (n: number) => `apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n${Array.from({ length: n }, (_, i) => `unknownKey${i}: ${i}\n`).join('')}`;
    expect(await growth(config, 2500)).toBeLessThan(10);
  }, 120_000);

  it('one iptables rule with thousands of -m comment matches', async () => {
    const rule = (n: number) => `*filter\n:INPUT ACCEPT [0:0]\n-A INPUT ${Array.from({ length: n }, (_, i) => `-m comment --comment c${i}`).join(' ')} -j ACCEPT\nCOMMIT\n`;
    expect(await growth(rule, 2500)).toBeLessThan(10);
  }, 120_000);

  it('a line of 3-byte characters in ip route, and in the first bytes every sniffer reads', async () => {
    const route = (n: number) => `default via 172.18.0.1 dev eth0\n10.0.0.0/8 dev eth0 ${'€'.repeat(n)}\n${'10.1.0.0/16 dev € '.repeat(n / 50)}\n`;
    expect(await growth(route, 50_000)).toBeLessThan(10);
    const sniff = (n: number) => detectFormat(`${'€ '.repeat(n)}\n${'€'.repeat(n)}\n`);
    const a = cpuMs(() => sniff(15_000));
    const b = cpuMs(() => sniff(60_000));
    expect(b / Math.max(a, 5)).toBeLessThan(10);
  }, 120_000);

  it('a kube-proxy log line inside a TUI frame with a long run of spaces (found by the fuzz run)', async () => {
    const log = (n: number) => `│ I0816 02:53:24.744205       1 server_others.go:276] creating dualStackProxier for ipvs. │\n│ I${' '.repeat(n)}x\n`;
    expect(await growth(log, 1000)).toBeLessThan(10);
  }, 120_000);

  it('a kubectl JSON List: read as JSON, linear, positions still file:line:column', async () => {
    const list = (n: number) =>
      JSON.stringify(
        { apiVersion: 'v1', kind: 'List', items: Array.from({ length: n }, (_, i) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: `s${i}`, namespace: 'ns' }, spec: { clusterIP: `10.96.${(i >> 8) & 255}.${i & 255}`, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } })) },
        null,
        2,
      );
    expect(await growth(list, 1500)).toBeLessThan(10);
    // The positions are the ones the YAML reading gives (a first line `# …` makes the text YAML, one line down).
    type Where = { name: string; where: { line: number; column: number } };
    const services = async (t: string) => ((await parseInput(text(t, 'api.json'))).parsed!.data as { services: Where[] }).services.map((s) => [s.name, s.where.line, s.where.column]);
    const asJson = await services(list(3));
    const asYaml = (await services(`# kubectl get svc -o json\n${list(3)}`)).map(([n, l, c]) => [n, (l as number) - 1, c]);
    expect(asJson).toEqual(asYaml);
    const at = list(3).split('\n').findIndex((l) => l.includes('"name": "s1"')) + 1;
    expect(asJson[1]).toEqual(['s1', at, 17]);
  }, 120_000);
});

describe('YAML with keys that are lists or maps, nested deep (found by the fuzz run)', () => {
  // The yaml package's toJS() prints such a key's whole subtree to make it a string, at every level:
  // 3,000 nested `{` in an 11 KB paste took minutes. kpx leaves such pairs out before toJS (and says so).
  it('kubectl objects and a KubeProxyConfiguration: linear in the nesting, the pairs reported as left out', async () => {
    const paste = (n: number) => `apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  labels: ${'{'.repeat(n)}\nspec:\n  clusterIP: 10.96.0.9\n`;
    expect(await growth(paste, 100)).toBeLessThan(10);
    const r = await parseInput(text(paste(400), 'svc.yaml'));
    expect(r.diagnostics.map((d) => d.message)).toContain('1 mapping key(s) that are a list or a map (no Kubernetes field is): left out');
    const config = (n: number) => `apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\nfeatureGates: ${'{'.repeat(n)}\n`;
    expect(await growth(config, 100)).toBeLessThan(10);
  }, 120_000);
});

describe('outputs grow with their input', () => {
  it('trace -o json of one nft rule with n undecided statements: bytes grow ~linearly (×4 at 4n, not ×16)', async () => {
    const size = async (n: number) => {
      const f = join(tmp, `und-${n}.nft`);
      writeFileSync(f, `table ip kube-proxy {\n\tchain nat-prerouting {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n\t\tip daddr 10.96.0.10 ${Array.from({ length: n }, (_, i) => `meta skuid ${i}`).join(' ')} dnat to 10.244.0.2\n\t}\n}\n`);
      let out = 0;
      const o = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s).length), true));
      const e = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
      try {
        expect(await traceAction('10.96.0.10:53/udp', { input: [f], output: 'json', from: 'pod' })).toBe(0);
      } finally {
        o.mockRestore();
        e.mockRestore();
      }
      return out;
    };
    // Past 64 undecided statements the outcomes are capped (64): the steps grow with n only.
    const a = await size(150);
    const b = await size(600);
    expect(a).toBeGreaterThan(100_000);
    expect(b / a).toBeLessThan(6);
  }, 120_000);

  it('dump -o json of a chain of many rules is written in pieces (an object with toJSON is counted by its own members)', () => {
    class Chain {
      constructor(readonly rules: { n: number }[]) {}
      toJSON() {
        return { name: 'X', rules: this.rules };
      }
    }
    const pieces: string[] = [];
    writeJsonDeep({ model: { chains: [new Chain(Array.from({ length: 50_000 }, (_, n) => ({ n })))] } }, (t) => pieces.push(t));
    expect(pieces.length).toBeGreaterThan(20);
    expect(pieces.reduce((m, p) => Math.max(m, p.length), 0)).toBeLessThan(200_000);
    expect(JSON.parse(pieces.join('')).model.chains[0].rules).toHaveLength(50_000);
  });
});

describe('what does not fit a limit is refused before it costs', () => {
  it('a .gz of text that inflates past --max-input-size is refused before any of it is parsed', async () => {
    const f = join(tmp, 'rules.gz');
    const rule = '-A INPUT -s 10.0.0.1/32 -j ACCEPT\n';
    writeFileSync(f, gzipSync(`*filter\n:INPUT ACCEPT [0:0]\n${rule.repeat((8 * 1024 * 1024) / rule.length)}`));
    let parsed = 0;
    const r = await parseInput(fileInput(f, 0), undefined, (done) => void (parsed = Math.max(parsed, done)), { maxBytes: 4 * 1024 * 1024, maxGzipRatio: 0 });
    expect(r.diagnostics.map((d) => d.code)).toEqual(['input/too-large']);
    expect(parsed).toBe(0);
  });

  it('a YAML larger than the node budget is refused in one line, not parsed', async () => {
    const yaml = `apiVersion: v1\nkind: List\nitems:\n${'- apiVersion: v1\n  kind: Service\n  metadata:\n    name: a\n'.repeat(YAML_NODE_BUDGET / 4 + 10)}`;
    const t0 = process.memoryUsage().heapUsed;
    const r = await parseInput(text(yaml, 'big.yaml'));
    expect(r.format).toBe('k8s-api');
    expect(r.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code)).toEqual(['input/too-large']);
    expect(process.memoryUsage().heapUsed - t0).toBeLessThan(200 * 1024 * 1024);
  }, 60_000);
});
