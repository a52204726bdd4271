/**
 * The output registry (src/render/registry/index.ts): every (command, -o FORMAT) pair the CLI accepts has
 * a renderer for each result kind that command's app function returns, and a pair without one is a
 * usage error (exit 2) with a message naming the formats there are — never a silent default.
 */
import { describe, expect, it } from 'vitest';
import type { Option } from 'commander';
import { buildProgram } from '../../src/cli/program.js';
import { COMMAND_RESULTS, PEOPLE_ONLY, FOR_PEOPLE, RENDERERS, rendererOf, renderResult } from '../../src/render/registry/index.js';
import { RenderError } from '../../src/render/output.js';
import { chalkInit } from '../../src/render/colors.js';
import { exitCodeFor } from '../../src/cli/exit.js';
import { cli } from '../helpers/cli.js';

/** Each command's `-o` choices, as commander holds them. */
function outputChoices(): Map<string, readonly string[]> {
  const program = buildProgram({ invokedAs: 'kpx', exit: (code) => { throw new Error(`exit ${code}`); } });
  const out = new Map<string, readonly string[]>();
  for (const cmd of program.commands) {
    const o = cmd.options.find((x: Option) => x.long === '--output') as (Option & { argChoices?: string[] }) | undefined;
    if (o?.argChoices) out.set(cmd.name(), o.argChoices);
  }
  return out;
}

describe('output registry', () => {
  it('has a renderer for every (command, -o) pair the CLI accepts, for each result its command returns', () => {
    const choices = outputChoices();
    // The commands whose -o is a format, each in the table of result kinds.
    expect([...choices.keys()].sort()).toEqual(Object.keys(COMMAND_RESULTS).sort());
    let pairs = 0;
    for (const [command, formats] of choices) {
      expect(formats.length, command).toBeGreaterThan(0);
      for (const format of formats)
        for (const kind of COMMAND_RESULTS[command]) {
          if (PEOPLE_ONLY.has(kind) && !FOR_PEOPLE.has(format)) continue;
          expect(rendererOf(kind, format), `${command} -o ${format}: ${kind}`).toBeTypeOf('function');
          pairs++;
        }
    }
    expect(pairs).toBeGreaterThan(30);
  });

  it('a pair without a renderer is a RenderError that exits 2 and names the formats there are', () => {
    const ctx = { c: chalkInit(false), cErr: chalkInit(false), width: 120 };
    let thrown: unknown;
    try {
      renderResult({ kind: 'schema-list' }, 'sarif', ctx);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(RenderError);
    expect(exitCodeFor(thrown)).toEqual({ code: 2, message: '-o sarif: no sarif output for schema-list (formats: text)' });
    expect(Object.keys(RENDERERS['schema-list'])).toEqual(['text']);
  });

  it('an -o the command does not offer is refused on the command line (exit 2), before anything is read', async () => {
    const r = await cli(['services', '-i', 'samples/iptables-mode-node', '-o', 'sarif']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/option '-o, --output <format>' argument 'sarif' is invalid\. Allowed choices are text, wide, json, yaml/);
  });
});
