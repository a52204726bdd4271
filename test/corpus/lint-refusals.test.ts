/**
 * Real dumps (and the restore inputs the corpus was made from) were all accepted by the real
 * iptables: lint's refusal rules must find nothing to refuse in them, and none of them is
 * mistaken for kube-proxy restore input.
 */
import { describe, expect, it } from 'vitest';
import { corpusDir, corpusFiles, readCorpus } from '../helpers/corpus.js';
import { detectFormat } from '../../src/load/index.js';
import { lintFiles, snapshotOf } from '../lint/helpers.js';

const files = corpusFiles(/^(iptables\/.*\.iptables|ip6tables\/.*\.ip6tables|generated\/(save.*\.txt|kp6?\.rules)|iptables-extension-tests\/save-dumps\/.*)$/).filter(
  (f) => detectFormat(readCorpus(f)) === 'iptables-save',
);

describe('lint refusal rules on the corpus', () => {
  it('finds the dumps', () => expect(files.length).toBeGreaterThanOrEqual(19));
  for (const f of files) {
    it(`${f.slice(corpusDir().length + 1)}: no dangling-jump, jump-loop or jump-depth finding; read as a dump`, async () => {
      const r = await lintFiles({ [f]: readCorpus(f) }, { only: ['dangling-jump', 'jump-loop', 'jump-depth'] });
      expect(r.findings.map((x) => `${x.line}: ${x.message}`)).toEqual([]);
      const file = (await snapshotOf({ [f]: readCorpus(f) })).files[0];
      expect([file.format, file.variant]).toEqual(['iptables-save', undefined]);
    });
  }
});
