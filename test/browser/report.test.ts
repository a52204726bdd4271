/**
 * `kpx report -o x.html` as a person sees it: the report (written by the built kpx, in-process) is
 * opened in headless Chromium at 1280 px and read the way an SRE reads it — the first thing on
 * screen is the problems list with its count, the first problem names its Service and verdict, an
 * evidence link lands on that dump line in view, locality says what the judgement says, nothing
 * scrolls sideways, and no control character from a dump reaches the screen.
 *
 * Inputs: the real samples (samples/*), generated node bundles (src/generate) with a staged problem
 * (an externalTrafficPolicy=Local Service without local endpoints; a dump cut before its COMMIT),
 * and one constructed dump (labelled below) whose lines carry control characters and markup.
 *
 * Runs when a Chromium is here (test/helpers/browser-env.ts); otherwise skipped and named at the
 * end of `npm test`; required (a failure) in CI and in `npm run test:browser`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBrowser } from '../helpers/browser-env.js';
import { cli } from '../helpers/cli.js';
import { generatedNode, type GeneratedNode } from '../helpers/generated.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { judgeSnapshot, type NodeJudgement } from '../../src/judge/index.js';
import { lintSnapshot } from '../../src/lint/run.js';
import type { ServicePort } from '../../src/kube/types.js';
import { localityText } from '../../src/render/report/index.js';
import { portsText, serviceLabel } from '../../src/render/services.js';
import { printable } from '../../src/source/index.js';

const executable = requireBrowser();
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'kpx-browser-'));
const WIDTH = 1280;
const HEIGHT = 800;

/** How lint names a Service port (its findings' `service`): `ns/name:port`, `ns/name`, or the resolver's id. */
const lintLabel = (s: ServicePort) => (s.namespace !== null && s.name !== null ? `${s.namespace}/${s.name}${s.portName ? `:${s.portName}` : ''}` : s.id);
/** A dump line as the page must show it: control characters as `\xNN` (printable()), a tab as a space. */
const shown = (line: string) => printable(line, 100000).replace(/\t/g, ' ');
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

interface Expected {
  readonly node: NodeJudgement;
  /** Problems: Service ports judged not healthy, plus lint findings about anything but them. */
  readonly count: number;
  readonly unhealthy: readonly ServicePort[];
}

/** What the judgement and lint say of a bundle, computed here from the same dumps (not from the page). */
async function expected(dir: string): Promise<Expected> {
  const snapshot = await loadSnapshot([dir]);
  const node = await judgeSnapshot(snapshot);
  const lint = await lintSnapshot(snapshot, { resolution: node.resolution });
  const unhealthy = node.resolution.services.filter((s) => s.state !== 'healthy');
  const bad = new Set(unhealthy.map(lintLabel));
  const standalone = lint.findings.filter((f) => f.service === undefined || !bad.has(f.service));
  return { node, count: unhealthy.length + standalone.length, unhealthy };
}

/** Write the report of `dir` with the built kpx. */
async function report(dir: string, name: string): Promise<string> {
  const file = join(tmp, `${name}.html`);
  const r = await cli(['report', '-i', dir, '-o', file]);
  expect(r.code, r.stderr).toBe(0);
  return file;
}

interface Seen {
  readonly firstH2: string;
  readonly firstH2Top: number;
  readonly firstSection: string;
  readonly items: number;
  readonly firstVerdict: string;
  readonly firstService: string;
  readonly scrollWidth: number;
  readonly text: string;
  readonly dangling: readonly string[];
  readonly links: number;
  readonly sections: readonly { heading: string; locality: string }[];
}

/** What the page shows, read in the browser. */
function look(page: Page): Promise<Seen> {
  return page.evaluate(() => {
    const visible = (el: Element) => el.checkVisibility() && el.getBoundingClientRect().height > 0;
    const h2 = [...document.querySelectorAll('h2')].filter(visible);
    const items = [...document.querySelectorAll('#problems ol.problems > li')];
    const links = [...document.querySelectorAll('a[href^="#"]')];
    return {
      firstH2: h2[0]?.textContent ?? '',
      firstH2Top: h2[0]?.getBoundingClientRect().top ?? Infinity,
      firstSection: [...document.querySelectorAll('main > section')].find(visible)?.id ?? '',
      items: items.length,
      firstVerdict: items[0]?.querySelector('.verdict')?.textContent ?? '',
      firstService: items[0]?.querySelector('a[href^="#svc-"]')?.textContent ?? '',
      scrollWidth: document.documentElement.scrollWidth,
      text: document.body.innerText,
      dangling: links.map((a) => a.getAttribute('href')!).filter((h) => !document.getElementById(h.slice(1))),
      links: links.length,
      sections: [...document.querySelectorAll('section.service')].map((s) => ({ heading: s.querySelector('h3')?.textContent ?? '', locality: s.querySelector('dd .locality')?.textContent ?? '' })),
    };
  });
}

describe.skipIf(executable === undefined)('the HTML report, as a person sees it in Chromium', () => {
  let browser: Browser;
  const generated: GeneratedNode[] = [];
  const offline: string[] = [];

  beforeAll(async () => {
    // Chromium refuses to start as root with its sandbox on.
    browser = await chromium.launch({ executablePath: executable, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  });
  afterAll(async () => {
    await browser?.close();
    for (const g of generated) g.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** Open a report at 1280×800; any request that is not the file itself is refused and recorded (the report is self-contained). */
  async function open(file: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: WIDTH, height: HEIGHT } });
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:')) return route.continue();
      offline.push(url);
      return route.abort();
    });
    await page.goto(pathToFileURL(file).href);
    return page;
  }

  /** Click the first evidence link of the first problem: the line it lands on, and whether it is in view. */
  async function followFirstEvidence(page: Page, dir: string): Promise<{ link: string; target: string; want: string; inView: boolean }> {
    const link = page.locator('#problems ol.problems > li').first().locator('a[href^="#ev-"]').first();
    const text = (await link.textContent()) ?? '';
    const href = (await link.getAttribute('href')) ?? '';
    await link.click();
    await page.waitForFunction((h) => location.hash === h, href);
    const at = await page.evaluate(() => {
      const t = document.querySelector(':target');
      const r = t?.getBoundingClientRect();
      return { text: t?.textContent ?? '', top: r?.top ?? -1, bottom: r?.bottom ?? -1, visible: t ? t.checkVisibility() : false };
    });
    const [file, line] = [text.slice(0, text.lastIndexOf(':')), Number(text.slice(text.lastIndexOf(':') + 1))];
    const want = shown(readFileSync(join(dir, file), 'utf8').split('\n')[line - 1] ?? '');
    return { link: text, target: at.text, want, inView: at.visible && at.top >= 0 && at.bottom <= HEIGHT && at.bottom > at.top };
  }

  /** The checks every report passes: problems first with their count, the first problem, links, width. */
  async function checkAnswerFirst(dir: string, name: string): Promise<{ page: Page; seen: Seen; exp: Expected }> {
    const exp = await expected(dir);
    const page = await open(await report(dir, name));
    const seen = await look(page);
    expect(seen.firstSection).toBe('problems');
    expect(seen.firstH2).toBe(`Problems (${exp.count})`);
    expect(seen.firstH2Top).toBeLessThan(HEIGHT);
    expect(seen.items).toBe(exp.count);
    expect(seen.scrollWidth).toBeLessThanOrEqual(WIDTH);
    expect(seen.links).toBeGreaterThan(0);
    expect(seen.dangling).toEqual([]);
    expect(CONTROL.test(seen.text)).toBe(false);
    expect(offline).toEqual([]);
    if (exp.unhealthy.length) {
      // Unhealthy first, as `kpx services` orders them: the first problem is a Service of the worst state present.
      const worst = ['no-endpoints', 'no-local-endpoints', 'partial', 'unknown'].find((st) => exp.unhealthy.some((s) => s.state === st))!;
      expect(seen.firstVerdict).toBe(worst);
      expect(exp.unhealthy.filter((s) => s.state === worst).map(serviceLabel)).toContain(seen.firstService);
      const ev = await followFirstEvidence(page, dir);
      // The line as the dump has it; for an nft set element, the element as kpx quotes it from its line.
      if (ev.target !== ev.want) expect(ev.want.trim(), ev.link).toContain(ev.target);
      expect(ev.target.trim().length).toBeGreaterThan(10);
      expect(ev.inView, `${ev.link} is not in view after the click`).toBe(true);
    }
    // Locality as the judgement states it, for every Service shown in detail.
    const byHeading = new Map<string, ServicePort>(exp.node.resolution.services.map((s) => [`${serviceLabel(s)} ${portsText(s)} — ${s.state}`, s]));
    expect(seen.sections.length).toBeGreaterThan(0);
    for (const sec of seen.sections) {
      const s = byHeading.get(sec.heading);
      expect(s, sec.heading).toBeDefined();
      expect(sec.locality).toBe(localityText(s!, exp.node.judgementOf(s!)));
    }
    return { page, seen, exp };
  }

  for (const sample of ['iptables-mode-node', 'ipvs-mode-node', 'nftables-mode-node']) {
    it(`samples/${sample}: problems first with their count, the first names its Service and verdict, its evidence link lands on the line, 1280 px wide`, async () => {
      const { page, exp } = await checkAnswerFirst(join(ROOT, 'samples', sample), sample);
      expect(exp.unhealthy.length).toBeGreaterThan(0);
      await page.close();
    });
  }

  it('a generated node with an externalTrafficPolicy=Local Service without local endpoints: its locality says so, as the judgement does', async () => {
    const g = await generatedNode('iptables', { seed: 29, services: 5, nodes: 3, mix: { noEndpoints: 0, externalLocal: 0, internalLocal: 0 }, shapes: ['kubernetes', 'kube-dns', 'nodeport-local', 'nodeport-local-no-local-endpoints', 'two-endpoints'] });
    generated.push(g);
    const { page, seen, exp } = await checkAnswerFirst(g.dir, 'generated-local');
    const noLocal = exp.node.resolution.services.find((s) => s.name === 'nodeport-local-no-local-endpoints')!;
    expect(exp.node.judgementOf(noLocal).state).toBe('no-local-endpoints');
    // The only unhealthy Service: the first problem, and its section's locality.
    expect(exp.unhealthy).toEqual([noLocal]);
    expect(seen.firstService).toBe(serviceLabel(noLocal));
    const sec = seen.sections.find((x) => x.heading.startsWith(`${serviceLabel(noLocal)} `));
    expect(sec?.locality).toMatch(/^externalTrafficPolicy=Local and no local endpoints: external traffic .* gets no destination$/);
    // The healthy Local Service: how many local endpoints, from the generator's ground truth.
    const local = exp.node.resolution.services.find((s) => s.name === 'nodeport-local')!;
    const truth = g.truth.services.find((t) => t.namespace === local.namespace && t.name === local.name && t.portName === local.portName && t.protocol === local.protocol)!;
    const n = truth.endpoints.filter((e) => e.local).length;
    expect(n).toBeGreaterThan(0);
    expect(localityText(local, exp.node.judgementOf(local))).toContain(`goes to the ${n} local endpoint${n === 1 ? '' : 's'} only; ${n} of ${truth.endpoints.length} endpoints on this node`);
    await page.close();
  });

  it('a generated node whose nat table is cut before COMMIT: locality is unknown where the judgement cannot tell', async () => {
    const g = await generatedNode('iptables', { seed: 15, services: 40, nodes: 3 });
    generated.push(g);
    const path = join(g.dir, 'iptables-save.txt');
    const lines = readFileSync(path, 'utf8').split('\n');
    const start = lines.indexOf('*nat');
    const commit = lines.indexOf('COMMIT', start);
    writeFileSync(path, lines.slice(0, start + 1 + Math.floor((commit - start - 1) * 0.5)).join('\n') + '\n');
    const { page, seen, exp } = await checkAnswerFirst(g.dir, 'generated-cut');
    const unknown = exp.unhealthy.filter((s) => exp.node.judgementOf(s).state === 'unknown');
    expect(unknown.length).toBeGreaterThan(0);
    const shownUnknown = seen.sections.filter((x) => unknown.some((s) => x.heading === `${serviceLabel(s)} ${portsText(s)} — unknown`));
    expect(shownUnknown.length).toBe(unknown.length);
    for (const x of shownUnknown) expect(x.locality).toMatch(/^unknown: the evidence is incomplete \(/);
    // The header says what is missing before any answer.
    expect(seen.text.slice(0, seen.text.indexOf('Problems ('))).toMatch(/iptables-save\.txt \(table nat\) is cut after line \d+/);
    await page.close();
  });

  it('a dump line with control characters and markup (constructed: unit-style input) shows escaped, never raw', async () => {
    // Labelled constructed input: a Service without endpoints whose REJECT rule's comment carries ESC,
    // BEL, a tab and HTML, so that its line is the first problem's evidence.
    const dir = mkdtempSync(join(tmp, 'controls-'));
    const hostile = '-A KUBE-SERVICES -d 10.96.7.8/32 -p tcp -m comment --comment "evil/empty:http has no endpoints \u001b[2J\u0007\t<b>bold</b><script>alert(1)</script>" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable';
    const save = [
      '*filter',
      ':INPUT ACCEPT [0:0]',
      ':KUBE-SERVICES - [0:0]',
      '-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      hostile,
      'COMMIT',
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      ':KUBE-SERVICES - [0:0]',
      '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      'COMMIT',
      '',
    ];
    writeFileSync(join(dir, 'iptables-save.txt'), save.join('\n'));
    const { page, seen } = await checkAnswerFirst(dir, basename(dir));
    expect(seen.firstService).toBe('evil/empty:http');
    expect(seen.text).toContain('\\x1b[2J\\x07 <b>bold</b><script>alert(1)</script>');
    const line = await page.evaluate(() => [...document.querySelectorAll('ol.ev code.line')].map((c) => (c as HTMLElement).innerText));
    expect(line).toEqual([shown(hostile)]);
    expect(line[0]).not.toContain('\t');
    expect(await page.evaluate(() => document.querySelectorAll('main b, main script, script').length)).toBe(0);
    await page.close();
  });
});
