-- admit.lua: one request's admission against every rule that applies to it (SPEC §15).
--
-- Atomic, like every Redis script: all limits of all rules are checked first, then either the
-- demand is reserved in every one of them or nothing is reserved. (Expired state is purged either
-- way: that changes no count.) Time is Redis's own TIME, so every node shares one clock.
--
-- KEYS, four per rule in rule order:
--   gcra      the rpm GCRA's theoretical arrival time (TAT), unix microseconds, a string
--   tpm       hash: unix second -> tokens reserved or charged in that second
--   inflight  sorted set: member = request id, score = lease expiry (unix ms)
--   budget    spend of the current period in USD (the key's name carries the period id)
-- ARGV[1..5]: rule count, demand tokens, demand usd, request id, lease ms
-- ARGV, eight per rule after those: rpm, burst, tpm, max_in_flight, has_budget (0|1), budget usd,
--   budget key expiry (unix ms, some time after the period ends), period end (unix ms, for the
--   budget's Retry-After). Both period times come from the caller's clock.
-- Reply: {admitted (1|0), now_ms, refusing rule (1-based; 0 = none), refusing limit
--   (1 rpm, 2 tpm, 3 in-flight, 4 budget), retry_after_ms,
--   then per rule: requests remaining, requests reset ms, tokens remaining, tokens reset ms}.
--   On refusal the readings are the state left unchanged; on admission, the state after it.

local kWindowS = 60        -- the tpm window: 60 one-second buckets
local kTpmTtlMs = 61000    -- a window key outlives its newest bucket
local kInFlightRetryMs = 1000  -- a slot frees when any request ends, usually well before a lease expires
local kPerRule = 8

local time = redis.call('TIME')
local now_s = tonumber(time[1])
local now_us = now_s * 1000000 + tonumber(time[2])
local now_ms = math.floor(now_us / 1000)

local n = tonumber(ARGV[1])
local tokens = tonumber(ARGV[2])
local usd = tonumber(ARGV[3])
local request_id = ARGV[4]
local lease_ms = tonumber(ARGV[5])

-- Integers go to Redis as '%d' text: tostring() keeps only 14 digits.
local function int(x) return string.format('%d', x) end
local function ceil_ms(us) return math.floor((us + 999) / 1000) end

local reply = {1, now_ms, 0, 0, 0}
local plans = {}

local function refuse(rule, limit, after_ms)
  if reply[3] == 0 then
    reply[1] = 0
    reply[3] = rule
    reply[4] = limit
  end
  if after_ms < 1 then after_ms = 1 end
  if after_ms > reply[5] then reply[5] = after_ms end
end

-- rpm: GCRA with emission interval T = 60 s / rpm and burst B. Admit iff
-- max(TAT, now) + T - now <= B * T; then TAT = max(TAT, now) + T.
local function check_rpm(i, key, rpm, burst, plan)
  local interval = math.floor(60000000 / rpm)
  if interval < 1 then interval = 1 end
  local limit = burst * interval
  local stored = redis.call('GET', key)
  local tat = stored and tonumber(stored) or now_us
  if tat < now_us then tat = now_us end
  local new_tat = tat + interval
  plan.rpm_before = {math.floor((limit - (tat - now_us)) / interval), ceil_ms(tat - now_us)}
  plan.rpm_after = {math.floor((limit - (new_tat - now_us)) / interval), ceil_ms(new_tat - now_us)}
  if new_tat - now_us <= limit then
    plan.tat = new_tat
  else
    refuse(i, 1, ceil_ms(new_tat - now_us - limit))
  end
end

-- tpm: the sum of the last 60 one-second buckets plus the estimate must stay within tpm.
local function check_tpm(i, key, tpm, plan)
  local flat = redis.call('HGETALL', key)
  local buckets, stale, sum = {}, {}, 0
  for j = 1, #flat, 2 do
    local sec, v = tonumber(flat[j]), tonumber(flat[j + 1])
    if sec <= now_s - kWindowS then
      stale[#stale + 1] = flat[j]
    elseif v > 0 then
      buckets[#buckets + 1] = {sec, v}
      sum = sum + v
    end
  end
  if #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
  table.sort(buckets, function(a, b) return a[1] < b[1] end)

  local oldest_reset = 0
  if #buckets > 0 then oldest_reset = (buckets[1][1] + kWindowS) * 1000 - now_ms end
  plan.tpm_before = {math.max(0, tpm - sum), oldest_reset}
  local after_reset = oldest_reset
  if after_reset == 0 and tokens > 0 then after_reset = (now_s + kWindowS) * 1000 - now_ms end
  plan.tpm_after = {math.max(0, tpm - sum - tokens), after_reset}

  if tokens > tpm then
    refuse(i, 2, kWindowS * 1000)  -- never fits; a minute is the honest answer
  elseif sum + tokens > tpm then
    -- The first time enough of the oldest buckets have left the window.
    local freed, after = 0, kWindowS * 1000
    for _, b in ipairs(buckets) do
      freed = freed + b[2]
      if sum - freed + tokens <= tpm then
        after = (b[1] + kWindowS) * 1000 - now_ms
        break
      end
    end
    refuse(i, 2, after)
  else
    plan.tokens = true
  end
end

-- max_in_flight: live leases are the members whose expiry is still ahead.
local function check_in_flight(i, key, max, plan)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', int(now_ms))
  if redis.call('ZCARD', key) >= max then
    local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    local after = kInFlightRetryMs
    if first[2] and tonumber(first[2]) - now_ms < after then after = tonumber(first[2]) - now_ms end
    refuse(i, 3, after)
  else
    plan.lease = true
  end
end

-- budget: the period's spend plus the estimate must stay within the budget.
local function check_budget(i, key, budget_usd, period_end_ms, plan)
  local stored = redis.call('GET', key)
  local charged = stored and tonumber(stored) or 0
  if charged + usd <= budget_usd then
    plan.usd = true
  else
    refuse(i, 4, period_end_ms - now_ms)
  end
end

for i = 1, n do
  local k = (i - 1) * 4
  local a = 5 + (i - 1) * kPerRule
  local rpm, burst, tpm = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local max_in_flight, has_budget = tonumber(ARGV[a + 4]), ARGV[a + 5] == '1'
  local plan = {budget_expire_at = ARGV[a + 7]}
  -- The order the local backend checks in, so a request refused by both a budget and a rate
  -- gets the same answer (budget_exceeded) from either backend.
  if has_budget then
    check_budget(i, KEYS[k + 4], tonumber(ARGV[a + 6]), tonumber(ARGV[a + 8]), plan)
  end
  if rpm > 0 then check_rpm(i, KEYS[k + 1], rpm, burst, plan) end
  if tpm > 0 then check_tpm(i, KEYS[k + 2], tpm, plan) end
  if max_in_flight > 0 then check_in_flight(i, KEYS[k + 3], max_in_flight, plan) end
  plans[i] = plan
end

local admitted = reply[1] == 1
for i = 1, n do
  local k = (i - 1) * 4
  local plan = plans[i]
  if admitted then
    if plan.tat then
      redis.call('SET', KEYS[k + 1], int(plan.tat), 'PX', int(ceil_ms(plan.tat - now_us) + 1000))
    end
    if plan.tokens and tokens > 0 then
      redis.call('HINCRBY', KEYS[k + 2], int(now_s), int(tokens))
      redis.call('PEXPIRE', KEYS[k + 2], kTpmTtlMs)
    end
    if plan.lease then
      redis.call('ZADD', KEYS[k + 3], int(now_ms + lease_ms), request_id)
      if redis.call('PTTL', KEYS[k + 3]) < lease_ms + 1000 then
        redis.call('PEXPIRE', KEYS[k + 3], int(lease_ms + 1000))
      end
    end
    if plan.usd then
      if usd > 0 then redis.call('INCRBYFLOAT', KEYS[k + 4], ARGV[3]) end
      redis.call('PEXPIREAT', KEYS[k + 4], plan.budget_expire_at)
    end
  end
  local rpm = (admitted and plan.rpm_after) or plan.rpm_before or {0, 0}
  local tpm = (admitted and plan.tpm_after) or plan.tpm_before or {0, 0}
  reply[#reply + 1] = math.max(0, rpm[1])
  reply[#reply + 1] = rpm[2]
  reply[#reply + 1] = tpm[1]
  reply[#reply + 1] = tpm[2]
end
return reply
