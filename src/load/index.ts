/**
 * Reading inputs: files, directories (bundles: every file inside is sniffed), `-` for stdin,
 * and `.gz` files. Formats are told apart by content. Nothing here throws on bad dump text;
 * unreadable paths raise InputError (exit code 2).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { diagnostic, type Diagnostic } from '../source/index.js';
import { noiseKind, splitInput } from '../../grammars/common/text.js';
import type { FormatId, ParsedInput, ParseProgress } from './format.js';
import { parserFor, sniff } from './registry.js';

export class InputError extends Error {}

export interface RawInput {
  readonly path: string;
  readonly text: string;
  readonly bytes: number;
}

const SNIFF_LINES = 200;

function decode(path: string, buf: Buffer): string {
  const gz = buf.length > 2 && buf[0] === 0x1f && buf[1] === 0x8b;
  if (gz) {
    try {
      return gunzipSync(buf).toString('utf8');
    } catch (e) {
      throw new InputError(`${path}: not a readable gzip file (${(e as Error).message})`);
    }
  }
  return buf.toString('utf8');
}

/** Files kpx writes itself into bundles (manifest, the generator's ground truth), notes and OS droppings: not dumps. */
const IGNORED_NAMES = /^(manifest\.json|truth\.json|\.DS_Store|README(\.md)?|NOTE(\.txt)?|.*\.source)$/;

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.')) continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) walk(p, out);
    else if (st.isFile() && !IGNORED_NAMES.test(name)) out.push(p);
  }
}

/** Expand paths (directories → their files) and read them; `-` reads stdin. */
export function readInputs(paths: readonly string[], stdin?: () => Buffer): RawInput[] {
  const out: RawInput[] = [];
  for (const p of paths) {
    if (p === '-') {
      const buf = stdin ? stdin() : readFileSync(0);
      out.push({ path: '<stdin>', text: decode('<stdin>', buf), bytes: buf.length });
      continue;
    }
    let st;
    try {
      st = statSync(p);
    } catch {
      throw new InputError(`${p}: no such file or directory`);
    }
    const files: string[] = [];
    if (st.isDirectory()) walk(p, files);
    else files.push(p);
    if (st.isDirectory() && files.length === 0) throw new InputError(`${p}: the directory holds no files`);
    for (const f of files) {
      let buf: Buffer;
      try {
        buf = readFileSync(f);
      } catch (e) {
        throw new InputError(`${f}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      }
      out.push({ path: f, text: decode(f, buf), bytes: buf.length });
    }
  }
  return out;
}

/** The first lines that are content (paste noise skipped), for sniffing. */
export function headLines(text: string): string[] {
  const head = text.length > 64 * 1024 ? text.slice(0, 64 * 1024) : text;
  const { lines } = splitInput(head);
  const out: string[] = [];
  for (const l of lines) {
    if (l.trim() === '' || noiseKind(l) !== undefined) continue;
    out.push(l);
    if (out.length >= SNIFF_LINES) break;
  }
  return out;
}

export function detectFormat(text: string): FormatId | undefined {
  return sniff(headLines(text))?.id;
}

export interface ParsedFile {
  readonly path: string;
  readonly bytes: number;
  readonly format: FormatId | 'unknown' | 'empty';
  readonly parsed?: ParsedInput;
  readonly diagnostics: readonly Diagnostic[];
}

/** Parse one input whose format is sniffed (or forced). */
export async function parseInput(input: RawInput, forced?: FormatId, progress?: ParseProgress): Promise<ParsedFile> {
  const format = forced ?? detectFormat(input.text);
  if (!format) {
    const empty = input.text.trim() === '';
    const d = diagnostic(
      empty ? 'info' : 'error',
      empty ? 'input/empty' : 'input/unknown-format',
      empty
        ? 'the file is empty'
        : 'kpx cannot tell what this file is; it reads iptables-save, ip6tables-save, ipset list/save, ipvsadm -Ln, ip route, ip addr, sysctl and nft list ruleset output',
      input.path,
      1,
      1,
    );
    return { path: input.path, bytes: input.bytes, format: empty ? 'empty' : 'unknown', diagnostics: [d] };
  }
  const parser = await parserFor(format);
  let parsed: ParsedInput;
  try {
    parsed = parser.parse(input.text, input.path, progress);
  } catch (e) {
    // A parser bug must not take the other files down with it; say so plainly.
    const d = diagnostic('error', 'internal/parser-crash', `kpx failed while reading this ${format} file: ${(e as Error).message}`, input.path, 1, 1);
    return { path: input.path, bytes: input.bytes, format, diagnostics: [d] };
  }
  return { path: input.path, bytes: input.bytes, format, parsed, diagnostics: parsed.diagnostics };
}
