/**
 * A bundle directory's entries, every one accounted for (issues 23 and 34). A bundle is untrusted
 * (copied off a node, pasted by a stranger), so a walk stays inside it and is bounded:
 *
 * - regular files are read; a symlink is followed only while it stays inside the bundle (its
 *   real path under the bundle's real path): one that leaves it is listed as outside the bundle
 *   and not read, unless the user asks (--follow-symlinks); a link into
 *   /proc, /sys or /dev is never followed, asked or not;
 * - a symlink to a directory is walked unless that directory is already being read (a loop) or
 *   was read through another name;
 * - a named pipe, socket or device is listed and never opened (a FIFO nobody writes to would make
 *   kpx wait forever; /dev/zero never ends); a directory deeper than MAX_DEPTH is listed, not read;
 * - at most MAX_ENTRIES entries are listed, and at most 8 × --max-input-size of files (by their
 *   size on disk) are read from one bundle: the rest is listed as not read, with the limit;
 * - an entry that cannot be listed, stat'ed or opened is listed with the file system's reason.
 *
 * kpx's own files (manifest.json, the generator's truth.json), notes (README, NOTE, *.source) and
 * hidden files are not dumps: each is listed with why it was left out (`leftOut`), so that a dump
 * named `.iptables-save` is never silently unread.
 */
import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync, type Stats } from 'node:fs';
import { join, sep } from 'node:path';
import { fsReason } from './errors.js';
import { fileInput, openable, type RawInput } from './raw-input.js';
import { DEFAULT_INPUT_SETTINGS, sizeWords, type InputLimits } from './input.js';

/** Files kpx writes itself into bundles (manifest, the generator's ground truth), notes and OS droppings: not dumps. */
export const IGNORED_NAMES = /^(manifest\.json|truth\.json|README(\.md)?|NOTE(\.txt)?|.*\.source)$/;

/** Directory levels below the bundle kpx reads (a cluster bundle is two: NODE/file). */
export const MAX_DEPTH = 8;

/** Entries listed from one bundle (files, directories, links, refusals): a real bundle has dozens. */
export const MAX_ENTRIES = 50_000;

/** Bytes on disk of the files read from one bundle, as a multiple of --max-input-size. */
export const BUNDLE_BYTES_FACTOR = 8;

/** Trees of the running system a link in a bundle must never lead kpx into (reading them sniffs this machine). */
const SYSTEM_TREES = ['/proc', '/sys', '/dev'];

/** Why a bundle entry that is not a dump was left out. */
export function leftOutReason(name: string): string | undefined {
  if (name.startsWith('.')) return 'a hidden file: kpx does not read hidden files in a bundle as dumps (rename it to read it)';
  if (name === 'manifest.json') return "kpx collect's manifest: read for the node's name and the collection's steps, not as a dump";
  if (name === 'truth.json') return "the generator's ground truth: not a dump";
  if (/^(README(\.md)?|NOTE(\.txt)?)$/.test(name)) return 'a note: not a dump';
  if (name.endsWith('.source')) return "a sample's source note: not a dump";
  return undefined;
}

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

export interface WalkOptions {
  /** Follow symlinks that leave the bundle (never into /proc, /sys, /dev). Default: no (--follow-symlinks says yes). */
  readonly followOutside?: boolean;
  readonly limits?: InputLimits;
  /** At most this many entries (default MAX_ENTRIES; tests lower it). */
  readonly maxEntries?: number;
}

/** Is `real` (a real path) `root` or inside it? */
export function inside(root: string, real: string): boolean {
  return real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);
}

function inSystemTree(real: string): boolean {
  return SYSTEM_TREES.some((t) => inside(t, real));
}

/**
 * Where a symlink in a bundle leads, when kpx may follow it: its stat, or the row that lists it
 * instead (outside the bundle, into /proc, dangling, a loop).
 */
export function followLink(root: string, p: string, follow: boolean): { st: Stats; via: string } | RawInput {
  let target = '?';
  try {
    target = readlinkSync(p);
  } catch {
    // the reason comes from realpath below
  }
  const via = `a symlink to ${target}, `;
  let real: string;
  try {
    real = realpathSync(p);
  } catch (e) {
    return { path: p, bytes: 0, unreadable: fsReason(e) };
  }
  if (!inside(root, real)) {
    if (inSystemTree(real)) {
      return { path: p, bytes: 0, unreadable: `${via}in ${real}, outside the bundle, in the running system's ${SYSTEM_TREES.find((t) => inside(t, real))}: never followed from a bundle; not read`, unreadableCode: 'input/outside-bundle' };
    }
    if (!follow) {
      return { path: p, bytes: 0, unreadable: `${via}outside the bundle (${real}): not followed, so a bundle cannot make kpx read this machine's files (--follow-symlinks to read it)`, unreadableCode: 'input/outside-bundle' };
    }
  }
  try {
    return { st: statSync(p), via };
  } catch (e) {
    return { path: p, bytes: 0, unreadable: fsReason(e) };
  }
}

interface Walk {
  readonly root: string;
  readonly out: RawInput[];
  readonly seen: Map<string, string>;
  readonly follow: boolean;
  readonly maxBytes: number;
  readonly maxEntries: number;
  entries: number;
  bytes: number;
  stopped: boolean;
}

/** Append the bundle's entries under `dir` to `out`, in name order. */
export function walkBundle(dir: string, out: RawInput[], opts: WalkOptions = {}): void {
  let root = dir;
  try {
    root = realpathSync(dir);
  } catch {
    // listed by walk() with the file system's reason
  }
  const limits = opts.limits ?? DEFAULT_INPUT_SETTINGS.limits;
  const w: Walk = { root, out, seen: new Map(), follow: opts.followOutside ?? DEFAULT_INPUT_SETTINGS.followSymlinks, maxBytes: BUNDLE_BYTES_FACTOR * limits.maxBytes, maxEntries: opts.maxEntries ?? MAX_ENTRIES, entries: 0, bytes: 0, stopped: false };
  const st = safeStat(dir);
  if (st) w.seen.set(dirKey(st), dir);
  walk(w, dir, 0, st ? [dirKey(st)] : []);
}

const dirKey = (st: Stats) => `${st.dev}:${st.ino}`;

function safeStat(p: string): Stats | undefined {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
}

/** One more entry listed; false (and one row saying so) once the bundle holds more than MAX_ENTRIES. */
function count(w: Walk, dir: string): boolean {
  if (w.stopped) return false;
  if (++w.entries <= w.maxEntries) return true;
  w.stopped = true;
  w.out.push({ path: dir, bytes: 0, unreadable: `the bundle holds more than ${w.maxEntries.toLocaleString('en-US')} entries, the most kpx lists from one bundle: the entries from here on are not read`, unreadableCode: 'input/too-many-entries' });
  return false;
}

function walk(w: Walk, dir: string, depth: number, ancestors: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (e) {
    w.out.push({ path: dir, bytes: 0, unreadable: `cannot list the directory: ${fsReason(e)}` });
    return;
  }
  for (const name of names) {
    if (!count(w, dir)) return;
    entry(w, dir, name, depth, ancestors);
  }
}

function entry(w: Walk, dir: string, name: string, depth: number, ancestors: string[]): void {
  const p = join(dir, name);
  const out = w.out;
  let lst: Stats;
  try {
    lst = lstatSync(p);
  } catch (e) {
    out.push({ path: p, bytes: 0, unreadable: fsReason(e) });
    return;
  }
  const leftOut = leftOutReason(name);
  if (leftOut !== undefined) {
    // Listed, never followed or read as a dump; a regular file is sniffed (parseInput) so that a
    // dump under such a name is said.
    out.push({ path: p, bytes: lst.isFile() ? lst.size : 0, unreadable: leftOut, unreadableCode: 'input/left-out', ...(lst.isFile() ? { leftOut: true, open: fileInput(p, lst.size).open } : {}) });
    return;
  }
  let st = lst;
  let via = '';
  if (lst.isSymbolicLink()) {
    const f = followLink(w.root, p, w.follow);
    if (!('st' in f)) {
      out.push(f as RawInput);
      return;
    }
    st = f.st;
    via = f.via;
  }
  if (st.isDirectory()) {
    const key = dirKey(st);
    if (ancestors.includes(key)) {
      out.push({ path: p, bytes: 0, unreadable: `${via}a directory that contains it: a symlink loop (ELOOP); followed once, not again`, unreadableCode: 'input/symlink-loop' });
      return;
    }
    const earlier = w.seen.get(key);
    if (earlier !== undefined) {
      out.push({ path: p, bytes: 0, unreadable: `${via}the directory ${earlier}, already read; not read twice`, unreadableCode: 'input/duplicate' });
      return;
    }
    if (depth + 1 > MAX_DEPTH) {
      out.push({ path: p, bytes: 0, unreadable: `${via}a directory more than ${MAX_DEPTH} levels deep in the bundle; not read (name it with -i to read it)`, unreadableCode: 'input/too-deep' });
      return;
    }
    w.seen.set(key, p);
    walk(w, p, depth + 1, [...ancestors, key]);
    return;
  }
  const special = specialKind(st);
  if (special !== undefined) {
    out.push({ path: p, bytes: 0, unreadable: `${via}${special}: ${NOT_OPENED}`, unreadableCode: 'input/special-file' });
    return;
  }
  if (w.bytes + st.size > w.maxBytes) {
    out.push({
      path: p,
      bytes: st.size,
      unreadable: `the bundle's files add up to more than ${sizeWords(w.maxBytes)} (${BUNDLE_BYTES_FACTOR} × --max-input-size), the most kpx reads from one bundle; not read (name it with -i, or raise --max-input-size)`,
      unreadableCode: 'input/too-large',
    });
    return;
  }
  w.bytes += st.size;
  const why = openable(p);
  out.push(why === undefined ? fileInput(p, st.size) : { path: p, bytes: 0, unreadable: via ? `${via}${why}` : why });
}
