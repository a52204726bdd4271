/**
 * JSON contracts: every JSON document kpx prints carries its schemaVersion and validates against
 * its schema (src/render/schemas), checked on real outputs of every command — on the shipped
 * samples (iptables, IPVS, nftables, kind) and on generated node and cluster bundles — with ajv.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateCluster, writeBundle, type Mode } from '../../src/generate/index.js';
import { writeClusterBundle } from '../../src/generate/cluster-bundle.js';
import { SCHEMAS, SCHEMA_VERSION, type DocumentName } from '../../src/render/schemas/index.js';
import { formatHostPort } from '../../src/model/addr.js';
import { servicesAction } from '../../src/cli/commands/services.js';
import { traceAction } from '../../src/cli/commands/trace.js';
import { lintAction } from '../../src/cli/commands/lint.js';
import { inspectAction } from '../../src/cli/commands/inspect.js';
import { reverseAction } from '../../src/cli/commands/reverse.js';
import { dumpAction } from '../../src/cli/commands/dump.js';
import { diffAction } from '../../src/cli/commands/diff.js';
import { migrateCheckAction } from '../../src/cli/commands/migrate-check.js';
import { schemaAction } from '../../src/cli/commands/schema.js';

const SAMPLES = fileURLToPath(new URL('../../samples', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'kpx-schemas-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const ajv = new Ajv({ allErrors: true, strict: true });
const validators = new Map<DocumentName, ValidateFunction>();
for (const name of Object.keys(SCHEMAS) as DocumentName[]) validators.set(name, ajv.compile(SCHEMAS[name].schema));

/** Every document name a test below validated a real output of. */
const validated = new Set<DocumentName>();

/** The action's stdout (the code must be one of `codes`). */
async function stdoutOf(action: () => Promise<number>, codes: readonly number[] = [0]): Promise<string> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
  try {
    const code = await action();
    expect(codes, err).toContain(code);
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  return out;
}

/** Parse, check the version, validate; the parsed document back. */
function check(name: DocumentName, text: string, what: string): Record<string, unknown> {
  const doc = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(doc)[0], what).toBe('schemaVersion');
  expect(doc.schemaVersion, what).toBe(SCHEMA_VERSION[name]);
  const v = validators.get(name)!;
  expect(v(doc), `${what}: ${ajv.errorsText(v.errors, { separator: '\n' })}`).toBe(true);
  validated.add(name);
  return doc;
}

interface Svc {
  id: string;
  namespace: string | null;
  name: string | null;
  clusterIP: string | null;
  port: number;
  protocol: string | null;
  endpoints: { ip: string }[];
}

const generated: { name: string; dir: string }[] = [];
beforeAll(() => {
  const modes: [Mode, 4 | 6][] = [
    ['iptables', 4],
    ['ipvs', 4],
    ['nftables', 4],
    ['iptables', 6],
  ];
  for (const [mode, family] of modes) {
    const dir = join(tmp, `${mode}-v${family}`);
    writeBundle(generateCluster({ seed: 11, services: 25, family }), mode, dir);
    generated.push({ name: `generated ${mode} IPv${family}`, dir });
  }
}, 120_000);

const samples = ['iptables-mode-node', 'ipvs-mode-node', 'nftables-mode-node', 'iptables-mode-kind'].map((s) => ({ name: `sample ${s}`, dir: join(SAMPLES, s) }));

describe('every JSON output validates against its schema', () => {
  it('on the samples and generated node bundles: services, trace, lint, inspect, reverse, dump, diff', async () => {
    const inputs = [...samples, ...generated];
    expect(inputs.length).toBe(8);
    for (const [i, { name, dir }] of inputs.entries()) {
      const services = check('services', await stdoutOf(() => servicesAction([], { input: [dir], output: 'json' })), `${name}: services`);
      const list = services.services as Svc[];
      expect(list.length, name).toBeGreaterThan(0);
      // YAML is the same document.
      expect(parseYaml(await stdoutOf(() => servicesAction([], { input: [dir], output: 'yaml' }))), `${name}: yaml`).toEqual(services);
      const named = list.find((s) => s.namespace !== null && s.name !== null) ?? list.find((s) => s.clusterIP !== null)!;
      const sel = named.name !== null ? `${named.namespace}/${named.name}` : named.clusterIP!;
      const detail = check('services', await stdoutOf(() => servicesAction([], { input: [dir], output: 'json', service: sel })), `${name}: services --service`);
      expect((detail.services as Record<string, unknown>[])[0], name).toHaveProperty('evidence');

      const vips = list.filter((s) => s.clusterIP !== null && s.protocol !== null).slice(0, 3);
      expect(vips.length, name).toBeGreaterThan(0);
      for (const s of vips) {
        const dest = `${formatHostPort(s.clusterIP!, s.port)}/${s.protocol}`;
        const t = check('trace', await stdoutOf(() => traceAction(dest, { input: [dir], output: 'json', from: 'pod' })), `${name}: trace ${dest}`);
        expect((t.traces as unknown[]).length, dest).toBe(1);
      }
      const noProto = check('trace', await stdoutOf(() => traceAction(formatHostPort(vips[0].clusterIP!, vips[0].port), { input: [dir], output: 'json', from: 'external' })), `${name}: trace without protocol`);
      expect((noProto.traces as unknown[]).length).toBeGreaterThanOrEqual(1);

      check('lint', await stdoutOf(() => lintAction([dir], { output: 'json', failOn: 'never' })), `${name}: lint`);
      check('lint', await stdoutOf(() => migrateCheckAction([dir], { output: 'json', failOn: 'never' })), `${name}: migrate-check`);
      check('inspect', await stdoutOf(() => inspectAction([dir], { output: 'json' }), [0, 1]), `${name}: inspect`);
      const ep = list.find((s) => s.endpoints.length > 0)!.endpoints[0].ip;
      const rev = check('reverse', await stdoutOf(() => reverseAction(ep, { input: [dir], output: 'json' })), `${name}: reverse ${ep}`);
      expect((rev.matches as unknown[]).length, name).toBeGreaterThan(0);
      // Every dump of every input: each format's model.
      const dumps = readdirSync(dir).filter((f) => !/\.json$|^NOTE\.txt$|^README/.test(f));
      for (const f of dumps.map((d) => join(dir, d)).filter((p) => statSync(p).size > 0)) check('dump', await stdoutOf(() => dumpAction(f, { output: 'json' }), [0, 1]), `${name}: dump ${f}`);
      const other = inputs[(i + 1) % inputs.length].dir;
      check('diff', await stdoutOf(() => diffAction(other, dir, { output: 'json', maxRules: '20' })), `${name}: diff`);
    }
  }, 600_000);

  it('on a generated cluster bundle: services --nodes and trace --node', async () => {
    const dir = join(tmp, 'cluster');
    const nodes = writeClusterBundle(generateCluster({ seed: 3, services: 10, nodes: 3 }), 'iptables', dir);
    check('services-nodes', await stdoutOf(() => servicesAction([], { input: [dir], output: 'json', nodes: true, all: true })), 'services --nodes');
    const t = check('trace-cluster', await stdoutOf(() => traceAction('10.96.0.10:53/udp', { input: [dir], output: 'json', from: 'pod', node: nodes[0] })), 'trace --node');
    expect((t.traces as { paths: unknown[] }[])[0].paths.length).toBeGreaterThan(0);
    check('trace-cluster', await stdoutOf(() => traceAction('10.96.0.10:53', { input: [dir], output: 'json', from: 'pod', node: nodes[0] })), 'trace --node without protocol');
  }, 300_000);

  it('the streamed services JSON of a long list (written in slices) and the rule catalogue', async () => {
    const dir = join(tmp, 'long');
    writeBundle(generateCluster({ seed: 5, services: 400 }), 'iptables', dir);
    const doc = check('services', await stdoutOf(() => servicesAction([], { input: [dir], output: 'json' })), 'long services');
    // More than one slice of 512: the streamed path, not the one-string one.
    expect((doc.services as unknown[]).length).toBeGreaterThan(512);
    const rules = check('lint-rules', await stdoutOf(() => lintAction([], { output: 'json', listRules: true, failOn: 'error' })), 'lint --list-rules');
    expect((rules.rules as unknown[]).length).toBeGreaterThan(20);
  }, 300_000);

  it('covered every document kpx prints', () => {
    expect([...validated].sort()).toEqual(Object.keys(SCHEMAS).sort());
  });
});

describe('the schemas can fail', () => {
  it('refuse a document without schemaVersion, with another version, with a member they do not name, or a wrong type', async () => {
    const doc = JSON.parse(await stdoutOf(() => servicesAction([], { input: [join(SAMPLES, 'iptables-mode-kind')], output: 'json' })));
    const v = validators.get('services')!;
    expect(v(doc)).toBe(true);
    const { schemaVersion: _drop, ...unversioned } = doc;
    expect(v(unversioned)).toBe(false);
    expect(v({ ...doc, schemaVersion: doc.schemaVersion + 1 })).toBe(false);
    expect(v({ ...doc, services: [{ ...doc.services[0], reason: 'x' }] })).toBe(false);
    expect(v({ ...doc, services: [{ ...doc.services[0], port: '53' }] })).toBe(false);
    const trace = JSON.parse(await stdoutOf(() => traceAction('10.96.0.10:53/udp', { input: [join(SAMPLES, 'iptables-mode-kind')], output: 'json', from: 'pod' })));
    // The old single-trace shape is not the contract.
    expect(validators.get('trace')!(trace.traces[0])).toBe(false);
  });
});

describe('kpx schema', () => {
  it('lists the documents and prints each schema as the tests use it', async () => {
    const list = await stdoutOf(() => schemaAction(undefined));
    for (const name of Object.keys(SCHEMAS)) expect(list).toMatch(new RegExp(`^${name} +v\\d+ +kpx `, 'm'));
    expect(JSON.parse(await stdoutOf(() => schemaAction('trace')))).toEqual(SCHEMAS.trace.schema);
    await expect(schemaAction('nope')).rejects.toThrow(/no schema named nope/);
  });
});
