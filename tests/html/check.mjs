// SPDX-License-Identifier: GPL-2.0-only
// Open a page of heaptrace --format=html in headless chromium (Debian's, through playwright-core)
// and print, as one JSON object, what a person would see: console errors, requests, the flame
// graph's root total, what a click on its largest frame did, the timeline's periods and
// peak, the table's rows. tests/e2e/test_html.py compares them with heaptrace's JSON.
//
//   node check.mjs PAGE.html [--measure=N] [--screenshot=FILE.png] [--search=TEXT]
// --measure: the flame graph's measure (an index into its menu) to click in; the root totals
// of every measure are in "roots". The screenshot is at 1280x800, FILE-phone.png at 390x844.
import { chromium } from 'playwright-core';
import path from 'node:path';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const a = args.find((x) => x.startsWith('--' + name + '='));
  return a ? a.slice(name.length + 3) : def;
};
const page_path = path.resolve(args.find((x) => !x.startsWith('--')));
const url = 'file://' + page_path;
const out = { errors: [], requests: [] };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const ctx = await browser.newContext({
    viewport: { width: 1280, height: 800 },
  });
  const page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error') out.errors.push(m.text()); });
  page.on('pageerror', (e) => out.errors.push(String(e)));
  page.on('request', (r) => { if (r.url() !== url) out.requests.push(r.url()); });
  const t0 = Date.now();
  await page.goto(url, { waitUntil: 'load' });
  out.load_ms = Date.now() - t0;
  await page.waitForSelector('#flame svg', { timeout: 10000 });
  out.roots = {};
  // what the page shows first: the measure, the table's sort, the summary's cards, the
  // timeline's legend and the caption
  Object.assign(out, await page.evaluate(() => ({
    first_measure: document.querySelector('#measure').selectedOptions[0].textContent,
    first_sort: document.querySelector('#bts th.sorted')?.dataset.key ?? null,
    first_where: document.querySelector('#bts tbody tr.bt td.where')?.textContent ?? null,
    cards: Object.fromEntries([...document.querySelectorAll('#summary-list div')].map((d) =>
      [d.querySelector('dt').textContent, d.querySelector('dd').textContent])),
    legend: [...document.querySelectorAll('#legend span')].map((s) => s.textContent),
    cap: document.querySelector('#cap').textContent,
  })));
  const measures = await page.$$eval('#measure option', (os) => os.map((o) => [o.value,
    o.textContent]));
  for (const [value, name] of measures) {
    await page.selectOption('#measure', value);
    out.roots[name] = await page.evaluate(() => window.heaptraceView.flameRoot().value);
  }
  await page.selectOption('#measure', opt('measure', '0'));
  await page.waitForTimeout(400);
  const shot = opt('screenshot', null);
  if (shot) {
    await page.waitForTimeout(800); // the flame graph's labels appear after its transition
    await page.screenshot({ path: shot, fullPage: false });
  }
  Object.assign(out, await page.evaluate(() => {
    const v = window.heaptraceView;
    const periods = [...document.querySelectorAll('#timeline rect.period')];
    const rows = [...document.querySelectorAll('#bts tbody tr.bt')].map((tr) =>
      [...tr.children].map((td) => td.textContent));
    return {
      kind: v.data.kind,
      flame_root: v.flameRoot().value,
      attach: document.querySelector('#attach').hidden ? null
        : document.querySelector('#attach-body').textContent,
      measure: document.querySelector('#measure').selectedOptions[0].textContent,
      periods: periods.length,
      period_max: periods.length ? Math.max(...periods.map((r) => Number(r.dataset.bytes))) : null,
      peak_marker: Number(document.querySelector('#timeline circle.peak')?.dataset.bytes ?? -1),
      headers: [...document.querySelectorAll('#bts th')].map((th) => th.dataset.key),
      rows,
      doc_width: document.documentElement.scrollWidth,
    };
  }));
  // the widest frame below the root: click it, and it fills the graph, its siblings gone
  const frames = async () => page.$$eval('#flame g.frame', (gs) => gs.map((g) => ({
    name: g.getAttribute('name'),
    width: Number(g.querySelector('rect').getAttribute('width')),
    y: g.transform.baseVal.consolidate()?.matrix.f ?? 0,
  })));
  const before = await frames();
  const full = Math.max(...before.map((f) => f.width));
  const rootY = Math.max(...before.map((f) => f.y));
  const cand = before.filter((f) => f.y !== rootY && f.width < full - 0.5)
    .sort((a, b) => b.width - a.width)[0];
  if (cand) {
    const g = page.locator('#flame g.frame[name="' + cand.name.replace(/"/g, '\\"') + '"]').first();
    await g.hover({ force: true });
    out.tip = await page.$eval('#tip', (t) => (t.hidden ? null : t.textContent));
    await g.click({ force: true });
    await page.waitForTimeout(900);
    const after = await frames();
    out.zoom = {
      name: cand.name,
      width_before: cand.width,
      width_after: after.find((f) => f.name === cand.name)?.width ?? null,
      full,
      frames_before: before.length,
      frames_after: after.length,
    };
  }
  // the search box highlights the frames whose name has the text
  const term = opt('search', null);
  if (term !== null) {
    await page.click('#reset');
    await page.fill('#search', term);
    await page.waitForTimeout(400);
    out.search_hits = await page.$$eval('#flame g.frame', (gs) => gs.filter((g) =>
      g.querySelector('rect').getAttribute('fill') === '#E600E6').map((g) =>
      g.getAttribute('name')));
  }
  // a phone: nothing wider than the screen but the scrolling table
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  out.phone_width = await page.evaluate(() => document.documentElement.scrollWidth);
  if (shot) await page.screenshot({ path: shot.replace(/\.png$/, '-phone.png') });
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
