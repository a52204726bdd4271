/**
 * One input as listed (a file, a bundle entry, stdin), before it is read: its own file so that the
 * lister (./index.ts) and the bundle walk (./bundle.ts) share it without importing each other.
 */
import { closeSync, openSync } from 'node:fs';
import type { TextStream } from '../../grammars/common/stream.js';
import { fsReason } from './errors.js';
import { openTextStream, wholeFile, type InputLimits, type StreamReport } from './input.js';

export interface RawInput {
  readonly path: string;
  /** The text, when it is already in memory (tests; text kpx made itself). */
  readonly text?: string;
  /** Bytes on disk (0 when not known: stdin, a pipe, a `/proc` file). */
  readonly bytes: number;
  /** Set when this entry is not read (the reason, e.g. `permission denied (EACCES)`). */
  readonly unreadable?: string;
  /** The diagnostic code for `unreadable` (default input/unreadable): input/special-file, input/too-deep, input/too-large. */
  readonly unreadableCode?: string;
  /**
   * A bundle entry left out as not a dump (a note, a hidden file; `unreadable` says which): its
   * first bytes are still sniffed, so that a dump under such a name is said, never read silently.
   */
  readonly leftOut?: boolean;
  /** Opens the entry's text as a stream (files on disk, stdin). */
  readonly open?: (limits: InputLimits, report: StreamReport) => TextStream;
  /** The whole text in one read, for readers that take it whole (./input.ts wholeFile(); undefined: join the stream's blocks). */
  readonly whole?: (limits: InputLimits, report: StreamReport) => string | undefined;
}

/** A file (or FIFO, device, `/proc` file named on the command line) read as a stream. */
export function fileInput(path: string, bytes: number): RawInput {
  return { path, bytes, open: (limits, report) => openTextStream({ path }, bytes, limits, report), whole: (limits, report) => wholeFile(path, limits, report) };
}

/** Can this file be opened for reading? Checked when listing, so that nothing readable at all is an InputError up front. */
export function openable(path: string): string | undefined {
  try {
    closeSync(openSync(path, 'r'));
    return undefined;
  } catch (e) {
    return fsReason(e);
  }
}
