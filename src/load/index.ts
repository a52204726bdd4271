/**
 * Reading inputs: files, directories (bundles: every file inside is sniffed), `-` for stdin,
 * and `.gz` files. Formats are told apart by content. Nothing here throws on bad dump text; an
 * unreadable path or bundle entry is kept as such (reported, the rest analysed), and only inputs
 * of which nothing at all is readable raise InputError (exit code 2).
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
  /** Set when this entry could not be read (the reason, e.g. `permission denied (EACCES)`); text is then empty. */
  readonly unreadable?: string;
}

/** A filesystem error as people say it, with its code for searching: `permission denied (EACCES)`. */
export function fsReason(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const said: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EISDIR: 'is a directory',
    ENOTDIR: 'a part of the path is not a directory',
    ELOOP: 'too many levels of symbolic links (a symlink loop)',
    EMFILE: 'too many open files',
    EIO: 'input/output error',
    ENAMETOOLONG: 'file name too long',
    ENOSPC: 'no space left on device',
    EDQUOT: 'disk quota exceeded',
    EROFS: 'read-only file system',
    EEXIST: 'it already exists',
    EPIPE: 'the reader went away (broken pipe)',
  };
  return err?.code ? `${said[err.code] ?? err.message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '')} (${err.code})` : String((e as Error)?.message ?? e);
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

/** A bundle's files in name order; entries that cannot be listed or stat'ed are kept as unreadable, not fatal. */
function walk(dir: string, out: RawInput[]): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (e) {
    out.push({ path: dir, text: '', bytes: 0, unreadable: `cannot list the directory: ${fsReason(e)}` });
    return;
  }
  for (const name of names) {
    if (name.startsWith('.')) continue;
    const p = join(dir, name);
    let st;
    try {
      st = statSync(p);
    } catch (e) {
      out.push({ path: p, text: '', bytes: 0, unreadable: fsReason(e) });
      continue;
    }
    if (st.isDirectory()) walk(p, out);
    else if (st.isFile() && !IGNORED_NAMES.test(name)) out.push(readOne(p));
  }
}

function readOne(f: string): RawInput {
  let buf: Buffer;
  try {
    buf = readFileSync(f);
  } catch (e) {
    return { path: f, text: '', bytes: 0, unreadable: fsReason(e) };
  }
  try {
    return { path: f, text: decode(f, buf), bytes: buf.length };
  } catch (e) {
    if (e instanceof InputError) return { path: f, text: '', bytes: buf.length, unreadable: e.message.slice(f.length + 2) };
    throw e;
  }
}

/**
 * Expand paths (directories → their files) and read them; `-` reads stdin. A path or bundle
 * entry that cannot be read is returned as unreadable so the rest is still analysed; only when
 * nothing at all could be read is that an InputError (one line per path).
 */
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
    } catch (e) {
      out.push({ path: p, text: '', bytes: 0, unreadable: fsReason(e) });
      continue;
    }
    if (!st.isDirectory()) {
      out.push(readOne(p));
      continue;
    }
    const before = out.length;
    walk(p, out);
    if (out.length === before) out.push({ path: p, text: '', bytes: 0, unreadable: 'the directory holds no files' });
  }
  if (out.length > 0 && out.every((x) => x.unreadable !== undefined)) throw new InputError(out.map((x) => `${x.path}: ${x.unreadable}`).join('\n'));
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
  if (input.unreadable !== undefined) {
    return { path: input.path, bytes: 0, format: 'unknown', diagnostics: [diagnostic('error', 'input/unreadable', `cannot read: ${input.unreadable}`, input.path, 1, 1)] };
  }
  const format = forced ?? detectFormat(input.text);
  if (!format) {
    const empty = input.text.trim() === '';
    const d = diagnostic(
      empty ? 'info' : 'error',
      empty ? 'input/empty' : 'input/unknown-format',
      empty
        ? 'the file is empty'
        : 'kpx cannot tell what this file is; it reads iptables-save, ip6tables-save, ipset list/save, ipvsadm -Ln, ip route, ip rule, ip addr, ip -d link, bridge -d link, sysfs hairpin_mode listings, sysctl, uname and nft list ruleset output',
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
