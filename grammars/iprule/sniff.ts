/** `ip rule` text and `ip -j rule` JSON, by content. */
import { noiseKind } from '../common/text.js';

const RULE = /^\s*\d+:\s+(not\s+)?from\s+\S+/;

export const ipRuleSniffer = {
  id: 'ip-rule' as const,
  sniff(lines: readonly string[]): number {
    // Only content counts: an `ip rule` paste with a prompt, or with only custom rules (no
    // 32766/32767 lines), is still certain when every content line is a rule.
    const content = lines.filter((l) => l.trim() !== '' && noiseKind(l) === undefined && !/^\s*#/.test(l));
    const hits = content.filter((l) => RULE.test(l)).length;
    return hits === 0 ? 0 : hits >= Math.min(3, content.length) ? 1 : 0.5;
  },
};

export const ipRuleJsonSniffer = {
  id: 'ip-rule-json' as const,
  sniff(lines: readonly string[]): number {
    const head = lines.slice(0, 5).join('');
    return /^\s*\[\s*\{\s*"priority"\s*:/.test(head) && /"(table|action|goto)"/.test(head) ? 1 : 0;
  },
};
