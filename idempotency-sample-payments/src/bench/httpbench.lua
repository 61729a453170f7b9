-- wrk script of the HTTP benchmarks (run-http-benchmarks.sh).
-- Environment:
--   BENCH_KEY   "unique": a new Idempotency-Key on every request, "<run>-<thread>-<counter>";
--               "none": no key; any other value: that key on every request (replays).
--   BENCH_RUN   a prefix that no earlier run used, so that unique keys never repeat.
--   BENCH_THINK_MS  unset: each connection sends its next request as soon as the last is
--               answered (the machine saturated). A number: each connection first waits a
--               random time, exponentially distributed with this mean in milliseconds, so
--               that the requests arrive at a load the machine can carry and the latencies
--               are each request's own rather than the queue's.
-- Every request is a POST of the same 87-byte JSON body. done() prints one RESULT line.

local key_mode = os.getenv("BENCH_KEY") or "unique"
local run = os.getenv("BENCH_RUN") or tostring(os.time())
local body = '{"account":"acc-42","amount":1299,"currency":"EUR","reference":"order-2026-11-23-0001"}'

local think_ms = tonumber(os.getenv("BENCH_THINK_MS") or "")

local thread_count = 0

function setup(thread)
  thread_count = thread_count + 1
  thread:set("tid", thread_count)
end

local prefix
local counter = 0
local headers
local fixed_request

function init(args)
  prefix = run .. "-" .. tostring(tid) .. "-"
  math.randomseed(os.time() + tid)
  headers = { ["Content-Type"] = "application/json" }
  if key_mode ~= "unique" and key_mode ~= "none" then
    headers["Idempotency-Key"] = key_mode
  end
  fixed_request = wrk.format("POST", nil, headers, body)
end

if think_ms then
  function delay()
    return math.floor(-math.log(1 - math.random()) * think_ms)
  end
end

function request()
  if key_mode ~= "unique" then
    return fixed_request
  end
  counter = counter + 1
  headers["Idempotency-Key"] = prefix .. counter
  return wrk.format("POST", nil, headers, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_us=%d non2xx=%d socket_errors=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d mean_us=%.1f\n",
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
