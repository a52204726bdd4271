/**
 * Selectors, the left-hand side of nft matches: payload fields (`ip daddr`, `tcp option mss size`),
 * meta and ct keys, `fib`, `numgen`, and the other heads (`jhash`, `symhash`, `rt`, `socket`,
 * `osf`, `ipsec`, `exthdr`) kept as their words.
 */
import type { SynOperand } from '../common/nft-syntax.js';
import { atomText, type Cursor } from './cursor.js';
import { META_UNQUALIFIED, PAYLOAD, SELECTOR_HEADS, STMT_START, TCP_OPTION_FIELDS } from './vocabulary.js';

/**
 * A selector (left-hand expression) at the cursor, or undefined (cursor unchanged). Not `strict`
 * (a value position), a payload word followed by a number or a list is a value, not a selector.
 */
export function parseSelector(c: Cursor, strict: boolean): SynOperand | undefined {
  const w = c.word();
  if (w === undefined) return undefined;
  const w1 = c.word(1);
  if (/^@(ll|nh|th|ih),\d+,\d+$/.test(w)) {
    c.i++;
    return { kind: 'selector', words: [w] };
  }
  if (PAYLOAD.has(w)) return payloadSelector(c, strict, w, w1);
  if (w === 'meta') {
    if (w1 === undefined) return undefined;
    c.i += 2;
    return { kind: 'meta', key: w1 };
  }
  if (META_UNQUALIFIED.has(w)) {
    c.i += 1;
    return { kind: 'meta', key: w };
  }
  if (!SELECTOR_HEADS.has(w)) return undefined;
  switch (w) {
    case 'ct':
      return ctSelector(c, w1);
    case 'fib':
      return fibSelector(c);
    case 'numgen':
      return numgenSelector(c, w1);
    default:
      return otherSelector(c, w);
  }
}

/** `PROTO FIELD`, `tcp option NAME [FIELD]`, `ip[6] exthdr|option …`. */
function payloadSelector(c: Cursor, strict: boolean, w: string, w1: string | undefined): SynOperand | undefined {
  if (w1 === undefined || STMT_START.has(w1) || w1 === 'set' || w1 === 'vmap' || w1 === 'map') return undefined;
  if (!strict && (/^[\d@]/.test(w1) || w1.includes(','))) return undefined;
  if (w === 'tcp' && w1 === 'option') {
    const words = ['tcp', 'option'];
    c.i += 2;
    const name = c.word();
    if (name !== undefined) {
      words.push(name);
      c.i++;
      const f = c.word();
      if (f !== undefined && TCP_OPTION_FIELDS.has(f)) {
        words.push(f);
        c.i++;
      }
    }
    return { kind: 'selector', words };
  }
  if ((w === 'ip6' || w === 'ip') && (w1 === 'exthdr' || w1 === 'option')) {
    const words = [w, w1];
    c.i += 2;
    for (let k = 0; k < 2 && c.word() !== undefined && !STMT_START.has(c.word()!); k++) {
      words.push(c.word()!);
      c.i++;
    }
    return { kind: 'selector', words };
  }
  c.i += 2;
  return { kind: 'payload', protocol: w, field: w1 };
}

/** `ct KEY`, `ct original|reply [ip|ip6] KEY`. */
function ctSelector(c: Cursor, w1: string | undefined): SynOperand | undefined {
  if (w1 === undefined) return undefined;
  if (w1 === 'original' || w1 === 'reply') {
    let key = c.word(2);
    if (key === undefined) return undefined;
    c.i += 3;
    if ((key === 'ip' || key === 'ip6') && c.word() !== undefined) {
      key = `${key} ${c.word()!}`;
      c.i++;
    }
    return { kind: 'ct', key, dir: w1 };
  }
  c.i += 2;
  return { kind: 'ct', key: w1 };
}

/** `fib FLAG[ . FLAG…] RESULT`. */
function fibSelector(c: Cursor): SynOperand | undefined {
  const start = c.i;
  c.i++;
  const flags: string[] = [];
  while (c.word() !== undefined) {
    flags.push(c.word()!);
    c.i++;
    if (c.isOp('.') && c.word(1) !== undefined) c.i++;
    else break;
  }
  const result = c.word();
  if (flags.length === 0 || result === undefined) {
    c.i = start;
    return undefined;
  }
  c.i++;
  return { kind: 'fib', flags, result };
}

/** `numgen MODE mod N [offset M]`. */
function numgenSelector(c: Cursor, mode: string | undefined): SynOperand | undefined {
  if (mode === undefined || c.word(2) !== 'mod' || c.word(3) === undefined || !/^\d+$/.test(c.word(3)!)) return undefined;
  const mod = Number(c.word(3));
  c.i += 4;
  let offset = 0;
  if (c.word() === 'offset' && /^\d+$/.test(c.word(1) ?? '')) {
    offset = Number(c.word(1));
    c.i += 2;
  }
  return { kind: 'numgen', mode, mod, offset };
}

/**
 * jhash EXPR mod N [seed X] [offset M] | symhash mod N [offset M] | rt [ip|ip6] KEY |
 * socket KEY [level N] | osf [ttl X] name|version | ipsec in|out [spnum N] KEY | exthdr NAME FIELD
 */
function otherSelector(c: Cursor, w: string): SynOperand | undefined {
  const start = c.i;
  const words: string[] = [w];
  c.i++;
  if (w === 'jhash' || w === 'symhash') {
    while (!c.done && c.word() !== 'mod') words.push(atomText(c.next()));
    for (const kw of ['mod', 'seed', 'offset']) {
      if (c.word() === kw && c.word(1) !== undefined) {
        words.push(kw, c.word(1)!);
        c.i += 2;
      }
    }
    return { kind: 'selector', words };
  }
  const take = (n: number) => {
    for (let k = 0; k < n && c.word() !== undefined; k++) {
      words.push(c.word()!);
      c.i++;
    }
  };
  if (w === 'rt') take(c.word() === 'ip' || c.word() === 'ip6' ? 2 : 1);
  else if (w === 'socket') {
    take(1);
    if (c.word() === 'level') take(2);
  } else if (w === 'osf') {
    if (c.word() === 'ttl') take(2);
    take(1);
  } else if (w === 'ipsec') {
    take(1);
    if (c.word() === 'spnum') take(2);
    take(1);
  } else take(2);
  return words.length > 1 ? { kind: 'selector', words } : (c.i = start, undefined);
}
