/** `kpx dump`: one parsed dump, printed back as iptables-save or as its JSON model. */
import type { Ruleset } from '../../model/netfilter.js';
import { renderIptablesSave } from '../iptables-save.js';
import { writeJsonDeep } from '../json-deep-stream.js';
import { versioned } from '../schemas/index.js';
import { RenderError, type Rendered } from '../output.js';

export interface DumpResult {
  readonly kind: 'dump';
  readonly path: string;
  readonly format: string;
  readonly counts: unknown;
  /** The reader's model (a Ruleset for an iptables-save dump). */
  readonly model: unknown;
  readonly diagnostics: readonly unknown[];
}

// Written piece by piece: a 10k-Service model printed as one string is longer than V8 allows.
export const dumpJson = (r: DumpResult): Rendered => ({
  via: 'json',
  write: (sink) => writeJsonDeep(versioned('dump', { file: r.path, format: r.format, counts: r.counts, model: r.model, diagnostics: r.diagnostics }), sink),
});

export const dumpIptablesSave = (r: DumpResult): Rendered => {
  if (r.format !== 'iptables-save') throw new RenderError(`-o iptables-save needs an iptables-save dump; ${r.path} is ${r.format} (use -o json)`);
  return { via: 'plain', text: renderIptablesSave(r.model as Ruleset) };
};
