/** trace and services say first when a given kube-proxy log shows its syncs failing (and say nothing otherwise). */
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { cli } from '../helpers/cli.js';

const SAMPLE = fileURLToPath(new URL('../../samples/iptables-mode-node', import.meta.url));
const FAILING = fileURLToPath(new URL('../fixtures/kube-proxy/klog-sync-failed.log', import.meta.url));
const HEALTHY = fileURLToPath(new URL('../fixtures/kube-proxy/klog-ipvs-healthy.log', import.meta.url));
/** The note is wrapped to the width under its first line: read as one sentence. */
const unwrap = (s: string) => s.replace(/\n +/g, ' ');
const NOTE = /^note: kube-proxy's log \(.*klog-sync-failed\.log:1\) shows its iptables-restore failing 5 times, from 0809 05:37:21\.484590 to 0809 07:32:42\.616867: the rules shown may be stale/;

describe('stale-rules notice', () => {
  it('trace: first line', async () => {
    const r = await cli(['trace', '10.96.0.10:53/udp', '-i', SAMPLE, '-i', FAILING]);
    expect(unwrap(r.stdout)).toMatch(NOTE);
  });
  it('services: first line', async () => {
    const r = await cli(['services', '-i', SAMPLE, '-i', FAILING, '--namespace', 'kube-system']);
    expect(unwrap(r.stdout)).toMatch(NOTE);
  });
  it('no notice with a healthy log', async () => {
    const r = await cli(['services', '-i', SAMPLE, '-i', HEALTHY, '--namespace', 'kube-system']);
    expect(r.stdout).not.toMatch(/^note:/m);
  });
});
