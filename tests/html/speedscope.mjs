// SPDX-License-Identifier: GPL-2.0-only
// Open a profile in speedscope (the npm package's built app, from node_modules, by file://) in
// headless chromium as a user would: the welcome page's file input, then the Export button and
// the Sandwich view. Prints one JSON object: console errors, requests beyond the app's own
// files, the title speedscope shows, the file its Export button saved (speedscope's own model
// of the profile, parsed), and the Sandwich table's rows as shown ([total, self, name, file]).
// tests/e2e/test_speedscope.py compares them with heaptrace's JSON report.
//
//   node speedscope.mjs PROFILE [--screenshot=FILE.png]
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const app = path.join(here, 'node_modules', 'speedscope', 'dist', 'release', 'index.html');
const args = process.argv.slice(2);
const profile = path.resolve(args.find((x) => !x.startsWith('--')));
const shotArg = args.find((x) => x.startsWith('--screenshot='));
const out = { errors: [], requests: [] };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 },
    acceptDownloads: true });
  const page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error') out.errors.push(m.text()); });
  page.on('pageerror', (e) => out.errors.push(String(e)));
  const appDir = 'file://' + path.dirname(app) + '/';
  page.on('request', (r) => { if (!r.url().startsWith(appDir)) out.requests.push(r.url()); });
  await page.goto('file://' + app, { waitUntil: 'load' });
  await page.setInputFiles('input[type=file]', profile);
  // the toolbar gains Export once a profile is loaded; an import error leaves the welcome page
  const exp = page.getByText('Export', { exact: false });
  await exp.waitFor({ timeout: 20000 });
  out.title = await page.evaluate(() => document.title);
  const [dl] = await Promise.all([page.waitForEvent('download'), exp.click()]);
  const saved = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'speedscope-')), 'export.json');
  await dl.saveAs(saved);
  out.export_name = dl.suggestedFilename();
  out.export = JSON.parse(fs.readFileSync(saved, 'utf8'));
  fs.rmSync(path.dirname(saved), { recursive: true });
  if (shotArg) await page.screenshot({ path: shotArg.slice('--screenshot='.length) });
  await page.getByText('Sandwich').click();
  await page.waitForSelector('table tr td', { timeout: 10000 });
  out.sandwich = await page.$$eval('table tr', (trs) => trs
    .filter((tr) => tr.children.length === 3 && tr.children[0].tagName === 'TD')
    .map((tr) => [tr.children[0].textContent, tr.children[1].textContent,
      tr.children[2].textContent, tr.children[2].getAttribute('title')]));
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
