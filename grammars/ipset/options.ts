/**
 * Create options (the `Header:` line of `ipset list`, the tail of a `create` line in
 * `ipset save`): which words are flags and which take a value (ipset `lib/ipset_*.c` type
 * definitions, `lib/data.c` option names). Unknown words take a value when the next word looks
 * like one (a number, hex, range, family), so future ipset options degrade gracefully.
 */
import type { Tok } from './parser.js';

/** Options printed without a value. */
export const FLAG_OPTIONS: ReadonlySet<string> = new Set(['comment', 'counters', 'skbinfo', 'forceadd']);

/** Options that always take one value. */
export const VALUED_OPTIONS: ReadonlySet<string> = new Set([
  'family',
  'hashsize',
  'maxelem',
  'netmask',
  'bitmask',
  'markmask',
  'timeout',
  'range',
  'size',
  'bucketsize',
  'initval',
  'probes',
  'resize',
]);

export interface OptionSyntax {
  readonly key: Tok;
  readonly value?: Tok;
  /** A valued option whose value is missing (end of line). */
  readonly missingValue?: boolean;
}

const VALUE_LIKE = /^(\d|0x|inet6?$)|^[0-9a-f:.]+-[0-9a-f:.]+$/i;

export function splitOptions(words: readonly Tok[]): OptionSyntax[] {
  const out: OptionSyntax[] = [];
  for (let i = 0; i < words.length; i++) {
    const key = words[i];
    const next = words[i + 1];
    if (FLAG_OPTIONS.has(key.text)) out.push({ key });
    else if (VALUED_OPTIONS.has(key.text)) {
      if (next === undefined) out.push({ key, missingValue: true });
      else {
        out.push({ key, value: next });
        i++;
      }
    } else if (next !== undefined && !FLAG_OPTIONS.has(next.text) && !VALUED_OPTIONS.has(next.text) && VALUE_LIKE.test(next.text)) {
      out.push({ key, value: next });
      i++;
    } else out.push({ key });
  }
  return out;
}
