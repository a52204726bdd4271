/**
 * `kpx migrate-check --to nftables` (issue 31, acceptance 1): generated nodes in iptables, IPVS and
 * nftables mode, each trap added to the generator's dumps by a small edit (a line of `ip addr`, a
 * sysctl, a foreign rule, an ipvsadm scheduler — labelled where made), and a plain node with none.
 * Each finding must point at the right dump line.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { generateCluster, SHAPES, writeBundle, type Cluster, type Mode } from '../../src/generate/index.js';
import { MIGRATION_RULES, LINT_RULES, RULES } from '../../src/lint/index.js';
import type { Finding } from '../../src/lint/rule.js';
import { lintSnapshot } from '../../src/lint/run.js';
import { migrateCheckAction } from '../../src/cli/commands/migrate-check.js';
import { lineOf, replaceOnce, snapshotOf } from './helpers.js';
import { unwrappedText } from '../helpers/columns.js';

// What the text says, line by line: lines whole (the layout is test/render/width.test.ts's).
unwrappedText();

const tmp = mkdtempSync(join(tmpdir(), 'kpx-migrate-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The generator's node bundle for a mode, as file name → text (truth and load forms left out). */
function bundleFiles(c: Cluster, mode: Mode): Record<string, string> {
  const dir = join(tmp, `${mode}-${c.seed}-${c.family}`);
  writeBundle(c, mode, dir);
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir)) if (!['truth.json', 'ipset-save.txt', 'nft-script.nft'].includes(f)) out[f] = readFileSync(join(dir, f), 'utf8');
  return out;
}

async function check(files: Record<string, string>, nodeIps: string[] = []) {
  return lintSnapshot(await snapshotOf(files, nodeIps), { rules: MIGRATION_RULES });
}

const of = (fs: readonly Finding[], id: string) => fs.filter((f) => f.ruleId === id);
const errors = (fs: readonly Finding[]) => fs.filter((f) => f.severity === 'error');

/** A second NIC, after the last interface of a generated `ip addr` (constructed: a node with two networks). */
function withEth1(ipAddr: string, address: string): string {
  const index = Math.max(...[...ipAddr.matchAll(/^(\d+): /gm)].map((m) => Number(m[1]))) + 1;
  return `${ipAddr.replace(/\n?$/, '\n')}${index}: eth1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP group default qlen 1000\n    link/ether 02:00:00:00:50:0a brd ff:ff:ff:ff:ff:ff\n    inet ${address}/24 brd 192.168.50.255 scope global eth1\n       valid_lft forever preferred_lft forever\n`;
}

const cluster = generateCluster({ seed: 3, services: SHAPES.length + 10 });
const nodePortCount = new Set(cluster.services.flatMap((s) => s.ports.filter((p) => p.nodePort !== null).map((p) => `${p.protocol}/${p.nodePort}`))).size;

describe('the migration rules are lint rules of their own category', () => {
  it('lint does not run them, migrate-check runs only them; the catalogue has both', () => {
    expect(MIGRATION_RULES.map((r) => r.id).sort()).toEqual([
      'migrate-ct-invalid-drop',
      'migrate-foreign-kube-references',
      'migrate-ipvs-bound-vips',
      'migrate-ipvs-persistence',
      'migrate-ipvs-scheduling',
      'migrate-localhost-nodeports',
      'migrate-nftables-requirements',
      'migrate-nftables-scale',
      'migrate-nodeport-addresses',
      'migrate-unchanged',
    ]);
    expect(LINT_RULES.some((r) => r.id.startsWith('migrate-'))).toBe(false);
    expect(LINT_RULES.length + MIGRATION_RULES.length).toBe(RULES.length);
    // Each cites where its claim comes from.
    for (const r of MIGRATION_RULES) expect(r.meta.docs, r.id).toMatch(/kubernetes\.io|KEP-3866|proxier\.go|supported\.go|kubernetes#\d+|PR #\d+/);
  });
});

describe('migrate-check on a generated iptables-mode node', () => {
  const plain = bundleFiles(cluster, 'iptables');
  const ipt = plain['iptables-save.txt'];

  it('a plain node: no error finding; the INVALID drop and the one-line summary of what stays', async () => {
    const r = await check(plain);
    expect(errors(r.findings)).toEqual([]);
    const drop = of(r.findings, 'migrate-ct-invalid-drop');
    expect(drop.map((f) => [f.file.split('/').pop(), f.line, f.text])).toEqual([['iptables-save.txt', lineOf(ipt, '--ctstate INVALID -j DROP'), '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP']]);
    expect(of(r.findings, 'migrate-unchanged').map((f) => f.message)).toEqual([expect.stringMatching(/^\d+ Service ports keep their addresses, ports, NodePorts, endpoints/)]);
    expect(of(r.findings, 'migrate-nftables-scale').length).toBe(1);
    // No uname: the version check is not run, and says so.
    expect(r.skipped.map((s) => s.ruleId)).toContain('migrate-nftables-requirements');
  });

  it('localhost NodePorts (route_localnet=1): one finding per NodePort, at its KUBE-NODEPORTS rule, with the dispatch rule and the sysctl', async () => {
    const sysctl = 'net.ipv4.conf.all.forwarding = 1\nnet.ipv4.conf.all.route_localnet = 1\n';
    const r = await check({ ...plain, 'sysctl.txt': sysctl });
    const f = of(r.findings, 'migrate-localhost-nodeports');
    expect(f.length).toBe(cluster.services.flatMap((s) => s.ports.filter((p) => p.nodePort !== null)).length);
    const np = cluster.services.find((s) => s.name === 'nodeport')!.ports[0].nodePort!;
    const one = f.find((x) => x.service === 'shapes/nodeport:http')!;
    expect(one.message).toContain(`127.0.0.1:${np}/tcp reaches shapes/nodeport:http today`);
    expect(one.message).toContain('route_localnet=1');
    expect([one.line, one.text]).toEqual([lineOf(ipt, `--dport ${np} -j KUBE-EXT-`), ipt.split('\n')[lineOf(ipt, `--dport ${np} -j KUBE-EXT-`) - 1]]);
    expect(one.related!.map((x) => [x.file.split('/').pop(), x.line])).toEqual([
      ['iptables-save.txt', lineOf(ipt, '-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS')],
      ['sysctl.txt', 2],
    ]);
  });

  it('route_localnet off: localhost NodePorts do not work today either, nothing to report', async () => {
    const r = await check({ ...plain, 'sysctl.txt': 'net.ipv4.conf.all.route_localnet = 0\n' });
    expect(of(r.findings, 'migrate-localhost-nodeports')).toEqual([]);
  });

  it('a second address (eth1): named with its NodePorts, at its ip addr line; the primary given or assumed', async () => {
    const ipAddr = withEth1(plain['ip-addr.txt'], '192.168.50.10');
    const assumed = await check({ ...plain, 'ip-addr.txt': ipAddr });
    const f = of(assumed.findings, 'migrate-nodeport-addresses').filter((x) => x.severity === 'warning');
    expect(f.length).toBe(1);
    expect([f[0].file.split('/').pop(), f[0].line]).toEqual(['ip-addr.txt', lineOf(ipAddr, 'inet 192.168.50.10/24')]);
    expect(f[0].message).toMatch(/answer on 192\.168\.50\.10 \(eth1\) today; nftables mode serves them only on the primary address 172\.18\.0\.\d+ \(assumed: /);
    expect(f[0].message).toContain('set nodePortAddresses to include 192.168.50.0/24');
    expect(f[0].message).toContain(`and ${nodePortCount - 5} more`);
    expect(f[0].related![0].line).toBe(lineOf(ipt, '-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS'));
    // The pod network's own addresses (cni0, flannel.1) are info, not warnings.
    expect(of(assumed.findings, 'migrate-nodeport-addresses').filter((x) => x.severity === 'info').map((x) => x.text).sort()).toEqual(['cni0: 10.244.1.1/24', 'flannel.1: 10.244.1.0/32']);
    // --node-ip says which is primary: eth1 is, so eth0 is the one that loses its NodePorts.
    const given = await check({ ...plain, 'ip-addr.txt': ipAddr }, ['192.168.50.10']);
    const g = of(given.findings, 'migrate-nodeport-addresses').filter((x) => x.severity === 'warning');
    expect(g.map((x) => x.text)).toEqual([expect.stringMatching(/^eth0: 172\.18\.0\.\d+\/16$/)]);
    expect(g[0].message).toContain('primary address 192.168.50.10 (given with --node-ip)');
  });

  it('an explicit nodePortAddresses in kube-proxy\'s configuration is kept by nftables mode: nothing to report', async () => {
    const config = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: iptables\nnodePortAddresses:\n- 0.0.0.0/0\n';
    const r = await check({ ...plain, 'ip-addr.txt': withEth1(plain['ip-addr.txt'], '192.168.50.10'), 'kube-proxy-config.yaml': config });
    expect(of(r.findings, 'migrate-nodeport-addresses')).toEqual([]);
  });

  it("rules outside kube-proxy's chains that use them: each at its line (constructed: a hostport chain, a custom LB chain)", async () => {
    let text = replaceOnce(ipt, ':KUBE-MARK-MASQ - [0:0]\n', ':KUBE-MARK-MASQ - [0:0]\n:CNI-HOSTPORT-SETMARK - [0:0]\n:MY-LB - [0:0]\n');
    text = replaceOnce(text, '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING\n', '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING\n-A PREROUTING -d 192.0.2.10/32 -j MY-LB\n-A CNI-HOSTPORT-SETMARK -m comment --comment "CNI portfwd masquerade mark" -j KUBE-MARK-MASQ\n-A MY-LB -p tcp -m tcp --dport 80 -j KUBE-SERVICES\n');
    const r = await check({ ...plain, 'iptables-save.txt': text });
    const f = of(r.findings, 'migrate-foreign-kube-references');
    expect(f.map((x) => [x.line, x.text, x.severity])).toEqual([
      [lineOf(text, '-A CNI-HOSTPORT-SETMARK -m comment'), '-A CNI-HOSTPORT-SETMARK -m comment --comment "CNI portfwd masquerade mark" -j KUBE-MARK-MASQ', 'error'],
      [lineOf(text, '-A MY-LB -p tcp'), '-A MY-LB -p tcp -m tcp --dport 80 -j KUBE-SERVICES', 'error'],
    ]);
    expect(f[0].message).toBe("nat/CNI-HOSTPORT-SETMARK (cni-plugins) jumps to kube-proxy's KUBE-MARK-MASQ: nftables mode removes that chain");
    // kube-proxy's own jumps from the built-in chains and the kubelet's KUBE-FIREWALL are not flagged.
    expect(f.some((x) => /kubernetes service portals|KUBE-FIREWALL/.test(x.text ?? ''))).toBe(false);
  });

  it('a kernel older than 5.13 is an error; 6.1 is info; the nft version from nft -j metainfo', async () => {
    const old = await check({ ...plain, 'uname.txt': 'Linux node-1 5.10.0-28-amd64 #1 SMP Debian 5.10.209-2 (2024-01-31) x86_64 GNU/Linux\n' });
    const k = of(old.findings, 'migrate-nftables-requirements');
    expect(k.map((x) => [x.severity, x.message, x.line])).toEqual([
      ['info', "the host's nft version is not in these dumps (only `nft -j list ruleset` says it): nftables mode needs 1.0.1 or later", 0],
      ['error', 'kernel 5.10.0-28-amd64 is older than 5.13: kube-proxy will not start in nftables mode ("requires kernel 5.13 or later")', 1],
    ]);
    expect(k[1].file.split('/').pop()).toBe('uname.txt');
    const json = '{"nftables": [{"metainfo": {"version": "0.9.8", "release_name": "E.D.S.", "json_schema_version": 1}}, {"table": {"family": "ip", "name": "filter", "handle": 1}}]}\n';
    const ok = await check({ ...plain, 'uname.txt': 'Linux node-1 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01) x86_64 GNU/Linux\n', 'nft.json': json });
    // (Findings sort by file: nft.json before uname.txt.)
    expect(of(ok.findings, 'migrate-nftables-requirements').map((x) => [x.severity, x.message, x.file.split('/').pop(), x.line])).toEqual([
      ['error', "nft 0.9.8 on the host is older than 1.0.1: kube-proxy's nftables rules can break the host's own nft", 'nft.json', 1],
      ['info', "kernel 6.1.0-18-amd64 meets nftables mode's 5.13 or later", 'uname.txt', 1],
    ]);
  });
});

describe('migrate-check on a generated IPVS-mode node', () => {
  const plain = bundleFiles(cluster, 'ipvs');
  const ipvsadm = plain['ipvsadm-Ln.txt'];

  it('a plain node: no error finding; kube-ipvs0 addresses and persistence named', async () => {
    const r = await check(plain);
    expect(errors(r.findings)).toEqual([]);
    const vips = of(r.findings, 'migrate-ipvs-bound-vips');
    expect(vips.length).toBe(1);
    expect([vips[0].line, vips[0].text]).toEqual([lineOf(plain['ip-addr.txt'], ': kube-ipvs0:'), expect.stringMatching(/^\d+: kube-ipvs0$/)]);
    expect(vips[0].related!.length).toBe(5);
    // Persistence: one finding per Service port with affinity, at its first persistent virtual server.
    const aff = of(r.findings, 'migrate-ipvs-persistence');
    const affinityPorts = cluster.services.filter((s) => s.sessionAffinity).flatMap((s) => s.ports.filter((p) => p.endpoints.length > 0));
    expect(aff.length).toBe(affinityPorts.length);
    for (const f of aff) expect(ipvsadm.split('\n')[f.line - 1]).toMatch(/ rr\s+persistent \d+/);
    expect(of(r.findings, 'migrate-localhost-nodeports')).toEqual([]); // IPVS serves no localhost NodePorts either
  });

  it('a scheduler other than rr, and unequal weights under wrr (constructed edits of ipvsadm -Ln)', async () => {
    const svc = cluster.services.find((s) => s.name === 'three-endpoints')!;
    const seven = cluster.services.find((s) => s.name === 'seven-endpoints')!;
    let text = replaceOnce(ipvsadm, `TCP  ${svc.clusterIP}:80 rr\n`, `TCP  ${svc.clusterIP}:80 lc\n`);
    const vsLine = `TCP  ${seven.clusterIP}:80 rr\n`;
    const i = text.indexOf(vsLine);
    const next = text.indexOf('\n', i + vsLine.length) + 1; // the first real server line
    text = `${text.slice(0, i)}TCP  ${seven.clusterIP}:80 wrr\n${text.slice(i + vsLine.length, next).replace(/(Masq\s+)1(\s)/, (_m, a: string, b: string) => `${a}3${b}`)}${text.slice(next)}`;
    const r = await check({ ...plain, 'ipvsadm-Ln.txt': text });
    const f = of(r.findings, 'migrate-ipvs-scheduling');
    expect(f.map((x) => [x.line, x.message])).toEqual([
      [lineOf(text, `TCP  ${seven.clusterIP}:80 wrr`), `TCP  ${seven.clusterIP}:80 wrr (wrr) weighs its real servers 3/1/1/1/1/1/1; nftables mode gives every endpoint an equal share`],
      [lineOf(text, `TCP  ${svc.clusterIP}:80 lc`), `TCP  ${svc.clusterIP}:80 lc uses the lc scheduler; nftables mode picks among the 3 endpoint(s) at random, equal shares`],
    ].sort((a, b) => (a[0] as number) - (b[0] as number)));
  });

  it('a NodePort virtual server on a second address, a foreign rule matching kube-proxy\'s ipset, the INVALID drop, an old kernel', async () => {
    const np = cluster.services.find((s) => s.name === 'nodeport')!.ports[0];
    const ipAddr = withEth1(plain['ip-addr.txt'], '192.168.50.10');
    const rs = np.endpoints.map((e) => `  -> ${`${e.ip}:${e.port}`.padEnd(28)}Masq    1      0          0         `).join('\n');
    const text = `${ipvsadm.replace(/\n?$/, '\n')}TCP  192.168.50.10:${np.nodePort} rr\n${rs}\n`;
    let ipt = replaceOnce(plain['iptables-save.txt'], '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD\n', '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD\n-A FORWARD -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT\n');
    // kube-proxy's IPVS mode writes the INVALID drop too (the generator's IPVS dump leaves it out: added here).
    const fwd = ipt.indexOf('\n-A KUBE-FORWARD ') + 1;
    ipt = `${ipt.slice(0, fwd)}-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP\n${ipt.slice(fwd)}`;
    const r = await check({ ...plain, 'ip-addr.txt': ipAddr, 'ipvsadm-Ln.txt': text, 'iptables-save.txt': ipt, 'uname.txt': '5.4.0-150-generic\n' });
    expect(of(r.findings, 'migrate-ct-invalid-drop').map((x) => x.line)).toEqual([lineOf(ipt, '--ctstate INVALID -j DROP')]);
    expect(of(r.findings, 'migrate-nftables-requirements').filter((x) => x.severity === 'error').map((x) => x.message)).toEqual([expect.stringMatching(/^kernel 5\.4\.0-150-generic is older than 5\.13/)]);
    const f = of(r.findings, 'migrate-nodeport-addresses').filter((x) => x.severity === 'warning');
    expect(f.map((x) => x.text)).toEqual(['eth1: 192.168.50.10/24']);
    expect(f[0].message).toContain(`NodePorts ${np.nodePort}/tcp (`);
    expect(f[0].related![0]).toMatchObject({ line: lineOf(text, `TCP  192.168.50.10:${np.nodePort} rr`) });
    const refs = of(r.findings, 'migrate-foreign-kube-references');
    expect(refs.map((x) => [x.line, x.message])).toEqual([[lineOf(ipt, '-A FORWARD -m set --match-set KUBE-CLUSTER-IP'), "filter/FORWARD (unknown) matches kube-proxy's ipset KUBE-CLUSTER-IP: nftables mode removes that set"]]);
  });
});

describe('migrate-check on a node already in nftables mode', () => {
  it('says so, and reports no trap; the version and scale checks still run', async () => {
    const r = await check({ ...bundleFiles(cluster, 'nftables'), 'uname.txt': 'Linux k8s-worker 6.8.0-45-generic #45-Ubuntu SMP x86_64 GNU/Linux\n' });
    expect(r.findings.filter((f) => f.severity !== 'info')).toEqual([]);
    expect(of(r.findings, 'migrate-unchanged').map((f) => f.message)).toEqual(['this node already runs kube-proxy in nftables mode: nothing to migrate']);
    expect(of(r.findings, 'migrate-nftables-requirements').map((f) => f.message)).toContain("kernel 6.8.0-45-generic meets nftables mode's 5.13 or later");
    expect(of(r.findings, 'migrate-nftables-scale').length).toBe(1);
  });
});

describe('the command', () => {
  async function run(inputs: string[], opts: Record<string, unknown>): Promise<{ code: number; out: string }> {
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => (out.push(String(s)), true));
    try {
      const code = await migrateCheckAction(inputs, { output: 'text', failOn: 'error', color: false, ...opts } as never);
      return { code, out: out.join('') };
    } finally {
      spy.mockRestore();
    }
  }
  const dir = join(tmp, 'cmd');
  writeBundle(cluster, 'iptables', dir);
  rmSync(join(dir, 'truth.json'));

  it('answers first, then the findings; exit 0 below --fail-on, 1 at it', async () => {
    const t = await run([dir], {});
    expect(t.code).toBe(0);
    expect(t.out.split('\n')[0]).toMatch(/^kube-proxy iptables mode → nftables: \d+ things will behave differently \(0 errors, \d+ warnings\)/);
    expect(t.out).toContain('[migrate-ct-invalid-drop]');
    expect((await run([dir], { failOn: 'warning' })).code).toBe(1);
  });

  it('JSON and SARIF, and a baseline of the JSON hides what it holds', async () => {
    const j = JSON.parse((await run([dir], { output: 'json' })).out) as { schemaVersion: number; findings: Finding[] };
    expect(j.findings.every((f) => f.ruleId.startsWith('migrate-'))).toBe(true);
    expect(j.findings.length).toBeGreaterThan(3);
    const s = JSON.parse((await run([dir], { output: 'sarif' })).out) as { runs: { tool: { driver: { rules: { id: string }[] } }; results: unknown[] }[] };
    expect(s.runs[0].tool.driver.rules.every((r) => r.id.startsWith('kpx/migrate-'))).toBe(true);
    expect(s.runs[0].results.length).toBe(j.findings.length);
    const { writeFileSync } = await import('node:fs');
    const base = join(tmp, 'baseline.json');
    writeFileSync(base, JSON.stringify(j));
    const again = JSON.parse((await run([dir], { output: 'json', baseline: base })).out) as { findings: Finding[] };
    expect(again.findings).toEqual([]);
  });

  it('--list-rules lists the migration checks only', async () => {
    const { out, code } = await run([], { listRules: true });
    expect(code).toBe(0);
    expect(out.split('\n').filter(Boolean).map((l) => l.split(/\s+/)[0]).sort()).toEqual(MIGRATION_RULES.map((r) => r.id).sort());
  });

  it('refuses another target mode and lint rule ids', async () => {
    await expect(run([dir], { to: 'ipvs' })).rejects.toThrow(/only nftables/);
    await expect(run([dir], { rule: ['shadowed-rule'] })).rejects.toThrow(/unknown rule shadowed-rule \(kpx migrate-check --list-rules/);
  });
});
