// A TCP relay to the devchain, started by scripts/stack.sh as the primary upstream of the
// ethereum.frozen network: tests/e2e/frozen.test.mjs stops it with SIGSTOP to make a node that
//   node tests/e2e/relay.mjs PORT TARGET_PORT
import net from 'node:net';

const [port, target] = process.argv.slice(2).map(Number);
net.createServer((c) => {
  const u = net.connect(target, '127.0.0.1');
  c.pipe(u);
  u.pipe(c);
  c.on('error', () => u.destroy());
  u.on('error', () => c.destroy());
}).listen(port, '127.0.0.1', () => console.log(`relay ${port} -> ${target}`));
