-- settle.lua: replaces one admitted request's reservation by what it really used (SPEC §15), and
-- ends its in-flight lease, in every rule at once.
--
-- KEYS, three per rule in rule order: tpm (hash: unix second -> tokens), inflight (sorted set of
-- leases), budget (the period's spend in USD; the same key the admission charged).
-- ARGV[1..5]: rule count, token delta (actual - reserved, may be negative), usd delta (text),
--   request id, admission time (unix ms, Redis's clock: it names the reservation's bucket)
-- ARGV, four per rule after those: has_tpm, has_inflight, has_budget (0|1 each), budget key
--   expiry (unix ms).
-- Reply: 1.

local kWindowS = 60
local kTpmTtlMs = 61000
local kPerRule = 4

local now_s = tonumber(redis.call('TIME')[1])
local n = tonumber(ARGV[1])
local token_delta = tonumber(ARGV[2])
local usd_delta = tonumber(ARGV[3])
local request_id = ARGV[4]
local bucket = math.floor(tonumber(ARGV[5]) / 1000)

local function int(x) return string.format('%d', x) end

for i = 1, n do
  local k = (i - 1) * 3
  local a = 5 + (i - 1) * kPerRule
  -- A reservation whose second has left the window no longer counts: nothing to correct.
  if ARGV[a + 1] == '1' and token_delta ~= 0 and bucket > now_s - kWindowS then
    local stored = redis.call('HGET', KEYS[k + 1], int(bucket))
    local v = (stored and tonumber(stored) or 0) + token_delta
    if v < 0 then v = 0 end
    redis.call('HSET', KEYS[k + 1], int(bucket), int(v))
    redis.call('PEXPIRE', KEYS[k + 1], kTpmTtlMs)
  end
  if ARGV[a + 2] == '1' then
    redis.call('ZREM', KEYS[k + 2], request_id)
  end
  if ARGV[a + 3] == '1' and usd_delta ~= 0 then
    local stored = redis.call('GET', KEYS[k + 3])
    local v = (stored and tonumber(stored) or 0) + usd_delta
    if v < 0 then v = 0 end
    redis.call('SET', KEYS[k + 3], string.format('%.17g', v), 'PXAT', ARGV[a + 4])
  end
end
return 1
