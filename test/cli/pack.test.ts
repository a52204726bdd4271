/**
 * What `npm pack` ships installs in an empty directory and runs: `kpx --version`, `kpx services`
 * on a sample that ships in the package, and the kubectl plugin name. The dependencies come
 * from the npm cache when they are there (`--prefer-offline`), else from the registry (CI).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { run as spawnAwaited } from '../helpers/exec.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
const tmp = mkdtempSync(join(tmpdir(), 'kpx-pack-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function npm(args: string[], cwd: string): Promise<string> {
  // npm_config_* from an enclosing `npm test` (e.g. a dry run) must not leak into these runs.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  const r = await spawnAwaited('npm', args, { cwd, env: { ...env, NO_COLOR: '1' } });
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

describe('npm pack', () => {
  it('the tarball installs into an empty directory and its kpx runs', async () => {
    // dist/ is built already (`npm test` builds first): no need to run `prepare` again.
    const packed = JSON.parse(await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], ROOT)) as { filename: string; files: { path: string }[] }[];
    const paths = packed[0].files.map((f) => f.path);
    expect(paths).toContain('dist/src/cli/main.js');
    expect(paths.some((p) => p.startsWith('test/') || p.startsWith('src/'))).toBe(false);

    const app = join(tmp, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'kpx-pack-check', private: true }));
    await npm(['install', '--prefer-offline', '--no-audit', '--no-fund', '--omit=dev', join(tmp, packed[0].filename)], app);

    const bin = (name: string) => join(app, 'node_modules/.bin', name);
    const run = (name: string, args: string[]) => spawnAwaited(bin(name), args, { cwd: app, env: { ...process.env, NO_COLOR: '1' } });
    expect(await run('kpx', ['--version'])).toMatchObject({ status: 0, stdout: `${PKG.version}\n` });
    expect(await run('kubectl-kpx', ['--version'])).toMatchObject({ status: 0, stdout: `${PKG.version}\n` });
    const sample = join(app, 'node_modules', PKG.name, 'samples/iptables-mode-node');
    const s = await run('kpx', ['services', '-i', sample, '--namespace', 'kube-system']);
    expect(s.status, s.stderr).toBe(0);
    expect(s.stdout).toContain('kube-system/kube-dns:dns');
    // SVG through the packaged WebAssembly Graphviz, with no system dot involved.
    const g = await run('kpx', ['graph', '-i', sample, '--service', 'kube-system/kube-dns', '--svg', join(app, 'dns.svg')]);
    expect(g.status, g.stderr).toBe(0);
    expect(readFileSync(join(app, 'dns.svg'), 'utf8')).toMatch(/<svg[\s\S]*kube&#45;system\/kube&#45;dns:dns[\s\S]*<\/svg>/); // Graphviz writes - as &#45;
  });
});
