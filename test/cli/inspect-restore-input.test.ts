/** `kpx inspect` says when a file is restore input (a partial view), in text and JSON. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCluster, iptablesSave, kubeProxyRestorePayload } from '../../src/generate/index.js';
import { cli } from '../helpers/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpx-restore-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const save = iptablesSave(generateCluster({ seed: 5, services: 12 }));
writeFileSync(join(tmp, 'payload.txt'), kubeProxyRestorePayload(save));
writeFileSync(join(tmp, 'save.txt'), save);

describe('kpx inspect on a kube-proxy restore payload', () => {
  it('JSON: the payload has variant "restore-input", the dump none', async () => {
    const r = await cli(['inspect', join(tmp, 'payload.txt'), join(tmp, 'save.txt'), '-o', 'json']);
    expect(r.code).toBe(0);
    const files = JSON.parse(r.stdout).files as { path: string; format: string; variant?: string }[];
    expect(files.map((f) => [f.path.split('/').pop(), f.format, f.variant])).toEqual([
      ['payload.txt', 'iptables-save', 'restore-input'],
      ['save.txt', 'iptables-save', undefined],
    ]);
  });
  it('text: the format column and a "partial" line name the payload, not the dump', async () => {
    const r = await cli(['inspect', join(tmp, 'payload.txt'), join(tmp, 'save.txt')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/payload\.txt +iptables-save \(restore-input\) /);
    expect(r.stdout).toMatch(/^(\S*\/)?save\.txt +iptables-save +\d/m);
    // Each line is wrapped to the width under its first: read whole.
    const partial = r.stdout.replace(/\n +/g, ' ').split('\n').filter((l) => l.startsWith('partial:'));
    expect(partial).toHaveLength(1);
    expect(partial[0]).toContain('payload.txt: iptables-restore --noflush input');
    expect(partial[0]).toContain('built-in chains');
  });
});
