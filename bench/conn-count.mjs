// A load client that counts answers per connection, for bench/remote.sh: wrk times only the
// requests that complete, so a connection the server never answers is invisible in its figures.
// Each of CONNS keep-alive connections sends one POST, waits for the whole answer, sends the next.
// Prints one line: "answers rps p50_us p99_us starved min_per_conn max_per_conn non200 errors",
// where starved counts connections with no answer at all and the percentiles cover every request
// sent (one still waiting at the end counts as its waiting time), so a stalled connection shows.
//
//   node bench/conn-count.mjs URL CONNS SECONDS BODY [HEADER: VALUE ...]
import net from 'node:net';

const [url, connsArg, secsArg, body, ...hdrs] = process.argv.slice(2);
const u = new URL(url);
const conns = Number(connsArg), secs = Number(secsArg);
const head = `POST ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\n` +
	`Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
	hdrs.map((h) => `${h}\r\n`).join('') + '\r\n';
const request = Buffer.from(head + body);
const lat = [];
const per = new Array(conns).fill(0);
const sentAt = new Array(conns).fill(0);
let non200 = 0, errors = 0, running = true;
const t0 = process.hrtime.bigint();
const nowUs = () => Number((process.hrtime.bigint() - t0) / 1000n);

function open(i) {
	const s = net.connect(Number(u.port), u.hostname);
	let buf = Buffer.alloc(0);
	s.setNoDelay(true);
	const send = () => { sentAt[i] = nowUs(); s.write(request); };
	s.on('connect', send);
	s.on('data', (d) => {
		buf = buf.length ? Buffer.concat([buf, d]) : d;
		for (;;) {
			const end = buf.indexOf('\r\n\r\n');
			if (end < 0)
				return;
			const h = buf.subarray(0, end).toString('latin1');
			const m = /\r\ncontent-length:\s*(\d+)/i.exec(h);
			let total = end + 4 + (m ? Number(m[1]) : 0);
			if (!m && /\r\ntransfer-encoding:\s*chunked/i.test(h)) {
				// A chunked answer (Apache's mod_proxy_fcgi): up to the last, empty chunk.
				const last = buf.indexOf('\r\n0\r\n\r\n', end + 2);
				if (last < 0)
					return;
				total = last + 7;
			}
			if (buf.length < total)
				return;
			if (!/^HTTP\/1\.[01] 200/.test(h))
				non200++;
			buf = buf.subarray(total);
			if (!running)
				return;
			lat.push(nowUs() - sentAt[i]);
			per[i]++;
			sentAt[i] = 0;
			send();
		}
	});
	s.on('error', () => { errors++; });
	s.on('close', () => { sentAt[i] = 0; if (running) setTimeout(() => open(i), 10); });
	return s;
}

const socks = [];
for (let i = 0; i < conns; i++)
	socks.push(open(i));
setTimeout(() => {
	running = false;
	const end = nowUs();
	for (let i = 0; i < conns; i++)
		if (sentAt[i] > 0)
			lat.push(end - sentAt[i]);	// still waiting: counts as what it waited so far
	lat.sort((a, b) => a - b);
	const pct = (p) => lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] : 0;
	const answers = per.reduce((a, b) => a + b, 0);
	console.log([answers, Math.round(answers / secs), pct(0.5), pct(0.99),
		per.filter((n) => n === 0).length, Math.min(...per), Math.max(...per), non200,
		errors].join(' '));
	for (const s of socks)
		s.destroy();
	process.exit(0);
}, secs * 1000);
