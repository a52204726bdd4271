/**
 * A bundle directory's entries, every one accounted for (issue 23): regular files are read;
 * a symlink is followed once (to a file: read under the link's name; to a directory: walked,
 * unless that directory is already being read — a loop — or was read through another name);
 * a named pipe, socket or device is listed and never opened (a FIFO nobody writes to would make
 * kpx wait forever; /dev/zero never ends); a directory deeper than MAX_DEPTH is listed, not read;
 * an entry that cannot be listed, stat'ed or opened is listed with the file system's reason.
 *
 * kpx's own files (manifest.json, the generator's truth.json), notes (README, NOTE, *.source)
 * and hidden files are not dumps and are left out, as always.
 */
import { lstatSync, readdirSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { fsReason } from './errors.js';
import type { RawInput } from './index.js';
import { fileInput, openable } from './index.js';

/** Files kpx writes itself into bundles (manifest, the generator's ground truth), notes and OS droppings: not dumps. */
export const IGNORED_NAMES = /^(manifest\.json|truth\.json|\.DS_Store|README(\.md)?|NOTE(\.txt)?|.*\.source)$/;

/** Directory levels below the bundle kpx reads (a cluster bundle is two: NODE/file). */
export const MAX_DEPTH = 8;

/** What a special file is, in words (`a named pipe (FIFO)`), or undefined for files and directories. */
export function specialKind(st: Stats): string | undefined {
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isFile() || st.isDirectory()) return undefined;
  return 'not a regular file';
}

const NOT_OPENED = 'kpx reads regular files in a bundle and never opens pipes, sockets or devices (it could wait forever or read without end); not read';

/** Append the bundle's entries under `dir` to `out`, in name order (`all`: kpx's own files and notes too). */
export function walkBundle(dir: string, out: RawInput[], opts: { readonly all?: boolean } = {}): void {
  const seen = new Map<string, string>();
  const st = safeStat(dir);
  if (st) seen.set(dirKey(st), dir);
  walk(dir, out, 0, seen, st ? [dirKey(st)] : [], opts.all === true);
}

const dirKey = (st: Stats) => `${st.dev}:${st.ino}`;

function safeStat(p: string): Stats | undefined {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
}

function walk(dir: string, out: RawInput[], depth: number, seen: Map<string, string>, ancestors: string[], all: boolean): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (e) {
    out.push({ path: dir, bytes: 0, unreadable: `cannot list the directory: ${fsReason(e)}` });
    return;
  }
  for (const name of names) {
    if (name.startsWith('.')) continue;
    const p = join(dir, name);
    let lst: Stats;
    try {
      lst = lstatSync(p);
    } catch (e) {
      out.push({ path: p, bytes: 0, unreadable: fsReason(e) });
      continue;
    }
    let st = lst;
    let via = '';
    if (lst.isSymbolicLink()) {
      let target = '?';
      try {
        target = readlinkSync(p);
      } catch {
        // the reason comes from stat below
      }
      via = `a symlink to ${target}, `;
      try {
        st = statSync(p);
      } catch (e) {
        out.push({ path: p, bytes: 0, unreadable: fsReason(e) });
        continue;
      }
    }
    if (st.isDirectory()) {
      const key = dirKey(st);
      if (ancestors.includes(key)) {
        out.push({ path: p, bytes: 0, unreadable: `${via}a directory that contains it: a symlink loop (ELOOP); followed once, not again`, unreadableCode: 'input/symlink-loop' });
        continue;
      }
      const earlier = seen.get(key);
      if (earlier !== undefined) {
        out.push({ path: p, bytes: 0, unreadable: `${via}the directory ${earlier}, already read; not read twice`, unreadableCode: 'input/duplicate' });
        continue;
      }
      if (depth + 1 > MAX_DEPTH) {
        out.push({ path: p, bytes: 0, unreadable: `${via}a directory more than ${MAX_DEPTH} levels deep in the bundle; not read (name it with -i to read it)`, unreadableCode: 'input/too-deep' });
        continue;
      }
      seen.set(key, p);
      walk(p, out, depth + 1, seen, [...ancestors, key], all);
      continue;
    }
    const special = specialKind(st);
    if (special !== undefined) {
      out.push({ path: p, bytes: 0, unreadable: `${via}${special}: ${NOT_OPENED}`, unreadableCode: 'input/special-file' });
      continue;
    }
    if (!all && IGNORED_NAMES.test(name)) continue;
    const why = openable(p);
    out.push(why === undefined ? fileInput(p, st.size) : { path: p, bytes: 0, unreadable: via ? `${via}${why}` : why });
  }
}
