/** Redact dump files and bundle directories into an output directory (see ./index.ts). */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { loadSnapshot } from '../load/snapshot.js';
import { fileInput, fsReason, readTextFile, type RawInput } from '../load/index.js';
import { walkBundle } from '../load/bundle.js';
import { InputLimitError } from '../load/input.js';
import { resolveServices } from '../kube/resolve.js';
import { Redactor } from './index.js';

export interface RedactFilesOptions {
  readonly key: string;
  readonly hostnames?: readonly string[];
}

export interface RedactedFile {
  readonly input: string;
  readonly output: string;
  readonly bytes: number;
}

/** A bundle entry left out of the redacted copy, and why (a FIFO, a symlink loop, over a limit…). */
export interface SkippedFile {
  readonly input: string;
  readonly why: string;
}

/** Every input file and where its redacted copy goes (directories keep their layout). */
export function plan(paths: readonly string[], outDir: string): { input: string; output: string; source: RawInput }[] {
  const out: { input: string; output: string; source: RawInput }[] = [];
  const used = new Set<string>();
  for (const p of paths) {
    const st = statSync(p);
    const files: [RawInput, string][] = [];
    if (st.isDirectory()) {
      // The bundle's entries as kpx reads them: special files, loops and unreadable entries are listed, not opened.
      const list: RawInput[] = [];
      walkBundle(p, list, { all: true });
      for (const f of list) files.push([f, paths.length > 1 ? join(basename(p), relative(p, f.path)) : relative(p, f.path)]);
    } else files.push([fileInput(p, st.isFile() ? st.size : 0), basename(p)]);
    for (const [source, rel] of files) {
      const input = source.path;
      let name = rel.replace(/\.gz$/, '');
      for (let i = 2; used.has(name); i++) name = rel.replace(/\.gz$/, '').replace(/(\.[^./]*)?$/, `-${i}$1`);
      used.add(name);
      out.push({ input, output: join(outDir, name), source });
    }
  }
  return out;
}

/** Learn hashes and host names from the inputs as kpx reads them, then rewrite every file. */
export async function redactFiles(paths: readonly string[], outDir: string, opts: RedactFilesOptions, skipped: SkippedFile[] = []): Promise<RedactedFile[]> {
  const redactor = new Redactor({ key: opts.key, hostnames: opts.hostnames ?? [] });
  const snapshot = await loadSnapshot(paths);
  redactor.learn(snapshot, await resolveServices(snapshot));
  const files = plan(paths, outDir);
  // Manifests first: they name the host, which other files may repeat.
  const texts: ((typeof files)[number] & { text: string })[] = [];
  for (const f of files) {
    try {
      texts.push({ ...f, text: await readTextFile(f.source) });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException)?.code;
      if (e instanceof InputLimitError) skipped.push({ input: f.input, why: e.message });
      else if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) skipped.push({ input: f.input, why: fsReason(e) });
      else if (e instanceof Error && e.message.startsWith(`${f.input}: `)) skipped.push({ input: f.input, why: e.message.slice(f.input.length + 2) });
      else throw e;
    }
  }
  for (const f of texts) if (basename(f.input) === 'manifest.json') redactor.json(f.text);
  const written: RedactedFile[] = [];
  for (const f of texts) {
    const out = basename(f.input) === 'manifest.json' || f.input.endsWith('.json') ? redactor.json(f.text) : redactor.text(f.text);
    mkdirSync(dirname(f.output), { recursive: true });
    writeFileSync(f.output, out);
    written.push({ input: f.input, output: f.output, bytes: Buffer.byteLength(out) });
  }
  return written;
}
