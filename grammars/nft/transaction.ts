/**
 * The `nft -f` transaction form, one command per logical line (nftables `src/parser_bison.y`:
 * base_cmd → add_cmd / create_cmd / insert_cmd / replace_cmd / delete_cmd / destroy_cmd /
 * flush_cmd), as kube-proxy's nftables mode writes it through knftables:
 *
 *   add table ip kube-proxy { comment "rules for kube-proxy" ; }
 *   add chain ip kube-proxy filter-input { type filter hook input priority -110 ; }
 *   add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips
 *   add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto service-… }
 *
 * This module only reads a command's shape; applying it (what exists, what nft refuses) is the
 * extractor's job (src/extract/nft-transaction.ts).
 */
import type { SynChain, SynCommand, SynCommandObject, SynCommandVerb, SynRule, SynSet } from '../common/nft-syntax.js';
import type { Atom, GroupAtom, TokenAtom } from './parser.js';
import { parseChainSpec, parseSetProperty } from './properties.js';
import { atomText, atomsText, Cursor, type RuleProblem } from './cursor.js';
import { parseGroupElements } from './elements.js';
import { classifyRule } from './rule.js';
import { appendAll } from '../common/source.js';

type Mut<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer U)[] ? U[] : T[K] };

export const COMMAND_VERBS: ReadonlySet<string> = new Set(['add', 'create', 'insert', 'replace', 'delete', 'destroy', 'flush']);
/** Commands nft -f accepts that do not change the ruleset kpx models (or that kpx does not apply). */
export const OTHER_VERBS: ReadonlySet<string> = new Set(['list', 'reset', 'rename', 'monitor', 'describe', 'export', 'import', 'get']);
const FAMILIES = new Set(['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev']);
const OBJECTS = new Set<string>(['table', 'chain', 'rule', 'set', 'map', 'element', 'ruleset']);
/** Objects nft -f knows that kpx does not model (kept as unsupported, like their listing form). */
const OTHER_OBJECTS = new Set(['flowtable', 'counter', 'quota', 'limit', 'secmark', 'synproxy', 'ct', 'tunnel', 'counters', 'quotas', 'limits', 'maps', 'sets', 'tables', 'chains', 'flowtables']);

/** Which verbs take which objects (parser_bison.y). */
const VERB_OBJECTS: Record<SynCommandVerb, ReadonlySet<string>> = {
  add: new Set(['table', 'chain', 'rule', 'set', 'map', 'element']),
  create: new Set(['table', 'chain', 'set', 'map', 'element']),
  insert: new Set(['rule']),
  replace: new Set(['rule']),
  delete: new Set(['table', 'chain', 'rule', 'set', 'map', 'element']),
  destroy: new Set(['table', 'chain', 'rule', 'set', 'map', 'element']),
  flush: new Set(['table', 'chain', 'set', 'map', 'ruleset']),
};

export type CommandResult =
  | { readonly kind: 'command'; readonly command: SynCommand }
  | { readonly kind: 'ignored'; readonly verb: string; readonly object: string }
  | { readonly kind: 'error' };

const isName = (a: Atom | undefined): a is TokenAtom => a !== undefined && (a.t === 'word' || a.t === 'string');

/** The rule scanner's cursor, with what a command line needs on top: names, numbers, "expected …" errors. */
class Words extends Cursor {
  fail(expected: string, what: string): void {
    const at = this.peek();
    this.error(at, `expected ${what} but found ${at ? atomText(at) : 'end of line'}`, expected);
  }
  /** A name (word or quoted string), or an error. */
  name(what: string): TokenAtom | undefined {
    const a = this.peek();
    if (isName(a)) {
      this.i++;
      return a;
    }
    this.fail(what, what);
    return undefined;
  }
  number(): number | undefined {
    const w = this.word();
    if (w !== undefined && /^\d+$/.test(w)) {
      this.i++;
      return Number(w);
    }
    this.fail('number', 'a number');
    return undefined;
  }
}

/** Statements inside a `{ … }` block: split at `;`, at line breaks and at top-level commas' neighbours. */
function blockStatements(g: GroupAtom): Atom[][] {
  const flat: Atom[] = [];
  g.elements.forEach((el, k) => {
    if (k > 0) flat.push({ t: 'op', text: ',', line: el[0]?.line ?? g.line, column: el[0]?.column ?? g.column });
    appendAll(flat, el);
  });
  const out: Atom[][] = [];
  let cur: Atom[] = [];
  for (const a of flat) {
    if (a.t === 'op' && a.text === ';') {
      if (cur.length) out.push(cur);
      cur = [];
      continue;
    }
    if (cur.length && a.line !== cur[cur.length - 1].line && !(a.t === 'op' && a.text === ',') && !(cur[cur.length - 1].t === 'op' && (cur[cur.length - 1] as TokenAtom).text === ',')) {
      out.push(cur);
      cur = [];
    }
    cur.push(a);
  }
  if (cur.length) out.push(cur);
  return out;
}

const CHAIN_SPEC_WORDS = new Set(['type', 'hook', 'priority', 'policy', 'device', 'devices']);

function chainBlock(g: GroupAtom, name: string, line: number, problems: RuleProblem[]): Mut<SynChain> {
  const chain: Mut<SynChain> = { name, rules: [], line };
  for (const st of blockStatements(g)) {
    const w0 = st[0].t === 'word' ? (st[0] as TokenAtom).text : undefined;
    if (w0 === 'comment' && st.length === 2 && isName(st[1])) chain.comment = st[1].text;
    else if (w0 !== undefined && CHAIN_SPEC_WORDS.has(w0)) parseChainSpec(st, chain, line, problems);
    else {
      // `add chain … { …; RULE; }`: nft takes rules in a chain block too.
      const r = classifyRule(st, line, problems);
      chain.rules.push({ exprs: r.exprs, ...(r.comment !== undefined ? { comment: r.comment } : {}), raw: atomsText(st), line: line + st[0].line, column: st[0].column });
    }
  }
  return chain;
}

function setBlock(g: GroupAtom, name: string, kind: 'set' | 'map', line: number, problems: RuleProblem[]): Mut<SynSet> {
  const set: Mut<SynSet> = { name, kind, keyType: [], flags: [], elements: [], line };
  for (const st of blockStatements(g)) {
    if (!parseSetProperty(st, set, line, problems)) {
      problems.push({ severity: 'error', code: 'parse/unexpected-token', line: line + st[0].line, column: st[0].column, message: `unknown ${kind} property ${atomsText(st.slice(0, 1))}`, expected: 'type | typeof | flags | timeout | size | policy | comment | elements', found: atomsText(st) });
    }
  }
  return set;
}

function tableBlock(g: GroupAtom, line: number, problems: RuleProblem[]): { comment?: string; flags: string[] } {
  const spec: { comment?: string; flags: string[] } = { flags: [] };
  for (const st of blockStatements(g)) {
    const w0 = st[0].t === 'word' ? (st[0] as TokenAtom).text : undefined;
    if (w0 === 'comment' && isName(st[1])) spec.comment = st[1].text;
    else if (w0 === 'flags' && st.length > 1) appendAll(spec.flags, atomsText(st.slice(1)).split(/[\s,]+/).filter(Boolean));
    else problems.push({ severity: 'error', code: 'parse/unexpected-token', line: line + st[0].line, column: st[0].column, message: `unexpected ${atomsText(st.slice(0, 1))} in a table block`, expected: 'comment | flags', found: atomsText(st) });
  }
  return spec;
}

/**
 * Read one command line (its atoms, the first being the verb). `raw` is the logical line's
 * text, used for the rule's `raw` (as the listing keeps it).
 */
export function parseCommand(atoms: readonly Atom[], raw: string, line: number, problems: RuleProblem[]): CommandResult {
  const w = new Words(atoms, line, problems);
  const verbAtom = atoms[0] as TokenAtom;
  const verbText = verbAtom.text;
  w.i = 1;
  if (OTHER_VERBS.has(verbText)) return { kind: 'ignored', verb: verbText, object: w.word() ?? '' };
  const verb = verbText as SynCommandVerb;
  let objectWord = w.word();
  // `add ip t c accept`: nft reads an add/insert without an object keyword as a rule.
  if ((verb === 'add' || verb === 'insert') && (objectWord === undefined || (!OBJECTS.has(objectWord) && !OTHER_OBJECTS.has(objectWord)))) objectWord = 'rule';
  else w.i++;
  if (objectWord !== undefined && OTHER_OBJECTS.has(objectWord)) return { kind: 'ignored', verb, object: objectWord };
  if (objectWord === undefined || !VERB_OBJECTS[verb].has(objectWord)) {
    w.i = 1;
    w.fail([...VERB_OBJECTS[verb]].join(' | '), `${[...VERB_OBJECTS[verb]].join(', ')} after ${verb}`);
    return { kind: 'error' };
  }
  const object = objectWord as SynCommandObject;
  // nft's default family is ip; `flush ruleset` without one flushes every family ('').
  let family = object === 'ruleset' ? '' : 'ip';
  const fw = w.word();
  if (fw !== undefined && FAMILIES.has(fw)) {
    family = fw;
    w.i++;
  }
  const c = new CommandLine(w, raw, problems, { verb, object, family, line, column: verbAtom.column });
  if (object === 'ruleset') return c.done({}, verbAtom.column);
  if (object === 'table') return c.table();
  const tableAtom = w.name('a table name');
  if (!tableAtom) return { kind: 'error' };
  const table = tableAtom.text;
  if (object === 'chain' || object === 'set' || object === 'map') return c.namedObject(table, object);
  if (object === 'element') return c.element(table);
  return c.rule(table);
}

type CommandBase = Pick<SynCommand, 'verb' | 'object' | 'family' | 'line' | 'column'>;

/** The rest of one command line, after its verb, object and family. */
class CommandLine {
  /** Errors before the command's arguments: an error among them makes the command one nft refuses. */
  private readonly errorsBefore: number;
  private readonly verb: SynCommandVerb;
  private readonly line: number;

  constructor(
    private readonly w: Words,
    private readonly raw: string,
    private readonly problems: RuleProblem[],
    private readonly base: CommandBase,
  ) {
    this.errorsBefore = problems.filter((p) => p.severity === 'error').length;
    this.verb = base.verb;
    this.line = base.line;
  }

  done(extra: Partial<Mut<SynCommand>>, nameColumn: number): CommandResult {
    // A command nft would refuse to parse is not applied (nft applies nothing of such a file).
    if (this.problems.filter((p) => p.severity === 'error').length > this.errorsBefore) return { kind: 'error' };
    const rest = this.w.peek();
    if (rest && !(rest.t === 'op' && (rest as TokenAtom).text === ';') && rest.t !== 'comment') {
      this.w.fail('end of command', 'the end of the command');
      return { kind: 'error' };
    }
    return { kind: 'command', command: { ...this.base, ...extra, nameColumn } };
  }

  /** `handle N` of a delete/destroy by handle, or undefined (cursor unchanged) without one. */
  private handleRef(): number | undefined {
    if (this.verb !== 'delete' && this.verb !== 'destroy') return undefined;
    if (this.w.word() !== 'handle') return undefined;
    this.w.i++;
    return this.w.number();
  }

  private get adds(): boolean {
    return this.verb === 'add' || this.verb === 'create';
  }

  table(): CommandResult {
    const w = this.w;
    const h = this.handleRef();
    if (h !== undefined) return this.done({ handle: h }, w.atoms[w.i - 1].column);
    const nameAtom = w.name('a table name');
    if (!nameAtom) return { kind: 'error' };
    let tableSpec: { comment?: string; flags: string[] } | undefined;
    const g = w.peek();
    if (this.adds && g?.t === 'group') {
      tableSpec = tableBlock(g, this.line, this.problems);
      w.i++;
    }
    return this.done({ table: nameAtom.text, ...(tableSpec ? { tableSpec } : {}) }, nameAtom.column);
  }

  /** `chain`, `set` or `map`, by handle or by name with an optional `{ … }` block. */
  namedObject(table: string, object: 'chain' | 'set' | 'map'): CommandResult {
    const w = this.w;
    const h = this.handleRef();
    if (h !== undefined) return this.done({ table, handle: h }, w.atoms[w.i - 1].column);
    const nameAtom = w.name(`a ${object} name`);
    if (!nameAtom) return { kind: 'error' };
    const g = w.peek();
    if (this.adds && g?.t === 'group') {
      w.i++;
      if (object === 'chain') return this.done({ table, name: nameAtom.text, chain: chainBlock(g, nameAtom.text, this.line, this.problems) }, nameAtom.column);
      return this.done({ table, name: nameAtom.text, set: setBlock(g, nameAtom.text, object, this.line, this.problems) }, nameAtom.column);
    }
    if (this.adds && object !== 'chain') {
      // nft requires the key type of a new set or map: `add set ip t s { type … ; }`.
      w.fail('{', `{ type … } after the ${object} name`);
      return { kind: 'error' };
    }
    return this.done({ table, name: nameAtom.text }, nameAtom.column);
  }

  element(table: string): CommandResult {
    const w = this.w;
    const nameAtom = w.name('a set or map name');
    if (!nameAtom) return { kind: 'error' };
    const g = w.peek();
    if (g?.t !== 'group') {
      w.fail('{', '{ elements }');
      return { kind: 'error' };
    }
    w.i++;
    const elements = parseGroupElements(g, this.line, this.problems);
    return this.done({ table, name: nameAtom.text, elements }, elements[0]?.column ?? g.column);
  }

  rule(table: string): CommandResult {
    const w = this.w;
    const chainAtom = w.name('a chain name');
    if (!chainAtom) return { kind: 'error' };
    const place = this.rulePlace(chainAtom.column);
    if (!place) return { kind: 'error' };
    const { handle, position, handleColumn } = place;
    if (this.verb === 'delete' || this.verb === 'destroy') return this.done({ table, name: chainAtom.text, handle }, handleColumn);
    const ruleAtoms = w.atoms.slice(w.i);
    if (ruleAtoms.length === 0) {
      w.fail('a rule', 'a rule');
      return { kind: 'error' };
    }
    const r = classifyRule(ruleAtoms, this.line, this.problems);
    const first = ruleAtoms[0];
    const rule: Mut<SynRule> = {
      exprs: r.exprs,
      raw: first.line === 0 ? this.raw.slice(first.column - 1).trim() : atomsText(ruleAtoms),
      line: this.line + first.line,
      column: first.column,
    };
    if (r.comment !== undefined) rule.comment = r.comment;
    w.i = w.atoms.length;
    const extra: Partial<Mut<SynCommand>> = { table, name: chainAtom.text, rule };
    if (handle !== undefined) extra.handle = handle;
    if (position) extra.position = position;
    return this.done(extra, handle !== undefined ? handleColumn : chainAtom.column);
  }

  /**
   * A rule's `handle N` (replace, delete, destroy: required) or `handle|position|index N` (add,
   * insert: where it goes); undefined after an error.
   */
  private rulePlace(chainColumn: number): { handle?: number; position?: SynCommand['position']; handleColumn: number } | undefined {
    const w = this.w;
    const byHandle = this.verb === 'replace' || this.verb === 'delete' || this.verb === 'destroy';
    let handle: number | undefined;
    let position: SynCommand['position'];
    let handleColumn = chainColumn;
    const pw = w.word();
    if (pw === 'handle' || pw === 'position' || pw === 'index') {
      w.i++;
      handleColumn = w.peek()?.column ?? handleColumn;
      const n = w.number();
      if (n === undefined) return undefined;
      if (byHandle) {
        if (pw === 'index') {
          w.i -= 2;
          w.fail('handle', 'handle N');
          return undefined;
        }
        handle = n;
      } else position = { by: pw === 'index' ? 'index' : 'handle', value: n };
    }
    if (byHandle && handle === undefined) {
      w.fail('handle', 'handle N');
      return undefined;
    }
    return { handle, position, handleColumn };
  }
}
