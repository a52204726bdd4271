/** A trace whose 5-tuple has a conntrack entry names the pinning entry, where it sends the flow, and until when. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KIND, snapshotOf } from '../lint/helpers.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { tracePacket } from '../../src/trace/trace.js';
import { traceRequest } from '../../src/cli/commands/trace.js';
import { assumptionText } from '../../src/render/trace/index.js';

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/conntrack/${name}`, import.meta.url), 'utf8');
const KIND_48370 = KIND.split('10.96.0.10').join('10.15.240.10');

async function trace(conntrack: string, sport: number, established: boolean) {
  const snapshot = await snapshotOf({ 'iptables-save.txt': KIND_48370, 'conntrack.txt': conntrack });
  const res = await resolveServices(snapshot);
  const { dest } = traceRequest('10.15.240.10:53/udp', { from: '10.12.0.14' } as never);
  return tracePacket(snapshot, res, dest, 'udp', { from: { ip: '10.12.0.14' }, sport, assumptions: { established, affinityHit: false } });
}

describe('trace --established with a conntrack dump (kubernetes#48370 entries)', () => {
  it('names the entry pinning the flow to a gone endpoint, and for how long', async () => {
    const t = await trace(fixture('k8s-48370-translated.txt'), 43145, true);
    expect(t.assumptions[0]).toEqual({ code: 'conntrack-pinned', file: 'conntrack.txt', line: 1, to: '10.12.0.11:53', translated: true, timeout: 29, unreplied: true, assured: false, current: false, applied: true });
    expect(assumptionText(t.assumptions[0])).toBe('conntrack entry conntrack.txt:1 [UNREPLIED] pins this flow to 10.12.0.11:53, NOT an endpoint now: blackholed, for 29s unless a packet refreshes it; rules decide only NEW flows');
  });
  it('says an untranslated entry is untranslated, and a current endpoint is current', async () => {
    const u = await trace(fixture('k8s-48370-unreplied.txt'), 43145, false);
    expect(u.assumptions[0]).toMatchObject({ code: 'conntrack-pinned', translated: false, to: '10.15.240.10:53' });
    const ok = await trace(fixture('k8s-48370-translated.txt').replace('src=10.12.0.11', 'src=10.244.0.4'), 43145, true);
    expect(ok.assumptions[0]).toMatchObject({ code: 'conntrack-pinned', current: true, to: '10.244.0.4:53' });
  });
  it('another source port has no entry: the dump is said to hold none', async () => {
    const t = await trace(fixture('k8s-48370-translated.txt'), 43146, true);
    expect(t.assumptions[0]).toEqual({ code: 'conntrack-no-entry', established: true, tables: 1 });
  });
});
