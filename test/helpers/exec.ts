/** Run the built kpx binary as a user would (NO_COLOR, no TTY). `npm test` builds first. */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

/** `stdoutTo`: send stdout to this file instead of capturing it (e.g. /dev/full, as `>/dev/full` does). */
export function kpx(args: readonly string[], input?: string, env: Record<string, string> = {}, opts: { stdoutTo?: string } = {}) {
  const fd = opts.stdoutTo === undefined ? undefined : openSync(opts.stdoutTo, 'w');
  try {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      encoding: 'utf8',
      input,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '', CI: '1', ...env },
      maxBuffer: 256 * 1024 * 1024,
      ...(fd === undefined ? {} : { stdio: ['pipe', fd, 'pipe'] as const }),
    });
    return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
