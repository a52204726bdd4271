/**
 * Restore-form variants of canonical iptables-save rules, for the differential tests against
 * the real iptables-restore (issue 14). A variant is decided by a vector of choices (drawn by
 * fast-check); every choice at 0 gives the canonical rule back, so a failing variant shrinks
 * toward the canonical line, to the smallest change that still disagrees.
 *
 * What varies: the order of generic options, `-m` blocks, module options and target options
 * (within what getopt allows: an option after the extension it belongs to), `-m PROTO` dropped
 * (the implicit protocol match), negation added or removed on options that take it (not `-p`), long
 * spellings (`--source`, `--match`, `--jump`), aliases and unique-prefix abbreviations, bare
 * addresses and dotted masks, marks in hex/decimal/octal and MARK's five operations,
 * probabilities with 10 or 11 digits, quoted bare comments — and deliberately broken variants
 * (a stray word, a missing argument, an option twice, `!` where none is allowed, `! !`, a
 * trailing `!`, an unknown or ambiguous option, an implicit option before `-p`, a module
 * without its required option). Whether a variant is legal is not decided here: the real
 * tool decides, the test compares kpx with it.
 */
import { GLOBAL_OPTIONS, matchSpec, targetSpec, type ExtensionSpec } from '../../grammars/iptables-save/extensions.js';

export interface SourceRule {
  readonly table: string;
  readonly line: string;
}

type Unit =
  | { k: 'generic'; neg: boolean; opt: string; arg: string | undefined }
  | { k: 'load'; id: number; name: string }
  | { k: 'target'; id: number; name: string; goto: boolean }
  | { k: 'opt'; id: number; neg: boolean; name: string; args: string[] };

interface Canonical {
  chain: string;
  units: Unit[];
  exts: Map<number, { name: string; spec: ExtensionSpec | undefined; kind: 'match' | 'target' }>;
}

/** The words of a line: bare words and "quoted strings" (with \" inside). */
export function splitWords(line: string): string[] {
  return line.match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
}

const GENERIC_WITH_ARG = new Set(['-s', '-d', '-i', '-o', '-p']);

function parseCanonical(line: string): Canonical {
  const w = splitWords(line);
  const c: Canonical = { chain: w[1], units: [], exts: new Map() };
  let neg = false;
  let current = -1;
  let id = 0;
  for (let i = 2; i < w.length; ) {
    const word = w[i];
    if (word === '!') {
      neg = true;
      i++;
      continue;
    }
    if (GENERIC_WITH_ARG.has(word)) {
      c.units.push({ k: 'generic', neg, opt: word, arg: w[i + 1] });
      i += 2;
    } else if (word === '-f') {
      c.units.push({ k: 'generic', neg, opt: word, arg: undefined });
      i++;
    } else if (word === '-m') {
      current = id++;
      c.exts.set(current, { name: w[i + 1], spec: matchSpec(w[i + 1]), kind: 'match' });
      c.units.push({ k: 'load', id: current, name: w[i + 1] });
      i += 2;
    } else if (word === '-j' || word === '-g') {
      current = id++;
      c.exts.set(current, { name: w[i + 1], spec: targetSpec(w[i + 1]), kind: 'target' });
      c.units.push({ k: 'target', id: current, name: w[i + 1], goto: word === '-g' });
      i += 2;
    } else {
      const args: string[] = [];
      let j = i + 1;
      while (j < w.length && w[j] !== '!' && !w[j].startsWith('--') && !['-m', '-j', '-g', '-f', ...GENERIC_WITH_ARG].includes(w[j])) args.push(w[j++]);
      c.units.push({ k: 'opt', id: current, neg, name: word, args });
      i = j;
    }
    neg = false;
  }
  return c;
}

/** Reads choices in turn; a choice of 0 always means "as in the canonical rule". */
class Choices {
  private i = 0;
  constructor(private readonly values: readonly number[]) {}
  next(n: number): number {
    if (n <= 1 || this.values.length === 0) return 0;
    return this.values[this.i++ % this.values.length] % n;
  }
}

const GENERIC_SPELLINGS: Record<string, string[]> = {
  '-s': ['-s', '--source', '--src'],
  '-d': ['-d', '--destination', '--dst'],
  '-i': ['-i', '--in-interface'],
  '-o': ['-o', '--out-interface'],
  '-p': ['-p', '--protocol'],
  '-f': ['-f', '--fragment'],
};

/** The shortest prefix of `name` that names only `name` (or its aliases) among `all`. */
function abbreviations(name: string, aliases: readonly string[], all: readonly string[]): string[] {
  const out: string[] = [];
  for (let len = 3; len < name.length; len++) {
    const prefix = name.slice(0, len);
    if (all.every((o) => !o.startsWith(prefix) || aliases.includes(o))) out.push(prefix);
  }
  return out;
}

function toDotted(prefix: number): string {
  const m = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return [24, 16, 8, 0].map((s) => (m >>> s) & 255).join('.');
}

function address(arg: string, choice: number): string {
  const [ip, len] = arg.split('/');
  if (choice === 1 && (len === '32' || len === '128')) return ip;
  if (choice === 2 && len !== undefined && !ip.includes(':')) return `${ip}/${toDotted(Number(len))}`;
  return arg;
}

function markText(v: number, style: number): string {
  if (style === 1) return String(v >>> 0);
  if (style === 2 && v !== 0) return `0${(v >>> 0).toString(8)}`;
  return `0x${(v >>> 0).toString(16)}`;
}

function parseMark(text: string): [number, number | undefined] {
  const [v, m] = text.split('/');
  return [Number(v), m === undefined ? undefined : Number(m)];
}

const BROKEN = ['stray-word', 'missing-arg', 'twice', 'bad-bang', 'double-bang', 'trailing-bang', 'unknown-option', 'ambiguous', 'implicit-first', 'no-options'] as const;

export interface Variant {
  readonly table: string;
  /** The rule line in restore form. */
  readonly line: string;
  /** Which deliberate breakage was applied (undefined: none; the tool still decides). */
  readonly broken: (typeof BROKEN)[number] | undefined;
}

/** A restore-form variant of a canonical rule, decided by `values` (all 0: the rule itself). */
export function variantOf(rule: SourceRule, values: readonly number[]): Variant {
  const c = parseCanonical(rule.line);
  const ch = new Choices(values);
  const units = c.units.map((u) => ({ ...u, ...(u.k === 'opt' ? { args: [...u.args] } : {}) })) as Unit[];
  const names = [...c.exts.values()].map((e) => e.name);
  const specOptions = [...c.exts.values()].flatMap((e) => e.spec?.options ?? []);
  // Options of different extensions spelled alike, a module loaded twice, or one kpx has no
  // table for: its options stay in its block (which extension getopt gives them to is subtle).
  const spellings = specOptions.flatMap((o) => o.spellings);
  const glued = new Set(spellings).size !== spellings.length || new Set(names).size !== names.length || [...c.exts.values()].some((e) => e.spec === undefined && e.kind === 'match');
  const allNames = [...GLOBAL_OPTIONS.map((g) => g.name), ...spellings];

  // 1. The implicit protocol match: drop `-m PROTO` after `-p PROTO`.
  const protoUnit = units.find((u) => u.k === 'generic' && u.opt === '-p');
  const protocol = protoUnit?.k === 'generic' ? protoUnit.arg : undefined;
  const protoLoad = units.find((u) => u.k === 'load' && u.name === protocol);
  let implicitId = -1;
  if (!glued && protoLoad?.k === 'load' && ch.next(2) === 1 && units.some((u) => u.k === 'opt' && u.id === protoLoad.id)) {
    implicitId = protoLoad.id;
    units.splice(units.indexOf(protoLoad), 1);
  }

  // 2. Words of each unit: spellings, negation, values.
  const text = new Map<Unit, string[]>();
  for (const u of units) {
    if (u.k === 'generic') {
      const spelled = GENERIC_SPELLINGS[u.opt][ch.next(GENERIC_SPELLINGS[u.opt].length)];
      // `! -p` is left as written: with protocol-dependent extensions the two backends (and
      // kernels) accept different things (grammars/iptables-save/extensions.ts, needsProtocol).
      const neg = u.opt !== '-p' && ch.next(6) === 1 ? !u.neg : u.neg;
      let arg = u.arg;
      if (arg !== undefined && (u.opt === '-s' || u.opt === '-d')) arg = address(arg, ch.next(3));
      text.set(u, [...(neg ? ['!'] : []), spelled, ...(arg === undefined ? [] : [arg])]);
    } else if (u.k === 'load') {
      text.set(u, [ch.next(2) === 1 ? '--match' : '-m', u.name]);
    } else if (u.k === 'target') {
      text.set(u, [u.goto ? (ch.next(2) === 1 ? '--goto' : '-g') : ch.next(2) === 1 ? '--jump' : '-j', u.name]);
    } else {
      const ext = c.exts.get(u.id)!;
      const spec = ext.spec?.options.find((o) => o.spellings.includes(u.name));
      let name = u.name;
      let neg = u.neg;
      let args = u.args;
      if (spec !== undefined) {
        const forms = [...spec.spellings, ...abbreviations(u.name, spec.spellings, allNames)];
        name = forms[ch.next(forms.length)];
        if (spec.invert && ch.next(6) === 1) neg = !neg;
      }
      args = varyValue(ext.name, u.name, args, ch);
      if (ext.name === 'MARK' || ext.name === 'CONNMARK') [name, args] = varyMarkTarget(name, args, ch);
      text.set(u, [...(neg ? ['!'] : []), name, ...args]);
    }
  }

  // 3. Order: a random key per unit, then each option after what it belongs to.
  const keyed = units.map((u, i) => ({ u, key: ch.next(1000), i }));
  keyed.sort((a, b) => a.key - b.key || a.i - b.i);
  const ordered = settle(keyed.map((k) => k.u), units, implicitId, glued);

  // 4. Perhaps break it on purpose.
  const words = ordered.map((u) => text.get(u)!);
  let broken: Variant['broken'];
  if (ch.next(10) === 9) {
    broken = BROKEN[ch.next(BROKEN.length)];
    breakIt(broken, words, ordered, text, ch, implicitId);
  }
  return { table: rule.table, line: ['-A', c.chain, ...words.flat()].join(' '), broken };
}

/** Units in `order`, each option moved after its extension (and implicit ones after `-p`). */
function settle(order: Unit[], original: Unit[], implicitId: number, glued: boolean): Unit[] {
  if (glued) {
    // Whole blocks move; their options stay right after them.
    const blocks = new Map<Unit, Unit[]>();
    let head: Unit | undefined;
    for (const u of original) {
      if (u.k === 'load' || u.k === 'target') blocks.set((head = u), [u]);
      else if (u.k === 'opt' && head !== undefined) blocks.get(head)!.push(u);
      else blocks.set(u, [u]);
    }
    return order.filter((u) => blocks.has(u)).flatMap((u) => blocks.get(u)!);
  }
  const out: Unit[] = [];
  const done = new Set<number>();
  let protoDone = false;
  const ready = (u: Unit) => u.k !== 'opt' || (u.id === implicitId ? protoDone : done.has(u.id));
  const pending = [...order];
  while (pending.length > 0) {
    const i = pending.findIndex(ready);
    const u = pending.splice(i < 0 ? 0 : i, 1)[0];
    out.push(u);
    if (u.k === 'load' || u.k === 'target') done.add(u.id);
    if (u.k === 'generic' && u.opt === '-p') protoDone = true;
  }
  return out;
}

function varyValue(ext: string, option: string, args: string[], ch: Choices): string[] {
  if (args.length === 0) return args;
  if ((ext === 'mark' || ext === 'connmark') && option === '--mark') {
    const [v, m] = parseMark(args[0]);
    const style = ch.next(3);
    return [m === undefined ? markText(v, style) : `${markText(v, style)}/${markText(m, ch.next(3))}`];
  }
  if (ext === 'statistic' && option === '--probability') {
    const form = ch.next(4);
    const p = form === 3 ? ch.next(1_000_001) / 1_000_000 : Number(args[0]);
    return [form === 1 ? p.toFixed(10) : form >= 2 ? p.toFixed(form === 2 ? 10 : 11) : args[0]];
  }
  if (ext === 'comment' && /^[A-Za-z0-9_-]+$/.test(args[0]) && ch.next(2) === 1) return [`"${args[0]}"`];
  return args;
}

/** MARK/CONNMARK `--set-xmark V/M` written as another operation (or values) the kernel stores alike or not. */
function varyMarkTarget(name: string, args: string[], ch: Choices): [string, string[]] {
  if (!'--set-xmark'.startsWith(name) || args.length !== 1) return [name, args];
  const op = ch.next(6);
  if (op === 0) return [name, args];
  const [v, m] = parseMark(args[0]);
  const style = ch.next(3);
  const value = ch.next(2) === 1 ? ch.next(0x7fffffff) : v;
  switch (op) {
    case 1:
      return ['--set-mark', [`${markText(value, style)}${m === 0xffffffff ? '' : `/${markText(m ?? 0xffffffff, style)}`}`]];
    case 2:
      return ['--or-mark', [markText(value, style)]];
    case 3:
      return ['--and-mark', [markText(value, style)]];
    case 4:
      return ['--xor-mark', [markText(value, style)]];
    default:
      return ['--set-xmark', [`${markText(value, style)}/${markText(m ?? 0xffffffff, style)}`]];
  }
}

function breakIt(kind: (typeof BROKEN)[number], words: string[][], units: Unit[], text: Map<Unit, string[]>, ch: Choices, implicitId: number): void {
  const at = ch.next(words.length + 1);
  const pick = <T>(xs: T[]): T | undefined => (xs.length === 0 ? undefined : xs[ch.next(xs.length)]);
  switch (kind) {
    case 'stray-word':
      words.splice(at, 0, ['kpx-stray']);
      return;
    case 'missing-arg': {
      const withArgs = words.filter((w) => w.length >= 2 && w[w.length - 1] !== '!' && !w[w.length - 1].startsWith('-'));
      const w = pick(withArgs);
      if (w) w.pop();
      return;
    }
    case 'twice': {
      const u = pick(units.filter((x) => x.k === 'opt' || x.k === 'generic'));
      if (u) words.splice(units.indexOf(u) + 1, 0, [...text.get(u)!]);
      return;
    }
    case 'bad-bang': {
      const w = pick(words.filter((x) => x[0] !== '!'));
      if (w) w.unshift('!');
      return;
    }
    case 'double-bang': {
      const w = pick(words);
      if (w) w.unshift('!', '!');
      return;
    }
    case 'trailing-bang':
      words.push(['!']);
      return;
    case 'unknown-option':
      words.splice(at, 0, ['--kpx-bogus', '1']);
      return;
    case 'ambiguous':
      words.splice(at, 0, ['--d', '10.0.0.1']);
      return;
    case 'implicit-first': {
      const i = units.findIndex((u) => u.k === 'opt' && u.id === implicitId);
      if (i >= 0) words.unshift(...words.splice(i, 1));
      return;
    }
    case 'no-options': {
      const load = pick(units.filter((u) => u.k === 'load'));
      if (load?.k !== 'load') return;
      for (let i = units.length - 1; i >= 0; i--) {
        const u = units[i];
        if (u.k === 'opt' && u.id === load.id) words.splice(i, 1);
      }
      return;
    }
  }
}
