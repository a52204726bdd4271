/** Redact dump files and bundle directories into an output directory (see ./index.ts). */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { loadSnapshot } from '../load/snapshot.js';
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

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.')) continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) walk(p, out);
    else if (st.isFile()) out.push(p);
  }
}

function readText(path: string): string {
  const buf = readFileSync(path);
  return buf.length > 2 && buf[0] === 0x1f && buf[1] === 0x8b ? gunzipSync(buf).toString('utf8') : buf.toString('utf8');
}

/** Every input file and where its redacted copy goes (directories keep their layout). */
export function plan(paths: readonly string[], outDir: string): { input: string; output: string }[] {
  const out: { input: string; output: string }[] = [];
  const used = new Set<string>();
  for (const p of paths) {
    const st = statSync(p);
    const files: [string, string][] = [];
    if (st.isDirectory()) {
      const list: string[] = [];
      walk(p, list);
      for (const f of list) files.push([f, paths.length > 1 ? join(basename(p), relative(p, f)) : relative(p, f)]);
    } else files.push([p, basename(p)]);
    for (const [input, rel] of files) {
      let name = rel.replace(/\.gz$/, '');
      for (let i = 2; used.has(name); i++) name = rel.replace(/\.gz$/, '').replace(/(\.[^./]*)?$/, `-${i}$1`);
      used.add(name);
      out.push({ input, output: join(outDir, name) });
    }
  }
  return out;
}

/** Learn hashes and host names from the inputs as kpx reads them, then rewrite every file. */
export async function redactFiles(paths: readonly string[], outDir: string, opts: RedactFilesOptions): Promise<RedactedFile[]> {
  const redactor = new Redactor({ key: opts.key, hostnames: opts.hostnames ?? [] });
  const snapshot = await loadSnapshot(paths);
  redactor.learn(snapshot, await resolveServices(snapshot));
  const files = plan(paths, outDir);
  // Manifests first: they name the host, which other files may repeat.
  const texts = files.map((f) => ({ ...f, text: readText(f.input) }));
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
