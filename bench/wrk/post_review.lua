-- POST one AdmissionReview body, read from the file named by the first script argument:
--   wrk -t1 -c16 -d10s -s bench/wrk/post_review.lua URL -- /path/to/review.json
-- At the end, prints one line "BENCH_JSON {...}" with the figures the harness parses.
-- Latencies are in microseconds, as wrk measures them.

local function read_file(path)
  local file = assert(io.open(path, "rb"), "cannot open review body " .. tostring(path))
  local data = file:read("*a")
  file:close()
  return data
end

function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json"
  wrk.body = read_file(args[1])
end

function done(summary, latency, requests)
  local errors = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_s":%.6f,"requests_per_s":%.3f,' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f},' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"bytes":%d}\n',
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    errors.connect, errors.read, errors.write, errors.status, errors.timeout, summary.bytes))
end
