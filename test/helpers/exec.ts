/** Run the built kpx binary as a user would (NO_COLOR, no TTY). `npm test` builds first. */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

export function kpx(args: readonly string[], input?: string, env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    input,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '', CI: '1', ...env },
    maxBuffer: 256 * 1024 * 1024,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
