// SPDX-License-Identifier: GPL-2.0-only
/*
 * makebuffers.js: node Buffers allocated in a named function, for tests/e2e/test_jit.py. Each
 * Buffer.alloc of 64 KiB or more gets a backing store of its own from calloc (smaller ones come
 * from a pool); they are kept alive. It prints "made N bytes B": the Buffers it made and their
 * bytes, its own count.
 *
 * usage: node [--perf-basic-prof --interpreted-frames-native-stack] makebuffers.js MODE
 *   report  make them, send SIGUSR1 to the tracer (TracerPid), wait until the report is in
 *           $HEAPTRACE_OUTFILE, exit 0 (99: no report within 60 s)
 *   wait    print "ready", wait for a line on stdin, make them, print the count, wait for
 *           another line, exit 0
 */
'use strict';
const fs = require('fs');

const kept = [];
let made = 0;
let bytes = 0;

function makeBuffers(n) {
	for (let i = 0; i < n; i++) {
		const size = 65536 + 64 * (made % 16);

		kept.push(Buffer.alloc(size));
		made++;
		bytes += size;
	}
}

function makeAll() {
	for (let r = 0; r < 20; r++)
		makeBuffers(10);
	process.stdout.write('made ' + made + ' bytes ' + bytes + '\n');
}

function sleep(ms) {
	Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function tracer() {
	const m = /TracerPid:\s*(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'));

	return m ? Number(m[1]) : 0;
}

function reportAndExit() {
	const out = process.env.HEAPTRACE_OUTFILE;
	const pid = tracer();

	makeAll();
	if (!out || !pid)
		process.exit(98);
	process.kill(pid, 'SIGUSR1');
	for (let waited = 0; waited < 60000; waited += 20) {
		if (fs.existsSync(out) && fs.readFileSync(out, 'utf8').includes('\n'))
			process.exit(0);
		sleep(20);
	}
	process.exit(99);
}

function lines(handlers) {
	let buf = '';

	process.stdin.on('data', (d) => {
		buf += d;
		while (buf.includes('\n') && handlers.length) {
			buf = buf.slice(buf.indexOf('\n') + 1);
			handlers.shift()();
		}
		if (!handlers.length)
			process.exit(0);
	});
}

if (process.argv[2] === 'report') {
	reportAndExit();
} else {
	process.stdout.write('ready\n');
	lines([makeAll, () => {}]);
}
