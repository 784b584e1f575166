#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Rebuild html/vendor/ from the npm registry (make html-vendor): the versions package-lock.json
# pins, bundled and minified by esbuild into one script (the global d3), d3-flame-graph's style
# sheet, and the licence of every package that went into them. The build itself never runs
# npm: the results are committed.
set -e
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
mkdir -p vendor
node_modules/.bin/esbuild lib.js --bundle --minify --format=iife --global-name=d3 \
	--legal-comments=none --target=es2017 --metafile=vendor/meta.json \
	--outfile=vendor/lib.min.js
cp node_modules/d3-flame-graph/src/flamegraph.css vendor/d3-flame-graph.css
# every package with a file in the bundle, its version and its licence text
node -e '
const fs = require("fs");
const meta = JSON.parse(fs.readFileSync("vendor/meta.json"));
const pkgs = new Set();
for (const f of Object.keys(meta.inputs)) {
	const m = f.match(/node_modules\/((@[^/]+\/)?[^/]+)\//);
	if (m) pkgs.add(m[1]);
}
pkgs.add("d3-flame-graph");
let out = "The packages bundled into lib.min.js and d3-flame-graph.css, with their licences.\n";
for (const p of [...pkgs].sort()) {
	const dir = "node_modules/" + p;
	const pj = JSON.parse(fs.readFileSync(dir + "/package.json"));
	const lic = fs.readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
	out += "\n===== " + p + " " + pj.version + " (" + pj.license + ") =====\n\n";
	out += lic ? fs.readFileSync(dir + "/" + lic, "utf8") : "(no licence file)\n";
}
fs.writeFileSync("vendor/LICENSES", out);
'
rm vendor/meta.json
ls -l vendor
