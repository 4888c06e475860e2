/*
 * The concurrency slots of one domain, shared by every replica, as one Lua script: each
 * operation reads and changes the domain atomically, so admission is decided in one place
 * whatever replica a call arrived at. Times are Redis's own clock (TIME), never a replica's,
 * so clock skew between replicas cannot stretch or shorten a lease.
 *
 * KEYS: 1 holders (zset member -> lease expiry), 2 queue (zset member -> arrival number),
 *       3 waiter expiry (zset member -> expiry), 4 counts (hash s, x, gn, gt),
 *       5 tokens (hash member -> fencing token), 6 fence counter, 7 arrival counter
 * ARGV: 1 operation, 2 member, 3 lease ms, 4 max queue, 5 wake-up channel prefix, 6.. more members
 * A member is `kind|replica|n|limit|tool`: kind s (shared), x (exclusive) or g (group of `tool`
 * up to `limit`); `replica` names the wake-up channel of the replica that waits for it.
 *
 * Replies: acquire {1, token} granted, {0} queued, {2} queue full; poll {1, token}, {0} still
 * queued, {3} gone (its waiter entry expired); cancel {0} left the queue, {1} it had been
 * granted and is released now; release {}; renew {waiting count, lost members...}.
 * Wake-up messages: `member token` (granted), `drain member` (a call waits behind this shared slot).
 */
export const SLOT_SCRIPT = `
local holders, queue, waitx, counts, tokens = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local op, member, leaseMs = ARGV[1], ARGV[2], tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local function parse (m)
  local _, _, kind, replica, _, limit, tool = string.find(m, '^(%a)|([^|]*)|([^|]*)|([^|]*)|(.*)$')
  return kind, replica, tonumber(limit), tool
end

local function canStart (m)
  local kind, _, limit, tool = parse(m)
  local c = redis.call('HMGET', counts, 's', 'x', 'gn', 'gt')
  local shared, gn = tonumber(c[1] or '0'), tonumber(c[3] or '0')
  if c[2] then return false end
  if kind == 's' then return gn == 0 end
  if kind == 'x' then return shared == 0 and gn == 0 end
  return shared == 0 and (gn == 0 or (c[4] == tool and gn < limit))
end

local function occupy (m)
  local kind, _, _, tool = parse(m)
  if kind == 's' then redis.call('HINCRBY', counts, 's', 1)
  elseif kind == 'x' then redis.call('HSET', counts, 'x', 1)
  else redis.call('HINCRBY', counts, 'gn', 1); redis.call('HSET', counts, 'gt', tool) end
  -- A fresh counter (a Redis that restarted without persistence) starts from the clock in
  -- microseconds, above every token issued before (unless those averaged over a million
  -- grants a second), so tokens keep growing across a restart.
  if redis.call('EXISTS', KEYS[6]) == 0 then redis.call('SET', KEYS[6], string.format('%.0f', now * 1000)) end
  local token = redis.call('INCR', KEYS[6])
  redis.call('ZADD', holders, now + leaseMs, m)
  redis.call('HSET', tokens, m, string.format('%.0f', token))
  return token
end

local function vacate (m)
  if redis.call('ZREM', holders, m) == 0 then return end
  redis.call('HDEL', tokens, m)
  local kind = parse(m)
  if kind == 's' then
    if redis.call('HINCRBY', counts, 's', -1) <= 0 then redis.call('HDEL', counts, 's') end
  elseif kind == 'x' then redis.call('HDEL', counts, 'x')
  elseif redis.call('HINCRBY', counts, 'gn', -1) <= 0 then redis.call('HDEL', counts, 'gn', 'gt') end
end

local function leaveQueue (m)
  redis.call('ZREM', waitx, m)
  return redis.call('ZREM', queue, m)
end

-- Holders and waiters whose replica stopped renewing them (it died, or lost Redis) go.
local function purge ()
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', holders, '-inf', now)) do vacate(m) end
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', waitx, '-inf', now)) do leaveQueue(m) end
end

-- Admit from the head of the queue, in arrival order, while the head may start.
local function pump ()
  while true do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head or not canStart(head) then return end
    leaveQueue(head)
    local token = occupy(head)
    local _, replica = parse(head)
    -- %.0f: Lua would print a number this large as 1.79e+15, losing its last digits.
    redis.call('PUBLISH', ARGV[5] .. replica, head .. ' ' .. string.format('%.0f', token))
  end
end

-- Tell every replica holding a shared slot here that a call waits: it must stop admitting
-- new shared calls under that slot (see shared-holds.ts), or the waiter could starve.
local function drainShared ()
  if redis.call('ZCARD', queue) == 0 then return end
  for _, m in ipairs(redis.call('ZRANGE', holders, 0, -1)) do
    local kind, replica = parse(m)
    if kind == 's' then redis.call('PUBLISH', ARGV[5] .. replica, 'drain ' .. m) end
  end
end

-- A domain nobody calls any more (its replicas died) must not stay in Redis for ever: its keys
-- live three leases past the last operation, and every live holder or waiter renews well before.
local function keepAlive ()
  for i = 1, 5 do redis.call('PEXPIRE', KEYS[i], leaseMs * 3) end
end

purge()
pump()
local reply
if op == 'acquire' then
  if redis.call('ZCARD', queue) == 0 and canStart(member) then
    local token = occupy(member)
    keepAlive()
    return { 1, token }
  end
  if redis.call('ZCARD', queue) >= tonumber(ARGV[4]) then return { 2 } end
  redis.call('ZADD', queue, redis.call('INCR', KEYS[7]), member)
  redis.call('ZADD', waitx, now + leaseMs, member)
  reply = { 0 }
elseif op == 'poll' then
  local token = redis.call('HGET', tokens, member)
  if token then reply = { 1, tonumber(token) }
  elseif not redis.call('ZSCORE', queue, member) then reply = { 3 }
  else
    redis.call('ZADD', waitx, now + leaseMs, member)
    reply = { 0 }
  end
elseif op == 'cancel' then
  if leaveQueue(member) == 1 then reply = { 0 } else vacate(member); reply = { 1 } end
  pump()
elseif op == 'release' then
  vacate(member)
  pump()
  reply = {}
elseif op == 'renew' then
  -- First element: whether anything waits in the domain (a backstop for a lost drain message).
  reply = { redis.call('ZCARD', queue) }
  for i = 2, #ARGV do
    if i ~= 3 and i ~= 4 and i ~= 5 then
      if redis.call('ZSCORE', holders, ARGV[i]) then redis.call('ZADD', holders, now + leaseMs, ARGV[i])
      else table.insert(reply, ARGV[i]) end
    end
  end
  keepAlive()
  return reply
else
  return redis.error_reply('unknown slot operation ' .. op)
end
drainShared()
keepAlive()
return reply
`
