/** Shared helpers for iptables-save tests: parse, and compare a round trip rule by rule. */
import { extractIptablesSave } from '../../src/extract/iptables-save.js';
import { printRule } from '../../src/render/iptables-save.js';
import type { Rule, Ruleset } from '../../src/model/netfilter.js';

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
