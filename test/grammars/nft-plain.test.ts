/**
 * Plain rule lines skip Chevrotain (grammars/nft/parser.ts plainAtoms): their atoms must be exactly
 * the lexer's and the line parser's, and any line that needs the grammar (braces, strings, comments,
 * stray commas, non-ASCII, characters no token takes) must be left to it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lexLine, parseAtoms, plainAtoms } from '../../grammars/nft/parser.js';

const grammarAtoms = (line: string) => {
  const lexed = lexLine(line);
  const parsed = parseAtoms(lexed.tokens);
  return { atoms: parsed.atoms, problems: [...lexed.problems, ...parsed.problems] };
};

describe('nft plain lines', () => {
  it('gives the same atoms as the lexer and the parser for every plain line of the nftables sample', () => {
    const text = readFileSync(join(__dirname, '../../samples/nftables-mode-node/nft-ruleset.txt'), 'utf8');
    let plain = 0;
    for (const line of text.split('\n')) {
      const atoms = plainAtoms(line);
      if (!atoms) continue;
      plain++;
      expect(atoms, line).toEqual(grammarAtoms(line).atoms);
    }
    expect(plain).toBeGreaterThan(20);
  });

  it('treats a run as an operator only when it is exactly one (a Word as long wins over none)', () => {
    const lines = [
      '\t\tip daddr 10.96.0.10 tcp dport 53 jump mark-for-masquerade',
      'meta l4proto tcp dnat to 10.244.1.2:8080',
      'ct state established,related accept',
      'ip saddr != 10.244.0.0/14 meta mark set mark or 0x4000',
      'x == y != z <= >= << >> < > & | ^ . : - / =',
      '-110 :15001 -- <<= ==x a.b @nh,16,16 !',
      'ip6 daddr ::1 th dport 53 ip saddr . tcp dport',
    ];
    for (const line of lines) {
      const atoms = plainAtoms(line);
      expect(atoms, line).toBeDefined();
      const g = grammarAtoms(line);
      expect(g.problems, line).toEqual([]);
      expect(atoms, line).toEqual(g.atoms);
    }
    expect(plainAtoms('a == b')!.map((a) => a.t)).toEqual(['word', 'op', 'word']);
    expect(plainAtoms('==x -')!.map((a) => a.t)).toEqual(['word', 'op']);
  });

  it('leaves every line that needs the grammar to it', () => {
    for (const line of [
      'numgen random mod 2 vmap { 0 : goto a, 1 : goto b }',
      'ip daddr 10.0.0.1 comment "x"',
      'accept # handle 4',
      'a,,b',
      ',a',
      'a,',
      'a , b',
      'a; b',
      'ip daddr 10.0.0.1 \u00e9',
      'drop \u0007',
      '}',
    ]) {
      expect(plainAtoms(line), line).toBeUndefined();
    }
  });
});
