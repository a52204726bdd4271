/**
 * The real iptables-restore (and nft) reject a generated kube-proxy payload with one bad rule (a
 * jump to a chain that does not exist) inside a throw-away namespace; the tool's own error, wrapped
 * as kube-proxy logs it, is read by kpx, which names the exact payload line and its Service.
 */
import { describe, expect, it } from 'vitest';
import { generateCluster, iptablesSave, nftScript } from '../../src/generate/index.js';
import { requireKernel, withNetns } from '../helpers/netns.js';
import { kubeProxyLogOf, natPayloadWithBadRule } from '../helpers/kube-proxy-payload.js';
import { lintFiles, of } from '../lint/helpers.js';
import { extractKubeProxyLog } from '../../src/extract/kube-proxy-log.js';

const canRun = requireKernel();

describe.runIf(canRun)('kube-proxy sync failure from the real iptables-restore', () => {
  it('names the payload line the tool rejected and its Service', async () => {
    const save = iptablesSave(generateCluster({ seed: 7, services: 12 }));
    const payload = natPayloadWithBadRule(save);
    const result = await withNetns('kprest', (ns) => ns.run('iptables-restore', ['--noflush'], payload.lines.join('\n') + '\n'));
    expect(result.status).not.toBe(0);
    const toolError = result.stderr;
    const log = kubeProxyLogOf(payload.lines, toolError, result.status);

    const [failure] = extractKubeProxyLog(log, 'kube-proxy.log').data.events.filter((e) => e.kind === 'sync-failed');
    // The tool names a line: the bad rule's, or (nf_tables backend, errors found at commit) the table's
    // COMMIT, whose message then names the missing chain; either way kpx must land on the bad rule.
    const named = Number(/line:? (\d+)/.exec(toolError)?.[1]);
    expect(failure, toolError).toMatchObject({ tool: 'iptables-restore', exitStatus: result.status, failingLine: named, rejected: { line: payload.badLine } });

    const lint = await lintFiles({ 'kube-proxy.log': log, 'iptables-save.txt': save });
    const [f] = of(lint, 'kube-proxy-sync-failing');
    expect(f.service).toBe(payload.service);
    expect(f.message).toContain(`payload line ${payload.badLine}: \`${payload.lines[payload.badLine - 1]}\``);
    expect(f.message).toContain(`(Service ${payload.service})`);
    expect(f.message).toContain(toolError.trim().split('\n')[0].slice(0, 40));
    // The evidence points at the log line that holds the bad payload line (header, rules=< , then the payload).
    expect(f.related?.[0]).toMatchObject({ file: 'kube-proxy.log', line: 2 + payload.badLine, text: payload.lines[payload.badLine - 1] });
  });
});

describe.runIf(canRun)('kube-proxy sync failure from the real nft', () => {
  it("reads nft's own error echo: the transaction line, the chain, its Service, the underlined text", async () => {
    const script = nftScript(generateCluster({ seed: 7, services: 12 })).split('\n');
    // One bad rule in a Service chain: a jump to a chain that does not exist (nft rejects the whole transaction).
    const at = script.findIndex((l) => /^add rule ip kube-proxy service-[A-Z0-9]{8}-/.test(l));
    const chain = script[at].split(' ')[4];
    const bad = `add rule ip kube-proxy ${chain} ip daddr 10.0.0.1 jump missing-chain`;
    script.splice(at, 0, bad);
    const result = await withNetns('kpnft', (ns) => ns.run('nft', ['-f', '-'], script.join('\n')));
    expect(result.status).not.toBe(0);
    const echo = result.stderr.trimEnd().split('\n');
    const log = ['E0312 14:02:11.118202       1 proxier.go:1800] "nftables sync failed" err=<', ...echo.map((l) => `\t${l}`), ' >', ''].join('\n');

    const [failure] = extractKubeProxyLog(log, 'kube-proxy.log').data.events.filter((e) => e.kind === 'sync-failed');
    expect(failure, result.stderr).toMatchObject({ tool: 'nft', failingLine: at + 1, nft: { line: at + 1, chain, underlined: 'missing-chain', fileLine: 2 } });

    const [f] = of(await lintFiles({ 'kube-proxy.log': log }), 'kube-proxy-sync-failing');
    const m = /^service-[A-Z0-9]{8}-([^/]+)\/([^/]+)\/\w+\/(.*)$/.exec(chain)!;
    expect(f.service).toBe(`${m[1]}/${m[2]}:${m[3]}`);
    expect(f.message).toContain(`nft rejected transaction line ${at + 1} in chain ${chain} at \`missing-chain\``);
  });

  it('a map element whose verdict chain does not exist: the Service is read from the element, with the nft grammar', async () => {
    const script = nftScript(generateCluster({ seed: 7, services: 12 })).split('\n');
    const at = script.findIndex((l) => /^add element ip kube-proxy service-ips /.test(l));
    const bad = 'add element ip kube-proxy service-ips { 10.96.99.99 . udp . 53 : goto service-ABCDEFGH-team/dns-cache/udp/dns }';
    script.splice(at + 1, 0, bad);
    const result = await withNetns('kpnfte', (ns) => ns.run('nft', ['-f', '-'], script.join('\n')));
    expect(result.status).not.toBe(0);
    const log = ['E0312 14:02:11.118202       1 proxier.go:1800] "nftables sync failed" err=<', ...result.stderr.trimEnd().split('\n').map((l) => `\t${l}`), ' >', ''].join('\n');
    const [failure] = extractKubeProxyLog(log, 'kube-proxy.log').data.events.filter((e) => e.kind === 'sync-failed');
    expect(failure, result.stderr).toMatchObject({
      tool: 'nft',
      failingLine: at + 2,
      nft: { line: at + 2, verb: 'add', object: 'element', table: 'kube-proxy', set: 'service-ips', targets: ['service-ABCDEFGH-team/dns-cache/udp/dns'] },
    });
    const [f] = of(await lintFiles({ 'kube-proxy.log': log }), 'kube-proxy-sync-failing');
    expect(f.service).toBe('team/dns-cache:dns');
    expect(f.message).toContain(`nft rejected transaction line ${at + 2} in set service-ips`);
  });

  it('an expression the kernel refuses (meta ibrname outside the bridge family): the statement under the carets is named', async () => {
    const script = nftScript(generateCluster({ seed: 7, services: 12 })).split('\n');
    const at = script.findIndex((l) => /^add rule ip kube-proxy service-[A-Z0-9]{8}-/.test(l));
    const chain = script[at].split(' ')[4];
    // nft accepts the syntax; the kernel's nft_meta refuses the bridge-port key in an ip table (EOPNOTSUPP).
    script.splice(at, 0, `add rule ip kube-proxy ${chain} meta ibrname "cni0" counter`);
    const result = await withNetns('kpnftx', (ns) => ns.run('nft', ['-f', '-'], script.join('\n')));
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/Could not process rule: Operation not supported/);
    const log = ['E0312 14:02:11.118202       1 proxier.go:1800] "nftables sync failed" err=<', ...result.stderr.trimEnd().split('\n').map((l) => `\t${l}`), ' >', ''].join('\n');
    const [failure] = extractKubeProxyLog(log, 'kube-proxy.log').data.events.filter((e) => e.kind === 'sync-failed');
    expect(failure, result.stderr).toMatchObject({ tool: 'nft', nft: { line: at + 1, object: 'rule', chain, expression: { kind: 'match', text: 'meta ibrname "cni0"' } } });
    const [f] = of(await lintFiles({ 'kube-proxy.log': log }), 'kube-proxy-sync-failing');
    const m = /^service-[A-Z0-9]{8}-([^/]+)\/([^/]+)\/\w+\/(.*)$/.exec(chain)!;
    expect(f.service).toBe(m[3] ? `${m[1]}/${m[2]}:${m[3]}` : `${m[1]}/${m[2]}`);
  });
});
