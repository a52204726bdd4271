/** Shared helpers for iptables-save tests: parse, and compare a round trip rule by rule. */
import { extractIptablesSave } from '../../src/extract/iptables-save.js';
import { printRule } from '../../src/render/iptables-save.js';
import type { Rule, Ruleset } from '../../src/model/netfilter.js';
import { expect } from 'vitest';

export function parse(text: string, file = 'test.rules') {
  return extractIptablesSave(text, file);
}

export function allRules(rs: Ruleset): Rule[] {
  return rs.tables.flatMap((t) => t.chains.flatMap((c) => c.rules)).sort((a, b) => a.line - b.line);
}

/** Rules whose re-emitted text differs from the input line. */
export function roundTripDiffs(rs: Ruleset): { line: number; input: string; output: string }[] {
  return allRules(rs)
    .map((r) => ({ line: r.line, input: r.raw, output: printRule(r) }))
    .filter((d) => d.input !== d.output);
}

/** A rule's model fields (evidence included), for comparing two readings of a dump. */
function ruleView(r: Rule) {
  return { table: r.table, chain: r.chain, file: r.file, index: r.index, line: r.line, column: r.column, raw: r.raw, matches: r.matches, comments: r.comments, comment: r.comment, target: r.target, counters: r.counters };
}

/**
 * Reads `text` with the token-free reading of kube-proxy's lines (the default) and with the
 * grammar alone, requires the same model (rule by rule, positions and evidence included; the
 * whole ruleset and its diagnostics as JSON, which also compares key order), and returns how many
 * lines the token-free reading took.
 */
export function expectSameReadings(text: string, file = 'test.rules'): number {
  const stats = { decoded: 0 };
  const fast = extractIptablesSave(text, file, undefined, { stats });
  const slow = extractIptablesSave(text, file, undefined, { decode: false });
  const fastRules = allRules(fast.data);
  const slowRules = allRules(slow.data);
  expect(fastRules.length).toBe(slowRules.length);
  for (let i = 0; i < fastRules.length; i++) expect(ruleView(fastRules[i]), fastRules[i].raw).toStrictEqual(ruleView(slowRules[i]));
  expect(fast.diagnostics).toStrictEqual(slow.diagnostics);
  const json = (x: unknown) => JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
  expect(json(fast)).toBe(json(slow));
  return stats.decoded;
}
