/**
 * NAT statements: `dnat|snat [ip|ip6] [addr|port|prefix|interval …] to TARGET [FLAGS]` (the target an
 * address[:port], a selector expression or a map lookup) and `masquerade|redirect [FLAGS] [to :PORT] [FLAGS]`.
 */
import { operandText, type SynExpr, type SynMapRef, type SynNatTarget, type SynOperand } from '../common/nft-syntax.js';
import { appendAll } from '../common/source.js';
import type { Cursor } from './cursor.js';
import { parseOperand } from './operand.js';
import { parseSelector } from './selector.js';
import { NAT_FLAGS } from './vocabulary.js';

export function splitHostPort(text: string): SynNatTarget {
  let m = /^\[([^\]]+)\](?::(.+))?$/.exec(text);
  if (m) return m[2] !== undefined ? { text, addr: m[1], port: m[2] } : { text, addr: m[1] };
  if (text.startsWith(':')) return { text, port: text.slice(1) };
  const colons = text.split(':').length - 1;
  if (colons === 1) {
    m = /^(.*):(.*)$/.exec(text)!;
    return { text, addr: m[1], port: m[2] };
  }
  return { text, addr: text };
}

function takeFlags(c: Cursor, flags: string[]): void {
  while (c.word() !== undefined && c.word()!.split(',').every((f) => NAT_FLAGS.has(f))) {
    appendAll(flags, c.word()!.split(','));
    c.i++;
  }
}

export function parseNat(c: Cursor, kind: 'dnat' | 'snat', column: number): SynExpr {
  c.i++;
  let family: string | undefined;
  if ((c.word() === 'ip' || c.word() === 'ip6') && ['to', 'addr', 'prefix', 'interval'].includes(c.word(1) ?? '')) {
    family = c.word();
    c.i++;
  }
  // `dnat ip addr . port to …`, `snat ip prefix to …`, `dnat interval to …` (type flags)
  while (['addr', 'port', 'prefix', 'interval'].includes(c.word() ?? '') || (c.isOp('.') && c.word(1) === 'port')) c.i++;
  const flags: string[] = [];
  let to: SynNatTarget | undefined;
  let map: { key: SynOperand; map: SynMapRef } | undefined;
  if (c.word() === 'to') c.i++;
  const a = c.peek();
  const save = c.i;
  const sel = a && a.t === 'word' ? parseSelector(c, false) : undefined;
  if (sel) {
    c.i = save;
    const op = parseOperand(c, 'value');
    if (op && op.kind === 'map') map = { key: op.key, map: op.map };
    else if (op) to = { text: operandText(op) };
  } else if (a && a.t === 'word' && !NAT_FLAGS.has(a.text.split(',')[0])) {
    c.i++;
    to = splitHostPort(a.text);
  }
  if (!to && !map) c.error(c.peek(), `expected an address after ${kind} to`, 'address[:port]');
  takeFlags(c, flags);
  const e: { -readonly [K in string]: unknown } = { kind, flags, column };
  if (family) e.family = family;
  if (to) e.to = to;
  if (map) e.map = map;
  return e as SynExpr;
}

/** `masquerade|redirect [FLAGS] [to :PORT] [FLAGS]`. */
export function parseMasquerade(c: Cursor, w: 'masquerade' | 'redirect', column: number): SynExpr {
  c.i++;
  const flags: string[] = [];
  let to: SynNatTarget | undefined;
  takeFlags(c, flags);
  if (c.word() === 'to' && c.word(1) !== undefined) {
    to = splitHostPort(c.word(1)!);
    c.i += 2;
  }
  takeFlags(c, flags);
  return to ? { kind: w, to, flags, column } : { kind: w, flags, column };
}
