/**
 * `kpx collect` on a live node: inside a namespace this test builds (interfaces, addresses,
 * routes, ipsets, iptables and nft rules), `ip netns exec NS kpx collect -o DIR` writes a bundle
 * that kpx loads back with the same facts; with no input, a command collects by itself.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requireKernel, withNetns } from '../helpers/netns.js';
import { BIN } from '../helpers/exec.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { proxyModes } from '../../src/kube/modes.js';
import { resolveServices } from '../../src/kube/resolve.js';

const kernel = requireKernel();
const tmp = mkdtempSync(join(tmpdir(), 'kpx-collect-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// Hand-written kube-proxy-shaped rules for one Service with one endpoint (labelled: not a real node).
const RULES = `*nat
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]
:KUBE-SEP-6E7XQMQ4RAYOWTTM - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.3:53" -j KUBE-SEP-6E7XQMQ4RAYOWTTM
-A KUBE-SEP-6E7XQMQ4RAYOWTTM -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.3:53
COMMIT
`;

function setUp(ns: { exec(cmd: string, args: readonly string[], input?: string): string }) {
  ns.exec('ip', ['link', 'add', 'cni0', 'type', 'bridge']);
  ns.exec('ip', ['addr', 'add', '10.244.0.1/24', 'dev', 'cni0']);
  ns.exec('ip', ['link', 'set', 'cni0', 'up']);
  ns.exec('ip', ['link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth0p']);
  ns.exec('ip', ['addr', 'add', '172.18.0.3/16', 'dev', 'eth0']);
  ns.exec('ip', ['link', 'set', 'eth0', 'up']);
  ns.exec('ip', ['route', 'add', '10.244.1.0/24', 'via', '172.18.0.4', 'dev', 'eth0', 'onlink']);
  ns.exec('ipset', ['create', 'KUBE-CLUSTER-IP', 'hash:ip,port']);
  ns.exec('ipset', ['add', 'KUBE-CLUSTER-IP', '10.96.0.10,udp:53']);
  ns.exec('iptables-restore', [], RULES);
  ns.exec('nft', ['-f', '-'], 'table inet kpxtest {\n  chain input {\n    type filter hook input priority 0; policy accept;\n    tcp dport 22 accept\n  }\n}\n');
}

describe.runIf(kernel)('kpx collect', () => {
  it('writes a bundle inside a namespace that kpx loads back with the same facts', async () => {
    const out = join(tmp, 'bundle');
    await withNetns('collect', (ns) => {
      setUp(ns);
      ns.exec(process.execPath, [BIN, 'collect', '-o', out]);
    });
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    expect(manifest.kind).toBe('kpx-bundle');
    const byFile = Object.fromEntries(manifest.steps.map((s: { file: string; status: string }) => [s.file, s.status]));
    expect(byFile).toMatchObject({ 'iptables-save.txt': 'ok', 'ipset-list.txt': 'ok', 'ip-route.txt': 'ok', 'ip-addr.txt': 'ok', 'nft-ruleset.txt': 'ok', 'sysctl.txt': 'ok' });
    expect(existsSync(join(out, 'ipvsadm-Ln.txt'))).toBe(false);

    const snap = await loadSnapshot([out]);
    expect(snap.files.filter((f) => f.diagnostics.some((d) => d.severity === 'error'))).toEqual([]);
    expect(snap.files.map((f) => f.format)).toEqual(expect.arrayContaining(['iptables-save', 'ipset-list', 'ip-route', 'ip-addr', 'nft', 'sysctl']));
    expect(snap.ipsetsByName.get('KUBE-CLUSTER-IP')?.members.map((m) => m.text)).toEqual(['10.96.0.10,udp:53']);
    expect(snap.interfaces.find((i) => i.name === 'cni0')?.addresses.filter((a) => a.family === 4).map((a) => a.address)).toEqual(['10.244.0.1']);
    expect(snap.routes.find((r) => r.dstText === '10.244.1.0/24')).toMatchObject({ dev: 'eth0', via: { address: '172.18.0.4' }, flags: ['onlink', 'linkdown'] }); // the veth's peer is down: the kernel says so
    expect(snap.sysctls.get('net.ipv4.ip_forward')?.value).toMatch(/^[01]$/);
    // The switches the trace reads: every sysctl (per interface too), link details, the kernel release.
    expect(manifest.steps.find((s: { file: string }) => s.file === 'sysctl.txt')).toMatchObject({ command: 'sysctl -a', status: 'ok' });
    expect(byFile).toMatchObject({ 'ip-link.txt': 'ok', 'uname.txt': 'ok' });
    expect(snap.sysctls.get('net.ipv4.conf.cni0.rp_filter')?.value).toMatch(/^[012]$/);
    expect(snap.interfaces.find((i) => i.name === 'cni0')?.linkInfo?.kind).toBe('bridge');
    expect(snap.interfaces.find((i) => i.name === 'eth0')?.linkInfo?.kind).toBe('veth');
    expect(snap.kernel?.release).toBe(execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim());
    expect(snap.nft.flatMap((n) => n.tables).find((t) => t.name === 'kpxtest')).toMatchObject({ family: 'inet', fromIptablesNft: false });
    expect(proxyModes(snap)).toEqual(['iptables', 'ipvs']); // KUBE-CLUSTER-IP marks the ipvs mode too
    const res = await resolveServices(snap);
    expect(res.services.find((s) => s.id === 'kube-system/kube-dns:dns/udp')?.endpoints.map((e) => [e.ip, e.local])).toEqual([['10.244.0.3', true]]);
  });

  it('collects from the live node when a command is given no input', async () => {
    await withNetns('live', (ns) => {
      setUp(ns);
      const r = ns.run(process.execPath, [BIN, 'services', '-o', 'json']);
      expect(r.status).toBe(0);
      const j = JSON.parse(r.stdout);
      expect(j.services.map((s: { id: string }) => s.id)).toContain('kube-system/kube-dns:dns/udp');
      const t = ns.run(process.execPath, [BIN, 'trace', '10.96.0.10:53/udp', '-o', 'json']);
      expect(JSON.parse(t.stdout).traces[0].outcomes.map((o: { destination: string }) => o.destination)).toEqual(['10.244.0.3:53']);
    });
  });

  it('SIGINT during collect leaves a bundle marked incomplete, which every command reads as partial', async () => {
    const out = join(tmp, 'interrupted');
    await withNetns('sigint', async (ns) => {
      setUp(ns);
      const child = spawn('ip', ['netns', 'exec', ns.name, process.execPath, BIN, 'collect', '-o', out], { stdio: 'ignore' });
      const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
      // Interrupt once a dump is written (the manifest, marked incomplete, comes first).
      for (let i = 0; i < 2000 && !(existsSync(join(out, 'manifest.json')) && readdirSync(out).length > 2); i++) await new Promise((r) => setTimeout(r, 5));
      const manifestBefore = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
      expect(manifestBefore.incomplete).toBeDefined();
      child.kill('SIGINT');
      expect(await exited).toBe(130);
    });
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    expect(manifest.incomplete).toMatch(/^interrupted by SIGINT after \d+ steps/);
    const r = spawnSync(process.execPath, [BIN, 'inspect', out, '-o', 'json'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    const files = JSON.parse(r.stdout).files as { path: string; diagnostics: { code: string }[] }[];
    expect(files.find((f) => f.path === join(out, 'manifest.json'))!.diagnostics.map((d) => d.code)).toContain('collect/incomplete');
  });
});
