/**
 * A finding's identity for baselines and SARIF `partialFingerprints`: what it is about, not where
 * the dump happened to put it. The same bundle copied to another folder, or a dump with one more
 * comment line, keeps every fingerprint; a new problem (another rule, Service, or dump line) does not.
 *
 * Identity = rule id, Service (kube-proxy's ServicePortName), and the subject: the flagged dump
 * line's text without counters and spacing differences, or, for findings about no single line, the
 * message with line references taken out.
 */
import { createHash } from 'node:crypto';
import type { Finding } from './rule.js';

export type FingerprintFields = Pick<Finding, 'ruleId' | 'message'> & Partial<Pick<Finding, 'service' | 'text'>>;

/** `[12:3456] -A KUBE-SVC-X …` and `-A  KUBE-SVC-X …` are the same rule. */
function normalizeLine(text: string): string {
  return text.replace(/^\s*\[\d+:\d+\]\s*/, '').replace(/\s+/g, ' ').trim();
}

/** Messages may cite positions ("first declared on line 12", "file.txt:40"): those move, the problem does not. */
function withoutPositions(message: string): string {
  return message.replace(/\blines? \d+(?:[-–]\d+)?\b/g, 'line').replace(/(\.[A-Za-z0-9]+):\d+(?::\d+)?\b/g, '$1');
}

export function findingFingerprint(f: FingerprintFields): string {
  const subject = f.text !== undefined && f.text.trim() !== '' ? `line\0${normalizeLine(f.text)}` : `message\0${withoutPositions(f.message)}`;
  return createHash('sha256').update(`${f.ruleId}\0${f.service ?? ''}\0${subject}`).digest('hex').slice(0, 32);
}
