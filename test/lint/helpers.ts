/** Lint in-memory dumps: each entry is a file name and its text (formats are sniffed as for real files). */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseInput } from '../../src/load/index.js';
import { assembleSnapshot } from '../../src/load/snapshot.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { lintSnapshot, type LintOptions, type LintResult } from '../../src/lint/run.js';
import { breathe } from '../helpers/breathe.js';
import type { Finding } from '../../src/lint/rule.js';

export async function snapshotOf(files: Record<string, string>, nodeIps: string[] = []): Promise<NodeSnapshot> {
  const parsed = [];
  for (const [path, text] of Object.entries(files)) {
    await breathe();
    parsed.push(await parseInput({ path, text, bytes: Buffer.byteLength(text) }));
  }
  await breathe();
  return assembleSnapshot(parsed, { nodeIps });
}

export async function lintFiles(files: Record<string, string>, opts: LintOptions = {}, nodeIps: string[] = []): Promise<LintResult> {
  const snapshot = await snapshotOf(files, nodeIps);
  await breathe();
  return lintSnapshot(snapshot, opts);
}

export const of = (r: LintResult, ruleId: string): Finding[] => r.findings.filter((f) => f.ruleId === ruleId);

/** samples/iptables-mode-kind/iptables-save.txt: a healthy kind worker (iptables mode). */
export const KIND = readFileSync(fileURLToPath(new URL('../../samples/iptables-mode-kind/iptables-save.txt', import.meta.url)), 'utf8');

/** Replace exactly one occurrence (throws when the fixture does not have it: a test must not silently test nothing). */
export function replaceOnce(text: string, from: string, to: string): string {
  const i = text.indexOf(from);
  if (i < 0 || text.indexOf(from, i + 1) >= 0) throw new Error(`fixture edit: expected exactly one ${JSON.stringify(from)}`);
  return text.slice(0, i) + to + text.slice(i + from.length);
}

/** 1-based line of the first line containing `needle`. */
export function lineOf(text: string, needle: string): number {
  const i = text.split('\n').findIndex((l) => l.includes(needle));
  if (i < 0) throw new Error(`fixture: no line contains ${JSON.stringify(needle)}`);
  return i + 1;
}
