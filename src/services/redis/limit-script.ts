/*
 * The limits' counts shared by every replica, as one Lua script: a decision reads every count
 * it covers, decides and charges in one run, so two replicas never both take the last unit.
 * The rules are those of `core/limits/store.ts` (`evaluate`, `verdictOf`, `refunded`) and of
 * the in-process store, written again in Lua; the tests hold the two to the same answers.
 *
 * Times are the caller's `now`, as the in-process store reads them: a count whose expiry is
 * at or before `now` counts as gone, whatever Redis's own clock says (Redis only lets it go).
 * Numbers travel as strings both ways: `%.17g` round-trips any double, a rate's fractional
 * interval too (tostring keeps 14 digits and prints 1.7e+15). Needs Redis 7 (PEXPIRETIME).
 *
 * KEYS: 1..n each entry's count (a string: units used, or a rate's arrival time), then the
 *       group (zset member -> until, epoch ms) of each entry that has one, in entry order
 * ARGV: 1 operation (decide | refund), 2 now (epoch ms), 3 take (1 | 0), then 10 per entry:
 *       type (window | rate), cost, max, endsAt, intervalMs, toleranceMs, asks (1 | 0),
 *       force (1 | 0), group max ('' without a group), group member
 *
 * Replies: decide {kind, {indexes...}, {allowed (1 | 0), remaining, resetMs, retryAfterMs, ...}}
 * with kind taken (no index), refused (one), ask (some) or crowded (one, and no states);
 * indexes count from 0, retryAfterMs -1 stands for Infinity (the call never fits). refund {}.
 */
export const LIMIT_SCRIPT = `
local now, take = tonumber(ARGV[2]), ARGV[3] == '1'
local FIELDS = 10

local function num (x) return string.format('%.17g', x) end
-- An expiry is whole milliseconds; rounding up never ends a count before its time.
local function at (x) return string.format('%.0f', math.ceil(x)) end

local n = (#ARGV - 3) / FIELDS
local entries, groups = {}, n
for i = 1, n do
  local a = 3 + (i - 1) * FIELDS
  local e = {
    key = KEYS[i], window = ARGV[a + 1] == 'window', cost = tonumber(ARGV[a + 2]), max = tonumber(ARGV[a + 3]),
    endsAt = tonumber(ARGV[a + 4]), interval = tonumber(ARGV[a + 5]), tolerance = tonumber(ARGV[a + 6]),
    asks = ARGV[a + 7] == '1', force = ARGV[a + 8] == '1',
  }
  if ARGV[a + 9] ~= '' then
    groups = groups + 1
    e.group, e.groupMax, e.member = KEYS[groups], tonumber(ARGV[a + 9]), ARGV[a + 10]
  end
  entries[i] = e
end

local function stored (key)
  local expiry = redis.call('PEXPIRETIME', key)
  if expiry == -2 or (expiry >= 0 and expiry <= now) then return nil end
  return tonumber(redis.call('GET', key))
end

-- evaluate() of store.ts; math.huge is its Infinity.
local function evaluate (e, v)
  if e.window then
    local used = v or 0
    local after = used + e.cost
    local allowed = after <= e.max
    local resetMs = e.endsAt - now
    local retry = 0
    if not allowed then retry = e.cost > e.max and math.huge or resetMs end
    return { allowed = allowed, after = after, expiresAt = e.endsAt, resetMs = resetMs,
      remaining = math.max(0, e.max - ((allowed or (e.asks and e.force)) and after or used)), retry = retry }
  end
  local tat = math.max(v or now, now)
  local after = tat + e.cost * e.interval
  local allowed = after - now <= e.tolerance
  local reached = (allowed or (e.asks and e.force)) and after or tat
  local retry = 0
  if not allowed then retry = e.cost * e.interval > e.tolerance and math.huge or after - e.tolerance - now end
  return { allowed = allowed, after = after, expiresAt = after, resetMs = reached - now,
    remaining = math.max(0, math.floor((e.tolerance - (reached - now)) / e.interval)), retry = retry }
end

local function refund ()
  for _, e in ipairs(entries) do
    local v = stored(e.key)
    if v then
      local left = e.window and math.max(0, v - e.cost) or v - e.cost * e.interval
      redis.call('SET', e.key, num(left), 'KEEPTTL')
    end
  end
  return {}
end

-- A session not yet in its principal's group joins only below the group's max, counting the
-- members that have not ended. One already in it is not refused, even past its until (as in
-- memory): whoever joined since has already dropped it.
local function crowded ()
  for i, e in ipairs(entries) do
    if e.group and not redis.call('ZSCORE', e.group, e.member) then
      redis.call('ZREMRANGEBYSCORE', e.group, '-inf', num(now))
      if redis.call('ZCARD', e.group) >= e.groupMax then return i - 1 end
    end
  end
  return nil
end

-- verdictOf() of store.ts.
local function verdict (states)
  local refused, asks = nil, {}
  for i, e in ipairs(entries) do
    local s = states[i]
    if not (s.allowed or (e.asks and e.force)) then
      if e.asks then table.insert(asks, i - 1)
      elseif refused == nil or s.retry > states[refused + 1].retry then refused = i - 1 end
    end
  end
  if refused then return 'refused', { refused } end
  if #asks > 0 then return 'ask', asks end
  return 'taken', {}
end

-- The group lives as long as its longest-lived member.
local function join (e, untilAt)
  local old = tonumber(redis.call('ZSCORE', e.group, e.member) or '0')
  redis.call('ZADD', e.group, num(math.max(untilAt, old)), e.member)
  local last = redis.call('ZRANGE', e.group, -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', e.group, at(tonumber(last[2])))
end

local function decide ()
  local full = crowded()
  if full then return { 'crowded', { full }, {} } end
  local states = {}
  for i, e in ipairs(entries) do states[i] = evaluate(e, stored(e.key)) end
  local kind, indexes = verdict(states)
  if take and kind == 'taken' then
    for i, e in ipairs(entries) do
      if e.cost > 0 then
        redis.call('SET', e.key, num(states[i].after), 'PXAT', at(states[i].expiresAt))
        if e.group then join(e, states[i].expiresAt) end
      end
    end
  end
  local flat = {}
  for _, s in ipairs(states) do
    table.insert(flat, s.allowed and 1 or 0)
    table.insert(flat, num(s.remaining))
    table.insert(flat, num(s.resetMs))
    table.insert(flat, s.retry == math.huge and '-1' or num(s.retry))
  end
  return { kind, indexes, flat }
end

if ARGV[1] == 'refund' then return refund() end
if ARGV[1] == 'decide' then return decide() end
return redis.error_reply('unknown limit operation ' .. tostring(ARGV[1]))
`
