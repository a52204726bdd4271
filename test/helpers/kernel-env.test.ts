/**
 * Which kernel-backed suites run where: a fresh machine skips them and says so at the end of the
 * run; CI and `npm run test:kernel` fail without the tools.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { KERNEL_TOOLS, kernelBanner, kernelDecision, onPath, type MachineProbe } from './kernel-env.js';
import { run as spawnAwaited } from './exec.js';

const machine = (root: boolean, missing: readonly string[], env: Record<string, string> = {}): MachineProbe => ({ root, has: (t) => !missing.includes(t), env });

describe('kernel suite selection', () => {
  it('runs them with root and every tool, whether required or not', () => {
    expect(kernelDecision(machine(true, []))).toEqual({ action: 'run' });
    expect(kernelDecision(machine(true, [], { CI: 'true' }))).toEqual({ action: 'run' });
  });

  it('skips them on a machine without root or tools, naming every reason', () => {
    expect(kernelDecision(machine(true, ['nft', 'conntrack']))).toEqual({ action: 'skip', reason: 'missing on PATH: nft, conntrack' });
    expect(kernelDecision(machine(false, []))).toEqual({ action: 'skip', reason: 'not running as root' });
    expect(kernelDecision(machine(false, [...KERNEL_TOOLS]))).toEqual({ action: 'skip', reason: `not running as root; missing on PATH: ${KERNEL_TOOLS.join(', ')}` });
    expect(kernelDecision(machine(true, ['ipset'], { CI: 'false' })).action).toBe('skip');
    expect(kernelDecision(machine(true, ['ipset'], { CI: '' })).action).toBe('skip');
  });

  it('fails in CI and under KPX_REQUIRE_KERNEL=1 instead of skipping', () => {
    expect(kernelDecision(machine(true, ['ipset'], { CI: 'true' }))).toEqual({ action: 'fail', reason: 'missing on PATH: ipset' });
    expect(kernelDecision(machine(true, ['ipset'], { CI: '1' })).action).toBe('fail');
    expect(kernelDecision(machine(false, [], { KPX_REQUIRE_KERNEL: '1' }))).toEqual({ action: 'fail', reason: 'not running as root' });
  });

  const dir = mkdtempSync(join(tmpdir(), 'kpx-path-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds tools on PATH by executable bit, without spawning anything', () => {
    writeFileSync(join(dir, 'nft'), '#!/bin/sh\n');
    chmodSync(join(dir, 'nft'), 0o755);
    writeFileSync(join(dir, 'ipset'), 'not executable');
    chmodSync(join(dir, 'ipset'), 0o644);
    expect(onPath('nft', `/nonexistent:${dir}`)).toBe(true);
    expect(onPath('ipset', dir)).toBe(false); // no x bit: not runnable, even by root
    expect(onPath('conntrack', dir)).toBe(false);
    expect(onPath('nft', '')).toBe(false);
  });

  it('the banner names the files, the reason and the command that runs them', () => {
    const b = kernelBanner('missing on PATH: nft', [
      { file: 'test/kernel/nft-tools.test.ts', notRun: 1 },
      { file: 'test/kernel/ipset-tools.test.ts', notRun: 7 },
    ]);
    expect(b).toContain('KERNEL-BACKED SUITES DID NOT RUN: missing on PATH: nft');
    expect(b).toContain('8 tests in 2 files left out');
    expect(b).toContain('test/kernel/ipset-tools.test.ts (7 not run)');
    expect(b).toContain('npm run test:kernel');
  });
});

describe('a run on a machine without the tools', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const vitest = join(root, 'node_modules/vitest/vitest.mjs');
  // The PATH of a fresh machine as far as the kernel suites care: none of their tools.
  const bare = mkdtempSync(join(tmpdir(), 'kpx-bare-'));
  afterAll(() => rmSync(bare, { recursive: true, force: true }));
  const run = (config: string, env: Record<string, string>) =>
    spawnAwaited(process.execPath, [vitest, 'run', '--config', config, 'test/kernel/iprule-tools.test.ts'], {
      cwd: root,
      env: { HOME: process.env.HOME ?? '/tmp', PATH: bare, NO_COLOR: '1', ...env },
    });

  it('npm test skips the kernel suites and ends with the banner', async () => {
    const r = await run('vitest.config.ts', {});
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const tail = r.stdout.trimEnd().split('\n').slice(-6).join('\n');
    expect(tail).toContain('test/kernel/iprule-tools.test.ts');
    expect(tail).toContain('npm run test:kernel');
    expect(r.stdout).toMatch(/KERNEL-BACKED SUITES DID NOT RUN: (not running as root; )?missing on PATH: ip, iptables-save/);
  });

  it('CI=true and npm run test:kernel fail instead', async () => {
    for (const [config, env] of [['vitest.config.ts', { CI: 'true' }], ['vitest.kernel.config.ts', {}]] as const) {
      const r = await run(config, env);
      expect(r.status, config).not.toBe(0);
      expect(r.stdout + r.stderr).toContain('kernel-backed tests cannot run: ');
      expect(r.stdout).not.toContain('KERNEL-BACKED SUITES DID NOT RUN');
    }
  });
});
