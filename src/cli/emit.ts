/**
 * The CLI's half of the output registry: a command's result rendered in the format asked for
 * (src/render/registry/index.ts chooses the renderer), then written where that form goes — text through
 * writeText (fitted, paged), JSON through writeJsonOut, a miss on stderr. The app layer's notices
 * go to stderr as they come.
 */
import type { Outcome, AppIO } from '../app/io.js';
import type { Rendered } from '../render/output.js';
import { FOR_PEOPLE, renderResult } from '../render/registry/index.js';
import { chalkInit, colorEnabled } from '../render/colors.js';
import { fitText, textWidth } from '../render/width.js';
import { writeErr, writeJsonOut, writeOut, writeText } from './output.js';
import { loadFromOptions } from './inputs.js';
import type { InputOptions } from './input-options.js';

/** Is this format read by people (a spinner may show while the inputs are read)? */
export const forPeople = (format: string): boolean => FOR_PEOPLE.has(format);

/** The app's way to load and to say things now: the CLI's loader (with a spinner for people) and stderr. */
export function appIO(opts: InputOptions, format: string): AppIO {
  return {
    load: (positional) => loadFromOptions(positional, opts, forPeople(format)),
    notice: (line) => writeErr(line + '\n'),
  };
}

export function emit(r: Rendered): void {
  switch (r.via) {
    case 'text':
      return writeText(r.text, r.fit === false ? { fit: false } : {});
    case 'plain':
      return writeOut(r.text);
    case 'json':
      return r.write((chunk) => writeJsonOut(chunk));
    case 'stderr':
      process.stderr.write(fitText(r.text, textWidth(process.stderr)));
  }
}

/** Render the outcome's result (if any) in `format` and give its exit code: the end of every command. */
export function finish(outcome: Outcome, format: string, opts: { readonly color?: boolean }): number {
  if (outcome.result) {
    const ctx = { c: chalkInit(colorEnabled(opts)), cErr: chalkInit(colorEnabled(opts, process.stderr)), width: textWidth() };
    emit(renderResult(outcome.result, format, ctx));
  }
  for (const line of outcome.afterward ?? []) writeErr(line + '\n');
  return outcome.exit;
}
