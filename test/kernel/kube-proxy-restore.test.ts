/**
 * The real iptables-restore rejects a generated kube-proxy payload with one bad rule (a jump to a
 * chain that does not exist) inside a throw-away namespace; its own error, wrapped as kube-proxy
 * logs it, is read by kpx, which names the exact payload line and the Service that owns it.
 */
import { describe, expect, it } from 'vitest';
import { generateCluster, iptablesSave } from '../../src/generate/index.js';
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
