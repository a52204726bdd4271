// kpx kernel harness: packet sender. Runs INSIDE a source network namespace
// (`ip netns exec NS node sender.mjs '<json>'`) and prints one JSON line with
// one result per packet. Each packet is a NEW connection from its own source port.
//
// argv[2] JSON: { proto: 'tcp'|'udp', family: 4|6, dst, dport, src: string|null,
//                 ports: number[], timeoutMs, sequential: boolean, clear: string[] }
//   ports:  the explicit source ports to use (one packet each)
//   clear:  files to write '/' into before every packet (xt_recent tables of the
//           node namespace, reached as /proc/<pid-in-node-ns>/net/xt_recent/NAME)
//   clearNft: null or { argv, input }: a command run (input on stdin) before every packet
//           of a sequential run — `ip netns exec NODE nft -f -` with `flush set …` lines for
//           nftables' dynamic (affinity) sets
// Output: { results: [{ sport, status, reply?, code? }] }
//   status: 'reply'     an answer came back (UDP echo / TCP data from the responder)
//           'connected' TCP handshake completed but no data before the timeout
//           'refused'   ECONNREFUSED (ICMP port unreachable or TCP RST)
//           'unreachable' EHOSTUNREACH/ENETUNREACH/EACCES/EPERM... (other ICMP errors)
//           'blocked'   EPERM from send(): a locally generated packet was dropped by a
//                       netfilter hook (OUTPUT path). A REJECT there also drops, so the
//                       sender waits a little longer for the ICMP error before saying so.
//           'timeout'   nothing came back
//           'error'     local failure (bind...), code says which
import dgram from 'node:dgram';
import net from 'node:net';
import { writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const spec = JSON.parse(process.argv[2]);

function classify(err) {
  const code = err && err.code;
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET') return 'refused';
  if (code === 'EPERM') return 'blocked';
  if (['EHOSTUNREACH', 'ENETUNREACH', 'EACCES', 'EPROTO', 'ENOPROTOOPT'].includes(code)) return 'unreachable';
  return 'error';
}

function sendUdp(sport) {
  return new Promise((resolve) => {
    const s = dgram.createSocket({ type: spec.family === 6 ? 'udp6' : 'udp4' });
    let done = false;
    const finish = (r) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try { s.close(); } catch { /* already closed */ }
      resolve({ sport, ...r });
    };
    const timer = setTimeout(() => finish({ status: 'timeout' }), spec.timeoutMs);
    const onError = (e) => {
      const status = classify(e);
      if (status === 'blocked') {
        // The ICMP error of a local REJECT arrives just after send() failed with EPERM.
        setTimeout(() => finish({ status, code: e.code }), Math.min(300, spec.timeoutMs));
        return;
      }
      finish(status === 'error' ? { status, code: e.code, message: String(e.message) } : { status, code: e.code });
    };
    s.on('error', onError);
    s.on('message', (m) => finish({ status: 'reply', reply: String(m) }));
    const bind = spec.src ? { address: spec.src, port: sport } : { port: sport };
    s.bind(bind, () => {
      s.connect(spec.dport, spec.dst, (err) => {
        if (err) return onError(err);
        s.send(`kpx ${sport}`, (e2) => { if (e2) onError(e2); });
      });
    });
  });
}

function sendTcp(sport) {
  return new Promise((resolve) => {
    let done = false;
    let connected = false;
    let data = '';
    const sock = net.createConnection({
      host: spec.dst, port: spec.dport, family: spec.family,
      localPort: sport, ...(spec.src ? { localAddress: spec.src } : {}),
    });
    const finish = (r) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ sport, ...r });
    };
    const timer = setTimeout(() => finish({ status: connected ? 'connected' : 'timeout' }), spec.timeoutMs);
    sock.on('connect', () => { connected = true; });
    sock.on('data', (d) => { data += String(d); if (data.includes('\n')) finish({ status: 'reply', reply: data.trim() }); });
    sock.on('end', () => finish(data ? { status: 'reply', reply: data.trim() } : { status: 'connected' }));
    sock.on('error', (e) => {
      if (connected && data) return finish({ status: 'reply', reply: data.trim() });
      const status = classify(e);
      finish(status === 'error' ? { status, code: e.code, message: String(e.message) } : { status, code: e.code });
    });
  });
}

const one = spec.proto === 'udp' ? sendUdp : sendTcp;
const clear = () => {
  for (const f of spec.clear ?? []) {
    try { writeFileSync(f, '/\n'); } catch { /* table vanished */ }
  }
  if (spec.clearNft) {
    const r = spawnSync(spec.clearNft.argv[0], spec.clearNft.argv.slice(1), { input: spec.clearNft.input, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`clearNft failed: ${r.stderr || r.error}`);
  }
};

let results;
if (spec.sequential) {
  results = [];
  for (const p of spec.ports) {
    clear();
    results.push(await one(p));
  }
} else {
  clear();
  results = await Promise.all(spec.ports.map(one));
}
process.stdout.write(JSON.stringify({ results }) + '\n');
