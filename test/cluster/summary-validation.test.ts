/**
 * Node summaries come from other machines (issue 34): one that does not fit `kpx schema
 * node-summary` — a member missing, null where an object is, a number where a string is, nested
 * 200,000 levels deep — is reported by node and path, and the other nodes are still compared;
 * never a TypeError, never a stack overflow. Mutations of a real summary (kpx summarize of a
 * generated bundle), a fixed list and a seeded random set.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateCluster } from '../../src/generate/index.js';
import { writeClusterBundle } from '../../src/generate/cluster-bundle.js';
import { servicesAction } from '../../src/cli/commands/services.js';
import { summarizeAction } from '../../src/cli/commands/summarize.js';
import { readSummary, SummaryError } from '../../src/cluster/summary.js';
import { schemaProblem } from '../../src/render/schemas/validate.js';
import { NODE_SUMMARY_SCHEMA } from '../../src/render/schemas/summary.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpx-summary-validation-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const good: Record<string, unknown>[] = [];
let names: string[] = [];

async function run(action: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
  try {
    return { code: await action(), out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

beforeAll(async () => {
  const raw = join(tmp, 'raw');
  names = writeClusterBundle(generateCluster({ seed: 7, services: 8, nodes: 3 }), 'iptables', raw);
  for (const n of names) {
    const r = await run(() => summarizeAction([], { input: [join(raw, n)], output: 'json' }));
    expect(r.code, r.err).toBe(0);
    good.push(JSON.parse(r.out) as Record<string, unknown>);
  }
}, 120_000);

type Mutation = (s: any) => void;
const first = (s: any) => s.services.find((x: any) => x.endpoints.length > 0);
/** The shapes the probe crashed on, and their neighbours. */
const MUTATIONS: Record<string, Mutation> = {
  'files[0] without firstErrors': (s) => delete s.files[0].firstErrors,
  'files[0] without counts': (s) => delete s.files[0].counts,
  'files: null': (s) => (s.files = null),
  'a Service without endpoints': (s) => delete first(s).endpoints,
  'a Service without evidence': (s) => delete first(s).evidence,
  'a Service without frontEnds': (s) => delete first(s).frontEnds,
  'a Service without owned': (s) => delete first(s).owned,
  'services: [null]': (s) => (s.services = [null]),
  'services: {}': (s) => (s.services = {}),
  'a Service id that is a number': (s) => (first(s).id = 5),
  'a Service port that is a string': (s) => (first(s).port = '80'),
  'a state that is not one': (s) => (first(s).state = 'fine'),
  'an endpoint ip that is a number': (s) => (first(s).endpoints[0].ip = 10),
  'an endpoint evidence that is not [file, line]': (s) => (first(s).endpoints[0].evidence = [[0]]),
  'an endpoint evidence of strings': (s) => (first(s).endpoints[0].evidence = [['a', 'b']]),
  'a front end evidence null': (s) => (first(s).frontEnds[0].evidence = null),
  'node: a number': (s) => (s.node = 5),
  'modes: a string': (s) => (s.modes = 'iptables'),
  'modes: an unknown mode': (s) => (s.modes = ['userspace']),
  'interfaces: [null]': (s) => (s.interfaces = [null]),
  'routes: null': (s) => (s.routes = null),
  'extraNodeIps: [1]': (s) => (s.extraNodeIps = [1]),
  'problems: [{}]': (s) => (s.problems = [{}]),
  'findings: [{ruleId: 5}]': (s) => (s.findings = [{ ruleId: 5 }]),
  'findingCounts missing': (s) => delete s.findingCounts,
  'others: [null]': (s) => (s.others = [null]),
  'a problem of a Service that is a string': (s) => (first(s).problems = ['oops']),
  'sessionAffinity: 3': (s) => (first(s).sessionAffinity = 3),
  'kpxVersion missing': (s) => delete s.kpxVersion,
  'evidence that names no file': (s) => (first(s).evidence = [[999, 1]]),
};

describe('a malformed node summary', () => {
  it('is refused with the path of what does not fit, for every shape of the list (never a TypeError)', () => {
    for (const [what, mutate] of Object.entries(MUTATIONS)) {
      const s = structuredClone(good[0]);
      mutate(s);
      let error: unknown;
      try {
        readSummary(JSON.stringify(s), 'node.json');
      } catch (e) {
        error = e;
      }
      expect(error, what).toBeInstanceOf(SummaryError);
      expect((error as Error).message, what).toMatch(/^node\.json: /);
    }
    expect(Object.keys(MUTATIONS).length).toBeGreaterThanOrEqual(30);
  });

  it('nested 200,000 levels deep: refused in one line, no stack overflow', () => {
    // JSON.stringify of such a value overflows the stack itself: its text is built by hand.
    const deepText = '{"a":'.repeat(200_000) + '{}' + '}'.repeat(200_000);
    const json = JSON.stringify({ ...good[0], interfaces: [{ name: 'eth0', linkInfo: '__DEEP__' }] }).replace('"__DEEP__"', deepText);
    expect(() => readSummary(json, 'deep.json')).toThrow(/deep\.json: not a valid node summary: \$\.interfaces\[0\]\.linkInfo: nested more than 64 levels/);
  });

  it('random damage (seeded): a summary that does not fit is refused, one that fits is read', () => {
    const paths: string[][] = [];
    const walk = (v: unknown, p: string[]) => {
      if (v === null || typeof v !== 'object' || paths.length > 4000) return;
      for (const [k, x] of Object.entries(v)) {
        paths.push([...p, k]);
        walk(x, [...p, k]);
      }
    };
    walk(good[1], []);
    expect(paths.length).toBeGreaterThan(200);
    let refused = 0;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: paths.length - 1 }), fc.oneof(fc.constant(undefined), fc.jsonValue({ maxDepth: 2 })), (i, replacement) => {
        const s = structuredClone(good[1]) as Record<string, any>;
        const path = paths[i];
        let holder: any = s;
        for (const k of path.slice(0, -1)) holder = holder[k];
        if (replacement === undefined) delete holder[path[path.length - 1]];
        else holder[path[path.length - 1]] = replacement;
        const fits = schemaProblem(JSON.parse(JSON.stringify(s)), NODE_SUMMARY_SCHEMA) === undefined;
        try {
          readSummary(JSON.stringify(s), 'n.json');
        } catch (e) {
          if (!(e instanceof SummaryError)) throw e;
          refused++;
          return;
        }
        // Read: it fitted the schema (an evidence index past the files is the one check beyond it).
        expect(fits).toBe(true);
      }),
      { seed: 34, numRuns: 150 },
    );
    expect(refused).toBeGreaterThan(50);
  });

  it('services --nodes reports the bad node and compares the others (text and JSON)', async () => {
    const dir = join(tmp, 'fleet');
    mkdirSync(dir);
    for (let i = 0; i < good.length; i++) writeFileSync(join(dir, `${names[i]}.json`), JSON.stringify(good[i]));
    const bad = structuredClone(good[2]) as any;
    bad.services = [null];
    writeFileSync(join(dir, `${names[2]}.json`), JSON.stringify(bad));
    const j = await run(() => servicesAction([], { input: [dir], output: 'json', nodes: true }));
    expect(j.code, j.err).toBe(0);
    const doc = JSON.parse(j.out);
    expect(doc.nodes).toEqual(names.slice(0, 2));
    expect(doc.skipped).toEqual([{ node: names[2], path: join(dir, `${names[2]}.json`), reason: expect.stringMatching(/not a valid node summary: \$\.services\[0\]: expected object, found null/) }]);
    expect(j.err).toContain(`node ${names[2]} not compared`);
    const t = await run(() => servicesAction([], { input: [dir], output: 'text', nodes: true }));
    expect(t.code).toBe(0);
    expect(t.out).toMatch(/^2 nodes: /);
    // Every node bad: nothing to compare, exit 2 with each reason.
    for (const n of names.slice(0, 2)) writeFileSync(join(dir, `${n}.json`), readFileSync(join(dir, `${names[2]}.json`)));
    await expect(servicesAction([], { input: [dir], output: 'json', nodes: true })).rejects.toThrow(/services\[0\]: expected object, found null/);
  });
});
