/**
 * `ip rule show` / `ip -6 rule show` (iproute2 `ip/iprule.c print_rule()`): one rule per line,
 * `PRIO:⇥[not ]from SRC [to DST] [tos T] [fwmark M[/MASK]] [iif DEV] [oif DEV] [uidrange A-B]
 * [ipproto P] [sport/dport …] ACTION [proto P]`, ACTION = `lookup TABLE` | `goto PRIO` |
 * `unreachable` | `blackhole` | `prohibit` | `nop`. Lexed with Chevrotain (priority, `not`,
 * words); the words are read pairwise. `ip -j rule` is JSON (see json.ts).
 */
import { createToken, Lexer } from '../common/chevrotain.js';
import { diagnostic, printable, type Diagnostic } from '../common/source.js';
import { noiseKind, splitInput } from '../common/text.js';

const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t]+/, group: Lexer.SKIPPED });
const Priority = createToken({ name: 'Priority', pattern: /\d+:/ });
const Not = createToken({ name: 'Not', pattern: /not(?![^\s])/, longer_alt: undefined });
const Word = createToken({ name: 'Word', pattern: /\S+/ });
let lexer: Lexer | undefined;

export interface PolicyRuleSyntax {
  readonly priority: number;
  readonly not: boolean;
  /** selector/action name → value (`from` → `10.244.0.0/16`, `lookup` → `100`; flags → ''). */
  readonly fields: Readonly<Record<string, string>>;
  readonly line: number;
  readonly text: string;
}

const TAKES_VALUE = new Set(['from', 'to', 'tos', 'dsfield', 'fwmark', 'iif', 'oif', 'lookup', 'table', 'goto', 'proto', 'uidrange', 'ipproto', 'sport', 'dport', 'realms', 'suppress_prefixlength', 'suppress_ifgroup', 'nat', 'map-to', 'flowlabel', 'dscp']);
const FLAGS = new Set(['unreachable', 'blackhole', 'prohibit', 'nop', 'l3mdev', '[detached]', 'linkdown']);

export function parseIpRule(text: string, file: string): { rules: PolicyRuleSyntax[]; unsupported: { line: number; text: string; reason: string }[]; diagnostics: Diagnostic[] } {
  lexer ??= new Lexer([WhiteSpace, Priority, Not, Word], { positionTracking: 'onlyOffset' });
  const { lines } = splitInput(text);
  const rules: PolicyRuleSyntax[] = [];
  const unsupported: { line: number; text: string; reason: string }[] = [];
  const diagnostics: Diagnostic[] = [];
  lines.forEach((raw, i) => {
    const line = i + 1;
    const body = raw.trim();
    if (body === '') return;
    const noise = noiseKind(raw);
    if (noise || body.startsWith('#')) {
      unsupported.push({ line, text: body, reason: `noise: ${noise ?? 'comment'}` });
      diagnostics.push(diagnostic('info', 'input/noise', `ignored ${noise ?? 'comment'} line`, file, line, 1));
      return;
    }
    const toks = lexer!.tokenize(body).tokens;
    if (toks[0]?.tokenType !== Priority) {
      unsupported.push({ line, text: body, reason: 'not an ip rule line' });
      diagnostics.push(diagnostic('error', 'parse/unexpected-token', 'expected `PRIORITY:` at the start of an ip rule line', file, line, 1, { expected: 'a priority such as 32766:', found: printable(body.slice(0, 20)) }));
      return;
    }
    let k = 1;
    const not = toks[k]?.tokenType === Not;
    if (not) k++;
    const fields: Record<string, string> = {};
    while (k < toks.length) {
      const key = toks[k].image;
      if (TAKES_VALUE.has(key) && k + 1 < toks.length) {
        fields[key] = toks[k + 1].image;
        k += 2;
      } else {
        if (!FLAGS.has(key)) diagnostics.push(diagnostic('info', 'ip-rule/unknown-word', `kept but not interpreted: ${printable(key, 30)}`, file, line, toks[k].startOffset + 1 + raw.indexOf(body)));
        fields[key] = '';
        k++;
      }
    }
    rules.push({ priority: Number(toks[0].image.slice(0, -1)), not, fields, line, text: body });
  });
  return { rules, unsupported, diagnostics };
}
