/**
 * Redact dump files and bundle directories into an output directory (see ./index.ts).
 *
 * A bundle is walked as kpx reads it (src/load/bundle.ts), never following a link out of it —
 * even with --follow-symlinks, a file from outside the bundle is never copied into what is
 * shared. Only dumps kpx recognises are copied, each rewritten as its format says
 * (./formats.ts); kpx's manifest is rewritten field by field; notes, hidden files, files kpx
 * does not recognise and entries it cannot read are listed as left out (their text could hold
 * anything). Names and networks are learned from every file before any is rewritten, so the
 * same value gets the same token in every file.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { loadSnapshot } from '../load/snapshot.js';
import { detectFormat, fileInput, fsReason, readTextFile, type RawInput } from '../load/index.js';
import { walkBundle } from '../load/bundle.js';
import { DEFAULT_INPUT_SETTINGS, type InputLimits, type InputSettings } from '../load/input.js';
import { InputLimitError } from '../load/input.js';
import { resolveServices } from '../kube/resolve.js';
import { Redactor } from './index.js';
import { redactFormat, type RedactFormat } from './formats.js';
import { RedactRefusal } from './api.js';

export interface RedactFilesOptions {
  readonly key: string;
  readonly hostnames?: readonly string[];
  /** The limits and --follow-symlinks from the command line (default: DEFAULT_INPUT_SETTINGS). */
  readonly input?: InputSettings;
}

export interface RedactedFile {
  readonly input: string;
  readonly output: string;
  readonly bytes: number;
}

/** A bundle entry left out of the redacted copy, and why (a FIFO, a symlink loop, over a limit, not a dump…). */
export interface SkippedFile {
  readonly input: string;
  readonly why: string;
}

interface Planned {
  readonly input: string;
  readonly output: string;
  readonly source: RawInput;
  /** kpx's manifest.json, rewritten field by field. */
  readonly manifest: boolean;
}

/** Every input file and where its redacted copy goes (directories keep their layout); the rest, with why it is left out. */
export function plan(paths: readonly string[], outDir: string, skipped: SkippedFile[] = [], limits: InputLimits = DEFAULT_INPUT_SETTINGS.limits): Planned[] {
  const out: Planned[] = [];
  const used = new Set<string>();
  for (const p of paths) {
    const st = statSync(p);
    const files: [RawInput, string, boolean][] = [];
    if (st.isDirectory()) {
      const list: RawInput[] = [];
      // Never out of the bundle, whatever --follow-symlinks says: what is shared comes from the bundle only.
      walkBundle(p, list, { followOutside: false, limits });
      for (const f of list) {
        const rel = paths.length > 1 ? join(basename(p), relative(p, f.path)) : relative(p, f.path);
        const isManifest = f.leftOut === true && basename(f.path) === 'manifest.json';
        if (f.unreadable !== undefined && !isManifest) skipped.push({ input: f.path, why: f.unreadable });
        else files.push([isManifest ? fileInput(f.path, f.bytes) : f, rel, isManifest]);
      }
    } else files.push([fileInput(p, st.isFile() ? st.size : 0), basename(p), false]);
    for (const [source, rel, manifest] of files) {
      let name = rel.replace(/\.gz$/, '');
      for (let i = 2; used.has(name); i++) name = rel.replace(/\.gz$/, '').replace(/(\.[^./]*)?$/, `-${i}$1`);
      used.add(name);
      out.push({ input: source.path, output: join(outDir, name), source, manifest });
    }
  }
  return out;
}

/** A read that failed as the user's problem (a limit, the file system, not gzip): its reason; a bug is rethrown. */
function readFailure(e: unknown, input: string): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (e instanceof InputLimitError) return e.message;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return fsReason(e);
  if (e instanceof Error && e.message.startsWith(`${input}: `)) return e.message.slice(input.length + 2);
  throw e;
}

/** Networks (`addr/len`, host bits zero) of a text: their own addresses keep mapping to the network's address. */
const NETWORK = /(?<![\w.:])(\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7})\/(\d{1,3})(?![\w.])/g;

export interface RedactResult {
  readonly files: RedactedFile[];
  /** The redactor, with everything it learned (tests map original values through it). */
  readonly redactor: Redactor;
}

/**
 * Learn from the inputs as kpx reads them (hashes, names, networks), then rewrite every dump.
 * `write(path, text)`: where each redacted file goes (default: the file system).
 */
export async function redactBundle(
  paths: readonly string[],
  outDir: string,
  opts: RedactFilesOptions,
  skipped: SkippedFile[] = [],
  write: (path: string, text: string) => void = writeRedacted,
): Promise<RedactResult> {
  const redactor = new Redactor({ key: opts.key, hostnames: opts.hostnames ?? [] });
  const input = opts.input ?? DEFAULT_INPUT_SETTINGS;
  const files = plan(paths, outDir, skipped, input.limits);
  // Which files are dumps (and of what format); the rest is not copied.
  const dumps: (Planned & { format: RedactFormat })[] = [];
  for (const f of files) {
    let text: string;
    try {
      text = await readTextFile(f.source, input.limits);
    } catch (e) {
      skipped.push({ input: f.input, why: readFailure(e, f.input) });
      continue;
    }
    const format = f.manifest ? 'manifest' : text.trim() === '' ? 'empty' : detectFormat(text);
    if (format === undefined) {
      skipped.push({ input: f.input, why: 'not a dump kpx reads: not copied (its text could hold anything)' });
      continue;
    }
    // 1. Networks, before any address is mapped.
    for (const m of text.matchAll(NETWORK)) redactor.ips.learnNetwork(m[1], Number(m[2]));
    dumps.push({ ...f, format });
  }
  // 2. Hashes and names from the model kpx reads.
  const snapshot = await loadSnapshot(paths, { input });
  redactor.learn(snapshot, await resolveServices(snapshot));
  // 3. Every file rewritten once to learn the names only its format knows (host names in sysctl,
  //    log prefixes, netns names…), so that the copy written next uses them in every file.
  const texts = async function* () {
    for (const f of dumps) {
      try {
        yield { f, text: await readTextFile(f.source, input.limits) };
      } catch (e) {
        skipped.push({ input: f.input, why: readFailure(e, f.input) });
      }
    }
  };
  const refused = new Set<string>();
  for await (const { f, text } of texts()) {
    try {
      redactFormat(redactor, f.format, text);
    } catch (e) {
      if (!(e instanceof RedactRefusal)) throw e;
      refused.add(f.input);
      skipped.push({ input: f.input, why: e.message });
    }
  }
  const written: RedactedFile[] = [];
  for await (const { f, text } of texts()) {
    if (refused.has(f.input)) continue;
    const out = redactFormat(redactor, f.format, text);
    write(f.output, out);
    written.push({ input: f.input, output: f.output, bytes: Buffer.byteLength(out) });
  }
  return { files: written, redactor };
}

function writeRedacted(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** redactBundle() for callers that need only the files written. */
export async function redactFiles(paths: readonly string[], outDir: string, opts: RedactFilesOptions, skipped: SkippedFile[] = []): Promise<RedactedFile[]> {
  return (await redactBundle(paths, outDir, opts, skipped)).files;
}
