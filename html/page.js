// SPDX-License-Identifier: GPL-2.0-only
// heaptrace's HTML report: draws what heaptrace embedded (the JSON in #heaptrace-data) with the
// vendored d3 and d3-flame-graph. Nothing is fetched; everything heavy was aggregated in C.
'use strict';
(function () {
  const DATA = JSON.parse(document.getElementById('heaptrace-data').textContent);
  const $ = (id) => document.getElementById(id);
  const fmtInt = (v) => (v === null || v === undefined ? '' : Number(v).toLocaleString('en-US'));
  // binary units, as every view of heaptrace (README: units)
  const fmtBytes = (v) => {
    if (v === null || v === undefined) return '';
    const a = Math.abs(v);
    if (a < 1024) return v + ' B';
    if (a < 1024 * 1024) return (v / 1024).toFixed(1) + ' KiB';
    if (a < 1024 * 1024 * 1024) return (v / 1024 / 1024).toFixed(2) + ' MiB';
    return (v / 1024 / 1024 / 1024).toFixed(2) + ' GiB';
  };
  const fmtNs = (ns) => {
    if (ns === null || ns === undefined) return '';
    if (ns < 1e6) return (ns / 1e3).toFixed(0) + ' µs';
    if (ns < 1e9) return (ns / 1e6).toFixed(1) + ' ms';
    return (ns / 1e9).toFixed(2) + ' s';
  };
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === 'class') e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    for (const c of kids) e.append(c);
    return e;
  };
  const tip = $('tip');
  const showTip = (ev, text) => {
    tip.textContent = text;
    tip.hidden = false;
    const x = Math.min(ev.pageX + 12, window.scrollX + document.documentElement.clientWidth -
      tip.offsetWidth - 4);
    tip.style.left = Math.max(window.scrollX + 2, x) + 'px';
    tip.style.top = ev.pageY + 14 + 'px';
  };
  const hideTip = () => { tip.hidden = true; };

  // ----- frames -----
  const frames = DATA.frames || [];
  const base = (p) => (p ? p.slice(p.lastIndexOf('/') + 1) : p);
  // a frame found by scanning the stack is a guess: "?" before its name
  const frameName = (f) => (f.guess ? '?' : '') +
    (f.function || (f.module ? '[' + base(f.module) + ']' : '??'));
  const frameLoc = (f) => (f.file ? f.file + (f.line ? ':' + f.line : '') : '');
  const frameText = (f) => frameName(f) + (frameLoc(f) ? ' (' + frameLoc(f) + ')' : '') +
    (!f.file && f.module ? ' in ' + f.module : '');
  // A diff's frames are inline objects; a report's are indices into DATA.frames.
  const framesOf = (b) => b.frames.map((f) => (typeof f === 'number' ? frames[f] : f));
  // What says where: heaptrace's label (its first frame past the allocators and their
  // wrappers); a diff's backtraces have none: the first frame after the allocation function.
  const where = (b) => {
    if (b.label) return b.label;
    const fs = framesOf(b);
    const f = fs.length > 1 ? fs[1] : fs[0];
    return f ? frameText(f) : '??';
  };

  function framesList(b) {
    const ol = el('ol', { class: 'frames', start: '0' });
    for (const f of framesOf(b)) {
      const li = el('li', f.guess ? { class: 'guess' } : {}, frameName(f));
      if (f.guess) li.append(' ', el('span', { class: 'loc' }, '[guess]'));
      if (frameLoc(f)) li.append(' ', el('span', { class: 'loc' }, frameLoc(f)));
      if (f.module) li.append(' ', el('span', { class: 'loc' }, base(f.module)));
      if (f.address) li.append(' ', el('span', { class: 'loc' }, f.address));
      ol.append(li);
    }
    return ol;
  }

  // ----- summary -----
  function cards(items) {
    const dl = $('summary-list');
    for (const [k, v] of items) {
      if (v === undefined) continue;
      dl.append(el('div', {}, el('dt', {}, k), el('dd', {}, String(v))));
    }
  }

  // ----- sortable table with expandable frames -----
  function table(rows, cols, defaultSort) {
    const t = $('bts');
    let key = defaultSort;
    let up = false;
    const head = el('tr');
    for (const c of cols) {
      const th = el('th', { class: c.key === 'where' ? 'where' : '', 'data-key': c.key,
        title: c.title || c.key }, c.label || c.key);
      th.addEventListener('click', () => {
        up = key === c.key ? !up : false;
        key = c.key;
        draw();
      });
      head.append(th);
    }
    const thead = el('thead', {}, head);
    const tbody = el('tbody');
    t.append(thead, tbody);
    function draw() {
      const col = cols.find((c) => c.key === key);
      const val = col.value || ((r) => r[key]);
      const sorted = rows.slice().sort((a, b) => {
        const x = val(a);
        const y = val(b);
        const c = typeof x === 'string' ? x.localeCompare(y) : y - x;
        return up ? -c : c;
      });
      for (const th of head.children) {
        th.classList.toggle('sorted', th.dataset.key === key);
        th.classList.toggle('up', th.dataset.key === key && up);
      }
      tbody.replaceChildren();
      for (const r of sorted) {
        const tr = el('tr', { class: 'bt' });
        for (const c of cols) {
          const v = (c.value || ((x) => x[c.key]))(r);
          const td = el('td', { class: c.key === 'where' ? 'where' : (c.cls ? c.cls(v) : '') },
            c.fmt ? c.fmt(v) : String(v));
          tr.append(td);
        }
        let open = null;
        tr.addEventListener('click', () => {
          if (open) {
            open.remove();
            open = null;
            return;
          }
          open = el('tr', { class: 'frames' }, el('td', { colspan: String(cols.length) },
            framesList(r)));
          tr.after(open);
        });
        tbody.append(tr);
      }
    }
    draw();
  }

  // ----- flame graph -----
  let chart = null;
  function flameTree(rows, value, total, otherLabel) {
    const root = { name: 'all', value: 0, children: [], locs: new Set() };
    let sum = 0;
    for (const b of rows) {
      const v = value(b);
      if (v <= 0) continue;
      sum += v;
      root.value += v;
      let node = root;
      const fs = framesOf(b);
      for (let i = fs.length - 1; i >= 0; i--) {
        const name = frameName(fs[i]);
        let child = node.index && node.index.get(name);
        if (!child) {
          child = { name, value: 0, children: [], locs: new Set() };
          node.children.push(child);
          (node.index = node.index || new Map()).set(name, child);
        }
        child.value += v;
        if (frameLoc(fs[i]) && child.locs.size < 4) child.locs.add(frameLoc(fs[i]));
        if (!fs[i].file && fs[i].module) child.locs.add(fs[i].module);
        node = child;
      }
    }
    if (total !== null && total > sum) {
      root.children.push({ name: otherLabel, value: total - sum, children: [], locs: new Set(),
        other: true });
      root.value += total - sum;
    }
    const strip = (n) => {
      delete n.index;
      n.locs = [...n.locs].join(', ');
      n.children.forEach(strip);
    };
    strip(root);
    return root;
  }

  // The tree heaptrace merged from every backtrace, for measure m (DATA.flame.nodes: parent,
  // name, location, more locations, then one figure per measure; parents come first).
  function flameFromNodes(m) {
    const fl = DATA.flame;
    const made = [];
    let root = null;
    for (const [parent, name, loc, more, ...v] of fl.nodes) {
      const n = { name: fl.names[name], value: v[m], children: [],
        locs: loc < 0 ? '' : fl.names[loc] + (more ? ', …' : '') };
      made.push(n);
      if (parent < 0) root = n;
      else if (v[m] > 0) made[parent].children.push(n);
    }
    return root;
  }

  function drawFlame(tree, unit) {
    const box = $('flame');
    box.replaceChildren();
    const fmt = unit === 'bytes' ? fmtBytes : fmtInt;
    const label = (d) => d.data.name + (d.data.locs ? ' (' + d.data.locs + ')' : '') + ': ' +
      fmt(d.value) + ' ' + (unit === 'bytes' ? '' : unit + ' ') +
      '(' + (100 * (d.x1 - d.x0)).toFixed(1) + '%)';
    chart = d3.flamegraph()
      .width(Math.max(280, box.clientWidth))
      .cellHeight(18)
      .transitionDuration(300)
      .minFrameSize(1)
      .sort(true)
      .label(label)
      .setSearchMatch((d, term) => !!term &&
        d.data.name.toLowerCase().includes(term.toLowerCase()))
      .setSearchHandler((found, sum, total) => {
        $('details').textContent = 'search: ' + found.length + ' frames, ' + fmt(sum) + ' of ' +
          fmt(total) + ' (' + (total ? (100 * sum / total).toFixed(1) : '0') + '%)';
      })
      .details($('details'));
    d3.select(box).datum(tree).call(chart);
    d3.select(box).selectAll('g.frame')
      .on('mousemove.tip', (ev, d) => showTip(ev, label(d)))
      .on('mouseout.tip', hideTip);
    const q = $('search').value;
    if (q) chart.search(q);
  }

  function setupFlame(measures, rows, first) {
    const sel = $('measure');
    measures.forEach((m, i) => sel.append(el('option', { value: String(i) }, m.name)));
    sel.value = String(first || 0);
    const draw = () => {
      const m = measures[Number(sel.value)];
      drawFlame(m.tree ? m.tree() : flameTree(rows, m.value, m.total, m.other), m.unit);
    };
    sel.addEventListener('change', draw);
    $('search').addEventListener('input', () => {
      const q = $('search').value;
      if (q) chart.search(q);
      else chart.clear();
    });
    $('reset').addEventListener('click', () => chart.resetZoom());
    let w = window.innerWidth;
    window.addEventListener('resize', () => {
      if (Math.abs(window.innerWidth - w) > 40) {
        w = window.innerWidth;
        draw();
      }
    });
    draw();
  }

  // ----- timeline -----
  const COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1',
    '#ff9da7', '#9c755f'];

  function setupTimeline(rep, rows) {
    const tl = rep.timeline;
    if (!tl || !tl.points.length) {
      $('timeline-note').textContent = rep.timeline ? 'No allocation was made.' :
        'No timeline: a report made while tracing has none. Record the run with ' +
        '--record=LOG and write the page with heaptrace report LOG --format=html.';
      return;
    }
    const pts = tl.points;
    const series = DATA.series || { backtraces: [], bytes: pts.map(() => []) };
    const top = series.backtraces.map((i) => rows[i]);
    const layers = pts.map((p, i) => {
      const o = { t: p.elapsed_ns, max: p.max_live_bytes };
      let sum = 0;
      top.forEach((b, k) => { o['s' + k] = series.bytes[i][k] || 0; sum += o['s' + k]; });
      o.other = Math.max(0, p.max_live_bytes - sum);
      return o;
    });
    const keys = top.map((b, k) => 's' + k).concat(['other']);
    const W = 1000;
    const H = 260;
    const m = { l: 64, r: 12, t: 26, b: 28 };
    const x = d3.scaleLinear().domain([0, pts[pts.length - 1].elapsed_ns]).range([m.l, W - m.r]);
    const ymax = Math.max(1, ...pts.map((p) => p.max_live_bytes));
    const y = d3.scaleLinear().domain([0, ymax]).nice().range([H - m.b, m.t]);
    const svg = d3.select('#timeline').append('svg').attr('viewBox', '0 0 ' + W + ' ' + H)
      .attr('role', 'img').attr('aria-label', 'live bytes over time');
    const stacked = d3.stack().keys(keys)(layers);
    const xs = (d) => x(d.data.t - tl.interval_ns / 2);
    svg.append('g').selectAll('path').data(stacked).join('path')
      .attr('fill', (d, i) => (keys[i] === 'other' ? '#c9ced6' : COLORS[i % COLORS.length]))
      .attr('d', d3.area().x(xs).y0((d) => y(d[0])).y1((d) => y(d[1])));
    svg.append('path').attr('class', 'total').datum(layers)
      .attr('d', d3.line().x((d) => x(d.t - tl.interval_ns / 2)).y((d) => y(d.max)));
    svg.append('g').attr('transform', 'translate(0,' + (H - m.b) + ')')
      .call(d3.axisBottom(x).ticks(8).tickFormat((v) => fmtNs(v)));
    svg.append('g').attr('transform', 'translate(' + m.l + ',0)')
      .call(d3.axisLeft(y).ticks(5).tickFormat((v) => fmtBytes(v)));
    // the peak: the interval with the most bytes
    let pk = 0;
    pts.forEach((p, i) => { if (p.max_live_bytes > pts[pk].max_live_bytes) pk = i; });
    const px = x(pts[pk].elapsed_ns - tl.interval_ns / 2);
    svg.append('circle').attr('class', 'peak').attr('r', 5).attr('cx', px)
      .attr('cy', y(pts[pk].max_live_bytes)).attr('data-bytes', pts[pk].max_live_bytes);
    svg.append('text').attr('class', 'peak-label').attr('x', Math.min(px + 8, W - 120))
      .attr('y', y(pts[pk].max_live_bytes) - 10)
      .text('peak ' + fmtBytes(pts[pk].max_live_bytes));
    // one clickable column per period
    const bw = (x(tl.interval_ns) - x(0));
    svg.append('g').selectAll('rect').data(pts).join('rect')
      .attr('class', 'period')
      .attr('x', (p) => x(p.elapsed_ns - tl.interval_ns))
      .attr('width', Math.max(bw, 0.5)).attr('y', m.t).attr('height', H - m.b - m.t)
      .attr('data-index', (p, i) => i)
      .attr('data-bytes', (p) => p.max_live_bytes)
      .on('mousemove', (ev, p) => showTip(ev, 'until ' + fmtNs(p.elapsed_ns) + ': up to ' +
        fmtBytes(p.max_live_bytes) + ', ' + fmtBytes(p.live_bytes) + ' at the end'))
      .on('mouseout', hideTip)
      .on('click', function (ev, p) {
        svg.selectAll('.period').classed('chosen', false);
        d3.select(this).classed('chosen', true);
        moment(pts.indexOf(p));
      });
    const legend = $('legend');
    keys.forEach((k, i) => legend.append(el('span', {}, el('i', {
      style: 'background:' + (k === 'other' ? '#c9ced6' : COLORS[i % COLORS.length]) }),
    k === 'other' ? 'other backtraces' : where(top[i]))));
    function moment(i) {
      const p = pts[i];
      const box = $('moment');
      box.replaceChildren(el('h3', {}, 'The heap in ' + fmtNs(p.elapsed_ns - tl.interval_ns) +
        ' – ' + fmtNs(p.elapsed_ns) + ' at its largest: ' + fmtBytes(p.max_live_bytes)));
      const t = el('table', {}, el('tr', {}, el('th', {}, 'bytes'), el('th', { class: 'where' },
        'backtrace')));
      const rowsAt = top.map((b, k) => [layers[i]['s' + k], b]).sort((a, b) => b[0] - a[0]);
      for (const [v, b] of rowsAt) {
        const tr = el('tr', { class: 'bt' }, el('td', {}, fmtBytes(v)),
          el('td', { class: 'where' }, where(b)));
        let open = null;
        tr.addEventListener('click', () => {
          if (open) { open.remove(); open = null; return; }
          open = el('tr', { class: 'frames' }, el('td', { colspan: '2' }, framesList(b)));
          tr.after(open);
        });
        t.append(tr);
      }
      t.append(el('tr', {}, el('td', {}, fmtBytes(layers[i].other)),
        el('td', { class: 'where' }, 'other backtraces')));
      box.append(el('div', { class: 'scroll' }, t));
    }
    $('timeline-note').textContent = pts.length + ' periods of ' + fmtNs(tl.interval_ns) +
      '; the line is the most bytes live in each, the colours the ' + top.length +
      ' backtraces that held the most at any time, at that moment. Click a period to see ' +
      'the heap then.';
    moment(pk);
    svg.selectAll('.period').filter((p, i) => i === pk).classed('chosen', true);
  }

  // ----- the heap at attach -----
  function setupAttach(rep, rows) {
    const body = $('attach-body');
    const inv = rep.heap_at_attach;
    if (inv) {
      const t = el('table');
      const add = (k, v) => t.append(el('tr', {}, el('th', { class: 'where' }, k),
        el('td', {}, v)));
      add('allocator', (inv.allocator || 'not recognised') + (inv.complete ? '' : ' (partial)'));
      add('live', fmtInt(inv.live_blocks) + ' blocks, ' + fmtBytes(inv.live_bytes));
      add('heap', fmtBytes(inv.heap_bytes) + ' in ' + inv.arenas + ' arenas, free ' +
        fmtBytes(inv.free_bytes) + ', largest free ' + fmtBytes(inv.largest_free));
      add('mmapped', fmtInt(inv.mmapped_blocks) + ' blocks, ' + fmtBytes(inv.mmapped_bytes));
      add('stop', inv.stop_ms.toFixed(1) + ' ms for ' + inv.threads + ' threads');
      for (const c of inv.size_classes || []) {
        add('up to ' + fmtBytes(c.max_size), fmtInt(c.blocks) + ' blocks, ' + fmtBytes(c.bytes));
      }
      for (const ty of inv.types || []) {
        add('type ' + ty.name, fmtInt(ty.blocks) + ' blocks, ' + fmtBytes(ty.bytes));
      }
      for (const p of inv.problems || []) add('problem', p);
      body.append(el('div', { class: 'scroll' }, t));
      return;
    }
    const before = rows.filter((b) => framesOf(b)[0] && framesOf(b)[0].function ===
      '[before attach]');
    if (!before.length) {
      body.append(el('p', { class: 'note' }, 'None: heaptrace started the program, or ' +
        'found no blocks live when it attached.'));
      return;
    }
    const t = el('table', {}, el('tr', {}, el('th', { class: 'where' }, 'size class'),
      el('th', {}, 'blocks still live'), el('th', {}, 'bytes')));
    for (const b of before) {
      t.append(el('tr', {}, el('td', { class: 'where' }, frameName(framesOf(b)[1])),
        el('td', {}, fmtInt(b.count)), el('td', {}, fmtBytes(b.size))));
    }
    body.append(el('p', { class: 'note' }, 'Blocks that were live when heaptrace attached, ' +
      'by size class (no call site is known for them).'), el('div', { class: 'scroll' }, t));
  }

  // ----- a report -----
  function report() {
    const rep = DATA.report;
    const s = rep.summary;
    const rows = DATA.backtraces;
    $('command').textContent = rep.command + ' (pid ' + rep.pid + (rep.exit_status === null ? ''
      : ', exit status ' + rep.exit_status) + ')';
    cards([
      ['live bytes', fmtBytes(s.live_bytes)], ['live blocks', fmtInt(s.live_blocks)],
      ['peak', fmtBytes(s.peak_live_bytes) + (rep.peak ? ' at ' + fmtNs(rep.peak.elapsed_ns)
        : '')],
      ['blocks at the peak', rep.peak ? fmtInt(rep.peak.live_blocks) : undefined],
      ['most live blocks', fmtInt(s.peak_live_blocks)], ['allocation calls', fmtInt(s.alloc_calls)],
      ['free calls', fmtInt(s.free_calls)], ['unknown frees', fmtInt(s.unknown_frees)],
      ['calls not seen (counts not exact)', s.counts_exact === false
        ? fmtInt(s.calls_not_seen) + (s.stubs_turned_off ? ' and all since the entry stubs ' +
          'were turned off' : '') : undefined],
      ['allocated in all', fmtBytes(s.total_allocated_bytes)],
      ['temporary allocations', fmtInt(s.temporary)],
      ['backtraces live / all', fmtInt(DATA.backtraces_live) + ' / ' +
        fmtInt(DATA.backtraces_total)],
      ['traced for', fmtNs(s.elapsed_ns)],
      ['RSS', rep.statm ? fmtBytes(rep.statm.rss) : undefined],
    ]);
    $('cap').textContent = 'The flame graph merges all ' + fmtInt(DATA.backtraces_total) +
      ' backtraces (frames under 1/' + DATA.flame_part + ' of every total are counted in ' +
      'their caller). The table and the timeline hold ' + fmtInt(rows.length) + ' of them: ' +
      'the ' + DATA.cap + ' largest by each measure.';
    // nothing live at the end of a heap that peaked: the heap at its peak is the answer
    const atPeak = s.live_blocks === 0 && rep.peak && rep.peak.live_bytes > 0;
    if (atPeak) {
      $('cap').textContent += ' Nothing is live at the end: the flame graph and the table ' +
        'show the heap at its peak, ' + fmtBytes(rep.peak.live_bytes) + ' in ' +
        fmtInt(rep.peak.live_blocks) + ' blocks at ' + fmtNs(rep.peak.elapsed_ns) + '.';
    }
    if (s.sample_bytes) {
      $('cap').textContent += ' Sampled (--sample-bytes=' + s.sample_bytes + '): one ' +
        'allocation in ' + fmtBytes(s.sample_bytes) + ' on average was taken, so the figures ' +
        'of each backtrace, the flame graph and the timeline are estimates; the cards above ' +
        'are exact.';
    }
    if (frames.some((f) => f.guess)) {
      $('cap').textContent += ' Frames marked "?" were found by scanning the stack where ' +
        'unwinding failed: guesses, which may be stale return addresses.';
    }
    const live = (b) => b.size;
    const measures = [
      { name: 'live bytes', value: live, total: s.live_bytes, unit: 'bytes' },
      { name: 'live blocks', value: (b) => b.count, total: s.live_blocks, unit: 'blocks' },
      { name: 'allocated bytes', value: (b) => b.total_size, total: s.total_allocated_bytes,
        unit: 'bytes' },
      { name: 'allocation calls', value: (b) => b.total_count, total: s.alloc_calls,
        unit: 'calls' },
      { name: 'temporary allocations', value: (b) => b.temporary, total: s.temporary,
        unit: 'allocations' },
      { name: 'bytes at the peak', value: (b) => b.size_at_peak,
        total: rep.peak ? rep.peak.live_bytes : null, unit: 'bytes' },
    ];
    measures.forEach((m, i) => { m.tree = () => flameFromNodes(i); });
    setupAttach(rep, rows);
    setupFlame(measures, rows, atPeak ? 5 : 0);
    setupTimeline(rep, rows);
    const cols = [
      { key: 'size', fmt: fmtBytes, title: 'live bytes' },
      { key: 'count', fmt: fmtInt, title: 'live blocks' },
      { key: 'peak_size', fmt: fmtBytes, title: 'most bytes live from here at any time' },
      { key: 'peak_count', fmt: fmtInt, title: 'most blocks live from here at any time' },
      { key: 'size_at_peak', fmt: fmtBytes, title: 'bytes live when the whole heap peaked' },
      { key: 'count_at_peak', fmt: fmtInt, title: 'blocks live when the whole heap peaked' },
      { key: 'total_size', fmt: fmtBytes, title: 'bytes allocated in all' },
      { key: 'total_count', fmt: fmtInt, title: 'blocks allocated in all' },
      { key: 'alloc_calls', fmt: fmtInt, title: 'allocation calls' },
      { key: 'temporary', fmt: fmtInt, title: 'temporary allocations' },
      { key: 'age_ns', fmt: fmtNs, title: 'since the first allocation' },
      { key: 'where', value: where, title: 'the first frame past the allocators and their ' +
        'wrappers; click for every frame' },
    ];
    table(rows, cols, atPeak ? 'size_at_peak' : 'size');
  }

  // ----- a diff -----
  function diff() {
    const d = DATA.report.diff;
    document.title = 'heaptrace diff';
    $('title-kind').textContent = 'diff';
    $('command').textContent = 'A: ' + d.a.log + '   B: ' + d.b.log;
    $('attach').hidden = true;
    $('timeline-section').hidden = true;
    cards([
      ['A live bytes', fmtBytes(d.a.live_bytes)], ['B live bytes', fmtBytes(d.b.live_bytes)],
      ['growth', fmtBytes(d.b.live_bytes - d.a.live_bytes)],
      ['A blocks', fmtInt(d.a.live_blocks)], ['B blocks', fmtInt(d.b.live_blocks)],
      ['A at', fmtNs(d.a.elapsed_ns)], ['B at', fmtNs(d.b.elapsed_ns)],
      ['backtraces changed', fmtInt(d.backtraces.length)],
    ]);
    $('cap').textContent = 'Backtraces are matched by their functions, files and lines, so ' +
      'two runs at other addresses compare.';
    const rows = d.backtraces;
    $('flame-title').textContent = 'Flame graph of the change';
    $('table-title').textContent = 'Backtraces that changed';
    setupFlame([
      { name: 'bytes grown', value: (b) => b.bytes_growth, total: null, unit: 'bytes' },
      { name: 'bytes shrunk', value: (b) => -b.bytes_growth, total: null, unit: 'bytes' },
      { name: 'blocks grown', value: (b) => b.blocks_growth, total: null, unit: 'blocks' },
    ], rows);
    const sign = (v) => (v > 0 ? 'grow' : v < 0 ? 'shrink' : '');
    const signed = (f) => (v) => (v > 0 ? '+' : '') + f(v);
    table(rows, [
      { key: 'bytes_growth', fmt: signed(fmtBytes), cls: sign },
      { key: 'blocks_growth', fmt: signed(fmtInt), cls: sign },
      { key: 'size_a', fmt: fmtBytes }, { key: 'count_a', fmt: fmtInt },
      { key: 'size_b', fmt: fmtBytes }, { key: 'count_b', fmt: fmtInt },
      { key: 'where', value: where },
    ], 'bytes_growth');
  }

  if (DATA.kind === 'diff') diff();
  else report();
  const nav = $('nav');
  for (const s of document.querySelectorAll('section')) {
    if (!s.hidden) nav.append(el('a', { href: '#' + s.id }, s.querySelector('h2').textContent));
  }
  // for tests and the curious: what was drawn
  window.heaptraceView = {
    data: DATA,
    flameRoot: () => d3.select('#flame').datum(),
  };
})();
