/** A spinner on stderr, only when stderr is a TTY and output is for people. */
import type { Ora } from 'ora';

export interface Progress {
  update(text: string): void;
  /**
   * Like update(), and paints the frame at once: for callers inside a long synchronous parse,
   * where the spinner's own timer cannot run. Throttled, so it can be called often.
   */
  paint(text: string): void;
  stop(): void;
}

const silent: Progress = { update() {}, paint() {}, stop() {} };

/** Frames painted by paint() at most this often. */
const PAINT_MS = 80;

export async function startProgress(enabled: boolean, text: string): Promise<Progress> {
  // A terminal that reports no width (some `script`/CI ptys) would make ora redraw forever.
  if (!enabled || !process.stderr.isTTY || process.env.CI || !(process.stderr.columns > 0)) return silent;
  const { default: ora } = await import('ora');
  const spinner: Ora = ora({ text, stream: process.stderr }).start();
  let painted = 0;
  return {
    update(t) {
      spinner.text = t;
    },
    paint(t) {
      const now = Date.now();
      if (now - painted < PAINT_MS) return;
      painted = now;
      spinner.text = t;
      spinner.render();
    },
    stop() {
      spinner.stop();
    },
  };
}

/** `parsing FILE: 120,000 of 400,000 lines (210,000 lines/s)`. */
export function parsingText(path: string, done: number, total: number, seconds: number): string {
  const rate = seconds > 0 ? Math.round(done / seconds) : 0;
  const n = (x: number) => x.toLocaleString('en-US');
  return `parsing ${path}: ${n(done)} of ${n(total)} lines${rate > 0 ? ` (${n(rate)} lines/s)` : ''}`;
}
