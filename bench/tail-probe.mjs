/**
 * Preload (`node --import ./bench/tail-probe.mjs ... service/main.ts`) that says where a server's latency tail
 * comes from, measured inside the process: GC pauses by kind (PerformanceObserver 'gc'), event-loop delay
 * (monitorEventLoopDelay, 1 ms resolution), each request's time from node:http's 'request' event to the
 * response's 'finish', and the process's CPU time per request (all threads: GC helpers, DuckDB, libuv).
 * `kill -USR2 <pid>` prints one `PROBE {json}` line to stdout and starts a new window: send it before and after a
 * `wrk` run and compare with wrk's own percentiles (docs/benchmarks-history.md, "Where the warm p99 tail comes from").
 * A measuring tool only: nothing in the service imports it.
 */
import http from 'node:http';
import { constants, monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';

let gc = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gc.push([e.detail?.kind, e.duration]);
}).observe({ entryTypes: ['gc'] });
const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
let requests = [];
let cpu0 = process.cpuUsage();
let t0 = performance.now();

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, ...args) {
  if (event === 'request') {
    const res = args[1];
    const start = performance.now();
    res.once('finish', () => requests.push(performance.now() - start));
  }
  return emit.call(this, event, ...args);
};

const percentile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : 0);
const round = (v, d = 2) => Math.round(v * 10 ** d) / 10 ** d;
const kindName = (k) =>
  k === constants.NODE_PERFORMANCE_GC_MINOR
    ? 'scavenge'
    : k === constants.NODE_PERFORMANCE_GC_MAJOR
      ? 'mark_compact'
      : k === constants.NODE_PERFORMANCE_GC_INCREMENTAL
        ? 'incremental'
        : 'weak_callbacks';

process.on('SIGUSR2', () => {
  const cpu = process.cpuUsage(cpu0);
  const byKind = {};
  for (const [k, ms] of gc) {
    const o = (byKind[kindName(k)] ??= { n: 0, sum_ms: 0, over_5ms: 0, max_ms: 0 });
    o.n++;
    o.sum_ms = round(o.sum_ms + ms, 1);
    if (ms > 5) o.over_5ms++;
    o.max_ms = round(Math.max(o.max_ms, ms), 1);
  }
  const sorted = requests.sort((a, b) => a - b);
  const line = {
    wall_ms: Math.round(performance.now() - t0),
    cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
    requests: sorted.length,
    cpu_us_per_request: sorted.length ? Math.round((cpu.user + cpu.system) / sorted.length) : 0,
    request_p50_ms: round(percentile(sorted, 50)),
    request_p99_ms: round(percentile(sorted, 99)),
    request_max_ms: round(percentile(sorted, 100), 1),
    loop_delay_p50_ms: round(loop.percentile(50) / 1e6, 1),
    loop_delay_p99_ms: round(loop.percentile(99) / 1e6, 1),
    loop_delay_max_ms: round(loop.max / 1e6, 1),
    heap_used_mb: Math.round(process.memoryUsage().heapUsed / 1048576),
    gc: byKind,
  };
  process.stdout.write(`PROBE ${JSON.stringify(line)}\n`);
  gc = [];
  requests = [];
  loop.reset();
  cpu0 = process.cpuUsage();
  t0 = performance.now();
});
