/**
 * Text output fits the terminal on the real pastes of the shared corpus too (issue 29): services,
 * services --service (the first Service each paste names), lint and trace of its first VIP, at 80
 * and 120 columns; a longer line is one uncuttable word alone on its line.
 */
import { basename } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { corpusFiles } from '../helpers/corpus.js';

const pastes = corpusFiles(/^(iptables|ip6tables|ipvs|nft)\/[^/]+$/).filter((f) => !f.endsWith('.source'));
const cols = (l: string) => [...stripVTControlCharacters(l)].length;
const tooWide = (text: string, width: number) => text.split('\n').filter((l) => cols(l) > width && /\s/.test(l.trim()));

describe('corpus: every text output fits COLUMNS', () => {
  it('finds the pastes', () => {
    expect(pastes.length).toBeGreaterThanOrEqual(15);
  });

  for (const width of [80, 120]) {
    it(`at ${width} columns`, async () => {
      const env = { COLUMNS: String(width) };
      const wide: string[] = [];
      let lines = 0;
      for (const f of pastes) {
        const runs = [['services', '-i', f], ['lint', '-i', f, '--fail-on', 'never']];
        const json = await cli(['services', '-i', f, '-o', 'json'], env);
        const first = json.code === 0 ? (JSON.parse(json.stdout) as { services: { clusterIP: string | null; port: number; protocol: string | null }[] }).services.find((s) => s.clusterIP && s.protocol) : undefined;
        if (first) runs.push(['services', '-i', f, '--service', first.clusterIP!], ['trace', `${first.clusterIP!.includes(':') ? `[${first.clusterIP}]` : first.clusterIP}:${first.port}/${first.protocol}`, '-i', f]);
        for (const args of runs) {
          const r = await cli(args, env);
          lines += r.stdout.split('\n').length;
          for (const l of tooWide(r.stdout, width)) wide.push(`${basename(f)}: ${args[0]}: ${cols(l)}: ${l}`);
        }
      }
      expect(lines).toBeGreaterThan(500);
      expect(wide).toEqual([]);
    }, 600_000);
  }
});
