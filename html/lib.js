// SPDX-License-Identifier: GPL-2.0-only
// The library part of heaptrace's HTML report: what page.js uses of d3 and d3-flame-graph,
// bundled by esbuild into vendor/lib.min.js as the global `d3` (make html-vendor).
export { default as flamegraph } from 'd3-flame-graph/src/flamegraph.js'
export { select, selectAll, pointer } from 'd3-selection'
export { scaleLinear, scaleOrdinal } from 'd3-scale'
export { stack, area, line, stackOrderNone } from 'd3-shape'
export { axisBottom, axisLeft } from 'd3-axis'
export { format } from 'd3-format'
