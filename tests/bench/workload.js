// SPDX-License-Identifier: GPL-2.0-only
// Benchmark workload: node building Buffers (their backing stores are malloc'd) and objects
// (V8's own heap, not malloc's), in ROUNDS rounds.
'use strict';
const rounds = Number(process.argv[2] || 200);
let total = 0;
for (let r = 0; r < rounds; r++) {
	const bufs = [];
	for (let i = 0; i < 500; i++) {
		const b = Buffer.alloc(64 + (i % 32) * 128, i & 0xff);
		bufs.push(b);
	}
	const objs = bufs.map((b, i) => ({ i, len: b.length, tag: `r${r}-${i}` }));
	total += Buffer.concat(bufs.slice(0, 50)).length + JSON.stringify(objs).length;
}
console.log(total);
