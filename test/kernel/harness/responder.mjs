// kpx kernel harness: responder. Runs INSIDE the pods (or node) namespace and
// answers every connection so that conntrack entries stay alive and the sender
// learns which endpoint answered:
//   TCP: listens on [::]:PORT (dual stack) for every port; writes
//        '<local ip> <local port> <remote ip> <remote port>\n' and closes.
//   UDP: binds every ADDRESS:PORT pair (so the answer can name the local address)
//        and echoes the same line back.
// argv[2] JSON: { addresses: string[], ports: number[] }
// Prints 'ready' on stdout once every socket is bound; runs until killed.
import dgram from 'node:dgram';
import net from 'node:net';

const spec = JSON.parse(process.argv[2]);
const strip = (a) => (a && a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a);
const pending = [];
const failures = [];

for (const port of spec.ports) {
  pending.push(new Promise((resolve) => {
    const srv = net.createServer((c) => {
      c.on('error', () => {});
      c.end(`${strip(c.localAddress)} ${c.localPort} ${strip(c.remoteAddress)} ${c.remotePort}\n`);
    });
    srv.on('error', (e) => { failures.push(`tcp ${port}: ${e.code}`); resolve(); });
    srv.listen({ host: '::', port, ipv6Only: false }, resolve);
  }));
  for (const address of spec.addresses) {
    pending.push(new Promise((resolve) => {
      const s = dgram.createSocket({ type: address.includes(':') ? 'udp6' : 'udp4' });
      s.on('error', (e) => { failures.push(`udp ${address} ${port}: ${e.code}`); resolve(); });
      s.on('message', (m, r) => {
        s.send(`${address} ${port} ${strip(r.address)} ${r.port}\n`, r.port, r.address);
      });
      s.bind({ address, port }, resolve);
    }));
  }
}
await Promise.all(pending);
process.stdout.write(`ready ${JSON.stringify(failures)}\n`);
process.on('SIGTERM', () => process.exit(0));
// Stay alive even without sockets: the node namespace's responder is also the process
// through whose /proc/PID/net the harness reaches that namespace's xt_recent tables.
setInterval(() => {}, 1 << 30);
