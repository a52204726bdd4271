/**
 * `kpx collect` records kube-proxy's own account when the node has it — its journal, its container's
 * log, its running flags, its ConfigMap — and says why not when it does not. The tools are stand-ins
 * on PATH that print real pastes (test/fixtures/kube-proxy), so no node or cluster is needed; the
 * bundle is then loaded back and the files are recognised by content.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KUBE_PROXY_STEPS, LOG_LINES, runSteps } from '../../src/collect/live.js';
import { loadSnapshot } from '../../src/load/snapshot.js';

const FIX = join(import.meta.dirname, '..', 'fixtures', 'kube-proxy');
const tmp = mkdtempSync(join(tmpdir(), 'kpx-collect-kp-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let n = 0;
let savedPath: string | undefined;
beforeEach(() => {
  savedPath = process.env.PATH;
});
afterEach(() => {
  process.env.PATH = savedPath;
});

/** A directory of stand-in tools: name → shell script body. PATH becomes that directory, and /bin for sh and cat when there are scripts. */
function tools(scripts: Record<string, string>): string {
  const bin = join(tmp, `bin-${++n}`);
  mkdirSync(bin);
  for (const [name, body] of Object.entries(scripts)) {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  }
  process.env.PATH = Object.keys(scripts).length ? `${bin}:/bin:/usr/bin` : bin;
  return bin;
}

const write = (p: string, d: string) => writeFileSync(p, d);

describe('kpx collect: kube-proxy steps', () => {
  it('writes the journal, the container log (stderr kept), the flags and the ConfigMap, and kpx reads them back', async () => {
    const argsLog = join(tmp, 'args.txt');
    tools({
      journalctl: `echo "$@" >> ${argsLog}; cat ${join(FIX, 'journald-structured-err.log')}`,
      // crictl: `ps` names the container; `logs` prints klog on stderr, as the runtime does.
      crictl: `if [ "$1" = ps ]; then echo 3f2a9c1d; else echo "$@" >> ${argsLog}; cat ${join(FIX, 'klog-sync-failed.log')} >&2; fi`,
      pgrep: `tail -n 1 ${join(FIX, 'flags-rke2.txt')}`,
      kubectl: `cat ${join(FIX, 'configmap-ipvs.yaml')}`,
    });
    const dir = join(tmp, 'bundle-1');
    mkdirSync(dir);
    const steps = await runSteps(dir, KUBE_PROXY_STEPS, write);
    expect(steps.map((s) => [s.file, s.status])).toEqual([
      ['kube-proxy-journal.log', 'ok'],
      ['kube-proxy-container.log', 'ok'],
      ['kube-proxy-flags.txt', 'ok'],
      ['kube-proxy-configmap.yaml', 'ok'],
    ]);
    // Bounded: the newest LOG_LINES lines, from the container kube-proxy runs in.
    const args = readFileSync(argsLog, 'utf8');
    expect(args).toContain(`-u kube-proxy --no-pager -o short-iso -n ${LOG_LINES}`);
    expect(args).toContain(`logs --tail ${LOG_LINES} 3f2a9c1d`);
    expect(readFileSync(join(dir, 'kube-proxy-container.log'), 'utf8')).toContain('Failed to execute iptables-restore');
    const snap = await loadSnapshot([dir]);
    const formats = Object.fromEntries(snap.files.map((f) => [f.path.slice(dir.length + 1), f.format]));
    expect(formats).toEqual({
      'kube-proxy-configmap.yaml': 'kube-proxy-config',
      'kube-proxy-container.log': 'kube-proxy-log',
      'kube-proxy-flags.txt': 'kube-proxy-config',
      'kube-proxy-journal.log': 'kube-proxy-log',
    });
    expect(snap.files.flatMap((f) => f.diagnostics.filter((d) => d.severity === 'error'))).toEqual([]);
  });

  it('says why each is missing: no tool, no unit, no container, no process, no cluster — skipped, never failed', async () => {
    tools({
      journalctl: 'echo "-- No entries --"',
      crictl: 'exit 0',
      pgrep: 'exit 1',
      kubectl: 'echo "The connection to the server localhost:8080 was refused - did you specify the right host or port?" >&2; exit 1',
    });
    const dir = join(tmp, 'bundle-2');
    mkdirSync(dir);
    const steps = await runSteps(dir, KUBE_PROXY_STEPS, write);
    expect(steps.map((s) => [s.file, s.status, s.detail])).toEqual([
      ['kube-proxy-journal.log', 'skipped', 'no kube-proxy unit in the journal'],
      ['kube-proxy-container.log', 'skipped', 'no kube-proxy container on this node'],
      ['kube-proxy-flags.txt', 'skipped', 'no kube-proxy process on this node'],
      ['kube-proxy-configmap.yaml', 'skipped', 'The connection to the server localhost:8080 was refused - did you specify the right host or port?'],
    ]);
    tools({});
    const none = await runSteps(dir, KUBE_PROXY_STEPS, write);
    expect(none.map((s) => s.status)).toEqual(['missing', 'missing', 'missing', 'missing']);
    expect(none[0].detail).toBe('journalctl is not installed');
  });
});
