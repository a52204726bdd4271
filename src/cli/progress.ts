/** A spinner on stderr, only when stderr is a TTY and output is for people. */
import type { Ora } from 'ora';

export interface Progress {
  update(text: string): void;
  stop(): void;
}

const silent: Progress = { update() {}, stop() {} };

export async function startProgress(enabled: boolean, text: string): Promise<Progress> {
  if (!enabled || !process.stderr.isTTY || process.env.CI) return silent;
  const { default: ora } = await import('ora');
  const spinner: Ora = ora({ text, stream: process.stderr }).start();
  return {
    update(t) {
      spinner.text = t;
    },
    stop() {
      spinner.stop();
    },
  };
}
