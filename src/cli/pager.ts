/**
 * Long answers on a terminal go through a pager, the way git does (issue 29), so the verdict at
 * the top is not scrolled away: `KPX_PAGER`, else `PAGER`, else `less -FRX` (quit at once when
 * the answer fits a screen, keep colours, leave the text on screen). Never when stdout is not a
 * terminal, never with `--no-pager`, never for JSON, YAML, SARIF, dumps or graphs (they do not go
 * through writeText), and never for an answer that fits the screen. An empty pager or `cat` means
 * none, as in git.
 */
import { spawn } from 'node:child_process';

let disabled = false;
let running: Promise<void> = Promise.resolve();

/** Set before each command runs: false with `--no-pager` (this run writes straight to stdout). */
export function setPagerEnabled(enabled: boolean): void {
  disabled = !enabled;
}

/** The screen: is it a terminal, and how many rows does it have. */
export interface Screen {
  readonly isTTY?: boolean;
  readonly rows?: number;
}

/**
 * The pager (a shell command line) a text answer of `lines` lines goes through, or undefined for
 * stdout itself.
 */
export function pagerFor(lines: number, screen: Screen = process.stdout, env: NodeJS.ProcessEnv = process.env, noPager = disabled): string | undefined {
  if (noPager || !screen.isTTY) return undefined;
  // An answer that fits the screen needs no pager (rows unknown: assume a classic 24).
  if (lines < (screen.rows && screen.rows > 0 ? screen.rows : 24)) return undefined;
  const command = (env.KPX_PAGER ?? env.PAGER ?? 'less -FRX').trim();
  if (command === '' || command === 'cat') return undefined;
  return command;
}

/**
 * Write `text` into the pager: its output is the terminal, and kpx waits for it (the process
 * does not exit while the child runs). A pager that cannot start leaves the text on stdout.
 */
export function page(text: string, command: string): void {
  // git sets LESS=FRX when unset: a `PAGER=less` without flags behaves the same.
  const env = { ...process.env, LESS: process.env.LESS ?? 'FRX' };
  const child = spawn(command, { shell: true, stdio: ['pipe', 'inherit', 'inherit'], env });
  // Ctrl-C belongs to the pager while it runs (less uses it to stop a search), as with git.
  const ignore = () => {};
  process.on('SIGINT', ignore);
  running = new Promise<void>((resolve) => {
    const done = () => {
      process.off('SIGINT', ignore);
      resolve();
    };
    child.on('error', () => {
      process.stdout.write(text);
      done();
    });
    // 127: the shell found no such pager; the answer still goes out.
    child.on('close', (code) => {
      if (code === 127) process.stdout.write(text);
      done();
    });
  });
  // The reader quit early (q in less): what is left is not wanted.
  child.stdin.on('error', () => {});
  child.stdin.end(text);
}

/** Resolves when the pager of this run (if any) has exited. */
export function pagerFinished(): Promise<void> {
  return running;
}
