/**
 * kube-proxy's chain-name hashes: the fast form (latin1 digest, first 80 bits only) is exactly
 * base32(sha256(…)).slice(0, 16), on kube-proxy's own names and on arbitrary text.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { base32, endpointHash, portProtoHash, servicePortName } from '../../src/kube/hash.js';

const reference = (text: string) => base32(createHash('sha256').update(text).digest()).slice(0, 16);

describe('portProtoHash and endpointHash', () => {
  it('name the kind sample chains as kube-proxy did', () => {
    expect(portProtoHash(servicePortName('kube-system', 'kube-dns', 'dns'), 'udp')).toBe('TCOU7JCQXEZGVUNU');
    expect(portProtoHash(servicePortName('kube-system', 'kube-dns', 'dns-tcp'), 'TCP')).toBe('ERIFXISQEP7F7OF4');
    expect(portProtoHash(servicePortName('default', 'kubernetes', 'https'), 'tcp')).toBe('NPX46M4PTMTKRN6Y');
    // Each SEP chain's DNAT rule: `-A KUBE-SEP-… -p udp -m comment --comment "ns/name:port" … --to-destination ip:port`.
    const text = readFileSync(new URL('../../samples/iptables-mode-kind/iptables-save.txt', import.meta.url), 'utf8');
    const dnats = [...text.matchAll(/^-A (KUBE-SEP-[A-Z2-7]{16}) -p (\w+) -m comment --comment "([^/"]+)\/([^:"]+):([^" ]*)" .* --to-destination (\S+)$/gm)];
    expect(dnats.length).toBe(7);
    for (const [, chain, proto, ns, name, port, destination] of dnats) {
      expect(`KUBE-SEP-${endpointHash(servicePortName(ns, name, port), proto, destination)}`).toBe(chain);
    }
  });

  it('equal base32(sha256(text)).slice(0, 16) for any text, IPv6 endpoints and non-ASCII included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 120 }), fc.constantFrom('tcp', 'udp', 'sctp', 'TCP'), fc.string({ maxLength: 60 }), (spn, proto, endpoint) => {
        expect(portProtoHash(spn, proto)).toBe(reference(spn + proto.toLowerCase()));
        expect(endpointHash(spn, proto, endpoint)).toBe(reference(spn + proto.toLowerCase() + endpoint));
      }),
      { numRuns: 2000 },
    );
    expect(endpointHash('ns/svc:http', 'tcp', '[fd00:10:244::5]:8080')).toBe(reference('ns/svc:httptcp[fd00:10:244::5]:8080'));
  });
});
