/**
 * A vitest setup file (the unit project). The unit project runs its files one after another in
 * the same worker process (`isolate: false` in vitest.config.ts: a file no longer pays a process
 * start and a fresh import of src/ and chevrotain's grammars). What one file changes in the
 * process must not reach the next: the environment, the working directory and the exit code are
 * put back when each file ends, whatever its own hooks did.
 */
import { afterAll } from 'vitest';

const env = { ...process.env };
const cwd = process.cwd();
const exitCode = process.exitCode;

afterAll(() => {
  for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
  Object.assign(process.env, env);
  if (process.cwd() !== cwd) process.chdir(cwd);
  process.exitCode = exitCode;
});
