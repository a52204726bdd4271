import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { extractKubeProxyLog } from '../../src/extract/kube-proxy-log.js';
import { extractKubeProxyConfig } from '../../src/extract/kube-proxy-config.js';
import { sniff } from '../../src/load/registry.js';
import { splitInput } from '../../grammars/common/text.js';
import type { KubeProxyEvent } from '../../src/model/kube-proxy.js';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'kube-proxy');
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');
const ofKind = <K extends KubeProxyEvent['kind']>(events: readonly KubeProxyEvent[], kind: K) => events.filter((e): e is Extract<KubeProxyEvent, { kind: K }> => e.kind === kind);

describe('real public pastes (test/fixtures/kube-proxy, each with a .source)', () => {
  const files = readdirSync(DIR).filter((f) => !f.endsWith('.source'));
  it('every fixture has its .source', () => {
    for (const f of files) expect(readdirSync(DIR)).toContain(f.replace(/\.[^.]+$/, '.source'));
  });
  for (const f of files) {
    it(`${f}: recognised by content and read with no error diagnostics`, () => {
      const text = read(f);
      const id = sniff(splitInput(text).lines.slice(0, 200))?.id;
      expect(id).toBe(f.endsWith('.log') ? 'kube-proxy-log' : 'kube-proxy-config');
      const parsed = id === 'kube-proxy-log' ? extractKubeProxyLog(text, f) : extractKubeProxyConfig(text, f);
      expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    });
  }

  it('klog text: each failure with its time, tool, exit status and failing line; each retry', () => {
    const log = extractKubeProxyLog(read('klog-sync-failed.log'), 'f').data;
    const failed = ofKind(log.events, 'sync-failed');
    expect(failed.map((e) => e.failingLine)).toEqual([51, 53, 53, 52, 52]);
    expect(failed.every((e) => e.tool === 'iptables-restore' && e.exitStatus === 1 && e.family === 4)).toBe(true);
    expect(failed[0].at).toMatchObject({ line: 1, endLine: 2, time: '0809 05:37:21.484590', level: 'E' });
    expect(ofKind(log.events, 'sync-retry').map((e) => e.retryIn)).toEqual(['30s', '30s', '30s', '30s', '30s']);
  });

  it('journald + structured klog: the err=< block is the tool output (ip6tables-restore, IPv6, line 11)', () => {
    const log = extractKubeProxyLog(read('journald-structured-err.log'), 'f').data;
    const [e] = ofKind(log.events, 'sync-failed');
    expect(e).toMatchObject({ tool: 'ip6tables-restore', family: 6, exitStatus: 2, failingLine: 11, at: { pid: 9234, line: 1, endLine: 4 } });
    expect(e.output).toContain('unknown option "--xor-mark"');
  });

  it('journald old-style multi-line message: continuation lines carry the failing line', () => {
    const log = extractKubeProxyLog(read('journald-multiline.log'), 'f').data;
    const [e] = ofKind(log.events, 'sync-failed');
    expect(e).toMatchObject({ exitStatus: 2, failingLine: 141, at: { line: 1, endLine: 4 } });
    expect(ofKind(log.events, 'sync-retry')).toHaveLength(1);
  });

  it('a pasted payload tail without its start gives no payload (its line numbers cannot be counted)', () => {
    const parsed = extractKubeProxyLog(read('journald-payload.log'), 'f');
    expect(parsed.data.payloads).toEqual([]);
    const [e] = ofKind(parsed.data.events, 'sync-failed');
    expect(e).toMatchObject({ failingLine: 33, exitStatus: 2 });
    expect(e.payload).toBeUndefined();
    expect(parsed.diagnostics.filter((d) => d.code === 'input/before-first-entry').map((d) => d.line)).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it('logrus lines, module failure, config warnings and the proxier chosen', () => {
    const log = extractKubeProxyLog(read('kubectl-logs-logrus.log'), 'f').data;
    expect(ofKind(log.events, 'module-load-failed')[0]).toMatchObject({ module: 'ip_vs' });
    expect(ofKind(log.events, 'config-warning').map((e) => e.field)).toEqual(['mode', 'clusterCIDR']);
    expect(ofKind(log.events, 'proxier')[0]).toMatchObject({ mode: 'iptables' });
  });

  it('docker json-file (real): kernel-module warnings, the flag warning, the proxier, wall-clock times from the records', () => {
    const log = extractKubeProxyLog(read('docker-json.log'), 'f').data;
    expect(ofKind(log.events, 'module-load-failed').map((e) => e.module)).toEqual(['ip_vs', 'ip_vs_rr', 'ip_vs_wrr', 'ip_vs_sh', 'nf_conntrack_ipv4']);
    expect(ofKind(log.events, 'proxier')[0]).toMatchObject({ mode: 'iptables', at: { line: 9, wallTime: '2019-06-02T07:02:20.766317364Z' } });
    // "all flags … are deprecated" (no field), then the unknown proxy-mode flag.
    expect(ofKind(log.events, 'config-warning').map((e) => e.field)).toEqual([undefined, 'mode']);
  });

  it('healthy start-up of kube-proxy 1.28 (real): the iptables proxier, nothing failing, no warning', () => {
    const parsed = extractKubeProxyLog(read('klog-iptables-healthy.log'), 'f');
    expect(parsed.data.events.map((e) => [e.kind, e.at.line])).toEqual([
      ['proxier', 1],
      ['proxier', 7],
    ]);
    expect(ofKind(parsed.data.events, 'proxier').map((e) => e.mode)).toEqual(['iptables', 'iptables']);
    expect(parsed.diagnostics).toEqual([]);
  });

  it('IPVS fallback, then iptables', () => {
    const log = extractKubeProxyLog(read('klog-ipvs-fallback.log'), 'f').data;
    expect(log.events.map((e) => e.kind)).toEqual(['mode-fallback', 'proxier']);
    expect(ofKind(log.events, 'proxier')[0].mode).toBe('iptables');
  });
});

/** Real lines (klog-sync-failed.log) put into each wrapper the other pasted forms add. */
describe('wrappers: the same lines in every pasted form give the same events', () => {
  const lines = read('klog-sync-failed.log').split('\n').filter(Boolean);
  const base = extractKubeProxyLog(lines.join('\n') + '\n', 'f').data.events.map((e) => ({ kind: e.kind, line: e.at.line, failing: e.kind === 'sync-failed' ? e.failingLine : undefined }));
  const forms: Record<string, (l: string, i: number) => string> = {
    'docker json-file': (l, i) => JSON.stringify({ log: `${l}\n`, stream: 'stderr', time: `2021-08-09T05:37:${String(10 + i).padStart(2, '0')}.1Z` }),
    'CRI log file': (l) => `2021-08-09T05:37:21.484590123Z stderr F ${l}`,
    'kubectl logs --prefix --timestamps': (l) => `[pod/kube-proxy-x7k2p/kube-proxy] 2021-08-09T05:37:21.484590123Z ${l}`,
    'journald short-iso': (l) => `2021-08-09T05:37:21+0000 node-3 kube-proxy[2211]: ${l}`,
    'terminal UI frame': (l) => `│ ${l.padEnd(140)} │`,
  };
  for (const [name, wrap] of Object.entries(forms)) {
    it(name, () => {
      const text = lines.map(wrap).join('\n') + '\n';
      expect(sniff(splitInput(text).lines)?.id).toBe('kube-proxy-log');
      const parsed = extractKubeProxyLog(text, 'f');
      expect(parsed.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
      expect(parsed.data.events.map((e) => ({ kind: e.kind, line: e.at.line, failing: e.kind === 'sync-failed' ? e.failingLine : undefined }))).toEqual(base);
    });
  }
  it('a broken docker json line is an error on that line, the rest is read', () => {
    const text = [JSON.stringify({ log: lines[0] + '\n' }), '{"log":"E0809 05:37:21', JSON.stringify({ log: lines[2] + '\n' })].join('\n');
    const parsed = extractKubeProxyLog(text, 'f');
    expect(parsed.diagnostics.filter((d) => d.severity === 'error').map((d) => [d.code, d.line])).toEqual([['parse/bad-json', 2]]);
    expect(parsed.data.events.map((e) => e.kind)).toEqual(['sync-failed', 'sync-retry']);
  });
});

describe('logged payloads: numbered as iptables-restore numbers them', () => {
  const payload = [
    '*nat',
    ':KUBE-SERVICES - [0:0]',
    ':KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]',
    '-A KUBE-SERVICES -m comment --comment "shop/web:http cluster IP" -d 10.96.0.20/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA',
    '-A KUBE-SVC-AAAAAAAAAAAAAAAA -m comment --comment "shop/web:http" -j KUBE-MARK-DROP',
    'COMMIT',
  ];
  it('structured rules=< block: payload line 5 is the rule, wherever the log has it', () => {
    const text = [
      'I0312 14:02:10.000001       1 proxier.go:1500] "Syncing iptables rules"',
      'I0312 14:02:11.118100       1 proxier.go:1520] "Restoring iptables rules" rules=<',
      ...payload.map((l) => `\t${l}`),
      ' >',
      'E0312 14:02:11.118202       1 proxier.go:1536] "Failed to execute iptables-restore" err="exit status 1 (iptables-restore: line 5 failed\\n)"',
    ].join('\n');
    const log = extractKubeProxyLog(text, 'f').data;
    const [e] = ofKind(log.events, 'sync-failed');
    expect(e.failingLine).toBe(5);
    expect(e.payload?.lines[4]).toBe(payload[4]);
    expect(e.payload?.fileLines[4]).toBe(7);
    const rule = e.payload?.ruleset.tables.flatMap((t) => t.chains.flatMap((c) => c.rules)).find((r) => r.line === 5);
    expect(rule?.chain).toBe('KUBE-SVC-AAAAAAAAAAAAAAAA');
  });
  it('old "Restoring iptables rules: *nat" form: the payload starts on the header line', () => {
    const text = ['I0312 14:02:11.118100       1 proxier.go:1464] Restoring iptables rules: ' + payload[0], ...payload.slice(1), 'E0312 14:02:11.118202       1 proxier.go:1507] Failed to execute iptables-restore: exit status 1 (iptables-restore: line 5 failed', ')'].join('\n');
    const [e] = ofKind(extractKubeProxyLog(text, 'f').data.events, 'sync-failed');
    expect(e.payload?.lines[4]).toBe(payload[4]);
    expect(e.payload?.fileLines[4]).toBe(5);
  });
  it('an nft error echo names the transaction line, the chain and the underlined expression', () => {
    const text = [
      'E0312 14:02:11.118202       1 proxier.go:1800] "nftables sync failed" err=<',
      '\t/dev/stdin:120:39-52: Error: Could not process rule: No such file or directory',
      '\tadd rule ip kube-proxy nat-prerouting fib daddr type local jump nodeport',
      `\t${' '.repeat(38)}^^^^^^^^^^^^^^`,
      ' >',
    ].join('\n');
    const [e] = ofKind(extractKubeProxyLog(text, 'f').data.events, 'sync-failed');
    expect(e).toMatchObject({ tool: 'nft', failingLine: 120, nft: { line: 120, chain: 'nat-prerouting', underlined: 'fib daddr type', fileLine: 2 } });
  });
  it('an nft echo is read with the nft grammar: a map element names its set and verdict chain, a rule its statement', () => {
    const text = [
      'E0312 14:02:11.118202       1 proxier.go:1800] "nftables sync failed" err=<',
      '\t/dev/stdin:84:41-62: Error: Could not process rule: No such file or directory',
      '\tadd element ip kube-proxy service-ips { 10.96.99.99 . udp . 53 : goto service-ABCDEFGH-team/dns-cache/udp/dns }',
      `\t${' '.repeat(40)}${'^'.repeat(22)}`,
      ' >',
      'E0312 14:03:11.118202       1 proxier.go:1800] "nftables sync failed" err=<',
      '\t/dev/stdin:9:64-75: Error: Could not process rule: Operation not supported',
      '\tinsert rule inet "kube-proxy" nat-prerouting ip daddr 10.0.0.1 meta ibrname "cni0" jump services',
      `\t${' '.repeat(63)}${'^'.repeat(12)}`,
      ' >',
    ].join('\n');
    const [a, b] = ofKind(extractKubeProxyLog(text, 'f').data.events, 'sync-failed');
    expect(a.nft).toMatchObject({ line: 84, verb: 'add', object: 'element', family: 'ip', table: 'kube-proxy', set: 'service-ips', targets: ['service-ABCDEFGH-team/dns-cache/udp/dns'] });
    expect(a.nft?.chain).toBeUndefined();
    expect(b.nft).toMatchObject({ line: 9, verb: 'insert', object: 'rule', family: 'inet', table: 'kube-proxy', chain: 'nat-prerouting', expression: { kind: 'match', text: 'meta ibrname "cni0"' }, targets: ['services'] });
  });
  it('strict-decoding errors are configuration warnings naming the field (structured and old forms)', () => {
    const text = [
      'E0312 14:02:09.1       1 server.go:490] "Using lenient decoding as strict decoding failed" err=<',
      '\tstrict decoding error: unknown field "udpIdleTimeout"',
      ' >',
      'W0702 17:19:47.678898       1 server.go:439] using lenient decoding as strict decoding failed: strict decoder error for ---',
      'apiVersion: kubeproxy.config.k8s.io/v1alpha1',
      'conntrack:',
      '  max: 0',
      'udpIdleTimeout: 250ms: v1alpha1.KubeProxyConfiguration.Conntrack: v1alpha1.KubeProxyConntrackConfiguration.ReadObject: found unknown field: max, error found in #10 byte of ...|ck":{"max":0,"maxPer|...',
      'I0702 17:19:47.93       1 server.go:500] "Neither kubeconfig file nor master URL was specified"',
    ].join('\n');
    const parsed = extractKubeProxyLog(text, 'f');
    expect(ofKind(parsed.data.events, 'config-warning').map((e) => [e.field, e.at.line, e.at.endLine])).toEqual([
      ['udpIdleTimeout', 1, 3],
      ['max', 4, 8],
    ]);
    // The echoed YAML is the warning's continuation, not a payload and not an error.
    expect(parsed.data.payloads).toEqual([]);
    expect(parsed.diagnostics).toEqual([]);
  });
  it('ports closed name the Service and port', () => {
    const text = 'I0312 14:02:11.2       1 proxier.go:1600] "Closing local port" port="\\"nodePort for shop/web:http\\" (:30080/tcp4)"\n';
    const [e] = ofKind(extractKubeProxyLog(text, 'f').data.events, 'port-closed');
    expect(e).toMatchObject({ service: 'shop/web:http', port: 30080, protocol: 'tcp' });
  });
});

describe('KubeProxyConfiguration', () => {
  it('ConfigMap: the config.conf block, each field at its own file line', () => {
    const c = extractKubeProxyConfig(read('configmap-ipvs.yaml'), 'f').data;
    expect(c.form).toBe('configmap');
    expect(c.mode).toMatchObject({ value: 'ipvs', line: 39, text: '    mode: ipvs' });
    expect(c.ipvsScheduler?.value).toBe('sed');
    expect(c.strictARP?.value).toBe(false);
    expect(c.clusterCIDR?.value).toEqual(['10.244.0.0/16']);
    expect(c.masqueradeBit).toBeUndefined();
  });
  it('bare file: values and the fields strict decoding rejects', () => {
    const c = extractKubeProxyConfig(read('config-bare.yaml'), 'f').data;
    expect(c.form).toBe('config');
    expect(c.masqueradeBit).toMatchObject({ value: 14, line: 21 });
    expect(c.mode?.value).toBe('iptables');
    expect(c.unknownFields.map((u) => u.value)).toEqual(['conntrack.max', 'resourceContainer']);
  });
  it('flags (a ps line)', () => {
    const c = extractKubeProxyConfig(read('flags-rke2.txt'), 'f').data;
    expect(c.form).toBe('flags');
    expect(c.mode?.value).toBe('ipvs');
    expect(c.strictARP?.value).toBe(true);
    expect(c.clusterCIDR?.value).toEqual(['10.42.0.0/16']);
    expect(c.conntrackMaxPerCore?.value).toBe(0);
  });
  it('EKS kube-proxy-config ConfigMap as a user edited it (real): the `config: |-` entry, inline `# <--` comments', () => {
    const parsed = extractKubeProxyConfig(read('configmap-eks-edited.yaml'), 'f');
    const c = parsed.data;
    expect(c.form).toBe('configmap');
    expect(c.mode).toMatchObject({ value: 'ipvs', line: 35, text: '    mode: "ipvs" # <-- modified from "iptables"' });
    expect(c.ipvsScheduler).toMatchObject({ value: 'lc', line: 31 });
    expect(c.masqueradeBit).toMatchObject({ value: 14, line: 25 });
    expect(c.conntrackMaxPerCore?.value).toBe(32768);
    // The commented-out `# max: 0` is a comment, not the field strict decoding rejects.
    expect(c.fields.has('conntrack.max')).toBe(false);
    expect(c.unknownFields).toEqual([]);
    expect(parsed.diagnostics).toEqual([]);
  });
  it('kubectl edit, only the edited lines pasted with the block indentation (real)', () => {
    const parsed = extractKubeProxyConfig(read('config-edit-fragment.yaml'), 'f');
    expect(parsed.data.mode).toMatchObject({ value: 'ipvs', line: 8 });
    expect(parsed.data.ipvsScheduler).toMatchObject({ value: 'sh', line: 4 });
    expect(parsed.diagnostics).toEqual([]);
  });
  it('the kubectl edit form (comments above, the same ConfigMap) reads the same', () => {
    const edit = '# Please edit the object below. Lines beginning with a \'#\' will be ignored,\n# and an empty file will abort the edit.\n#\n' + read('configmap-ipvs.yaml');
    const c = extractKubeProxyConfig(edit, 'f').data;
    expect(c.mode).toMatchObject({ value: 'ipvs', line: 39 + 3 });
  });
});
