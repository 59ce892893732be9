/**
 * Preload (`node --import ./bench/offheap-probe.mjs ... service/main.ts`) that says how much memory outside V8's
 * heap a server allocates per request, and where. V8 starts a mark-compact when ArrayBuffer memory grows by 64 MB
 * ("external memory pressure"), so a few KB a request at a few thousand requests a second means a full collection
 * every second or two (docs/benchmarks-history.md, "Off-heap memory per request"; docs/architecture.md, "No off-heap memory
 * per answer").
 *
 * - Growth: `process.memoryUsage().arrayBuffers` sampled every 5 ms, its rises summed (it only falls at a GC), so
 *   the sum is what was allocated.
 * - By caller: `Buffer.alloc`, `allocUnsafe` (marked `(pool)` below half the pool size: carved from node's 8 KB
 *   pool, a new pool when it runs out), `allocUnsafeSlow`, `from` of a string or array and `concat`, with the four
 *   frames above the call. Typed arrays made with `new` are not seen.
 *
 * `kill -USR2 <pid>` starts a window; a second `kill -USR2` ends it and prints one `OFFHEAP {json}` line to stdout
 * (`requests` counts node:http requests in the window). A measuring tool only: nothing in the service imports it.
 */
import { Buffer } from 'node:buffer';
import http from 'node:http';

const POOL_HALF = Buffer.poolSize >>> 1;
const callers = new Map();
let armed = false;
let requests = 0;
let grown = 0;
let last = process.memoryUsage().arrayBuffers;

setInterval(() => {
  const now = process.memoryUsage().arrayBuffers;
  if (armed && now > last) grown += now - last;
  last = now;
}, 5).unref();

function note(kind, bytes) {
  if (!armed) return;
  const frames = (new Error().stack ?? '')
    .split('\n')
    .slice(3, 7)
    .map((l) =>
      l
        .trim()
        .replace(/^at /, '')
        .replace(/\(.*\/(.*?:\d+):\d+\)/, '($1)'),
    );
  const key = `${kind} ${frames.join(' < ')}`;
  const c = callers.get(key) ?? { calls: 0, bytes: 0 };
  c.calls++;
  c.bytes += bytes;
  callers.set(key, c);
}

for (const name of ['alloc', 'allocUnsafe', 'allocUnsafeSlow']) {
  const original = Buffer[name];
  Buffer[name] = function (size, ...rest) {
    note(name === 'allocUnsafe' && size < POOL_HALF ? 'allocUnsafe(pool)' : name, size);
    return original.call(this, size, ...rest);
  };
}
const from = Buffer.from;
Buffer.from = function (value, ...rest) {
  const b = from.call(this, value, ...rest);
  if (typeof value === 'string' || Array.isArray(value)) note(`from(${typeof value})`, b.length);
  return b;
};
const concat = Buffer.concat;
Buffer.concat = function (list, length) {
  const b = concat.call(this, list, length);
  note('concat', b.length);
  return b;
};

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, ...args) {
  if (event === 'request' && armed) requests++;
  return emit.call(this, event, ...args);
};

process.on('SIGUSR2', () => {
  if (!armed) {
    callers.clear();
    requests = 0;
    grown = 0;
    last = process.memoryUsage().arrayBuffers;
    armed = true;
    return;
  }
  armed = false;
  const top = [...callers.entries()]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, 20)
    .map(([caller, c]) => ({ caller, calls: c.calls, bytes: c.bytes }));
  const perRequestKb = requests ? Math.round((grown / requests / 1024) * 100) / 100 : null;
  process.stdout.write(`OFFHEAP ${JSON.stringify({ requests, array_buffers_grown: grown, per_request_kb: perRequestKb, top })}\n`);
});
