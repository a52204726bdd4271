/**
 * Staged incidents for the judgement's tests: a generated node bundle (src/generate: realistic
 * kube-proxy dumps with ground truth) written to a temporary folder, edited as the incident needs,
 * and kpx's commands run on it in this process (their stdout, stderr and exit code).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';
import { generateCluster, writeBundle, type Cluster, type GenerateOptions, type Mode } from '../../src/generate/index.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { judgeSnapshot, type NodeJudgement } from '../../src/judge/index.js';

const made: string[] = [];

/** Remove every folder stage() made (call in afterAll). */
export function cleanup(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A bundle's files by name (undefined: delete the file). */
export type Files = Record<string, string | undefined>;

/**
 * A generated node bundle of `mode`, edited by `edit` (which gets every file's text and the cluster),
 * in a fresh folder. `loadForms` keeps the second forms (ipset-save.txt, nft-script.nft) the real tools load.
 */
export function stage(mode: Mode, opts: GenerateOptions, edit?: (files: Files, cluster: Cluster) => void, extra: { api?: boolean; loadForms?: boolean } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), `kpx-judge-${mode}-`));
  made.push(dir);
  const cluster = generateCluster(opts);
  writeBundle(cluster, mode, dir, { ...(extra.loadForms ? { loadForms: true } : {}), ...(extra.api ? { api: {} } : {}) });
  const files: Files = {};
  for (const f of readdirSync(dir)) files[f] = readFileSync(join(dir, f), 'utf8');
  files['truth.json'] = undefined;
  edit?.(files, cluster);
  for (const [f, text] of Object.entries(files)) {
    if (text === undefined) rmSync(join(dir, f), { force: true });
    else writeFileSync(join(dir, f), text);
  }
  return dir;
}

/** A folder holding exactly these files. */
export function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kpx-judge-'));
  made.push(dir);
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  return dir;
}

/** Run a command's action in this process: its exit code, stdout and stderr. */
export async function run(action: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
  try {
    const code = await action();
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

/** The node's judgement of a folder (or files), as the commands compute it. */
export async function judged(paths: readonly string[], nodeIps: readonly string[] = []): Promise<NodeJudgement> {
  return judgeSnapshot(await loadSnapshot([...paths], { nodeIps }));
}

/** Text with its folded lines joined (renderers fold at 120 columns). */
export const flat = (s: string) => s.replace(/\s+/g, ' ');

/** Replace exactly one occurrence (throws when the text does not have it: a test must not silently test nothing). */
export function once(text: string, from: string | RegExp, to: string): string {
  const re = typeof from === 'string' ? new RegExp(from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g') : new RegExp(from.source, from.flags.includes('g') ? from.flags : `${from.flags}g`);
  const hits = text.match(re)?.length ?? 0;
  if (hits !== 1) throw new Error(`staging: expected exactly one ${String(from)}, found ${hits}`);
  return text.replace(re, to);
}

export type { Cluster, GenerateOptions, Mode };
