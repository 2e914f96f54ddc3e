"""The Lua scripts of the Redis trajectory store: each one atomic, one round trip."""

# KEYS: the trajectory hash, recent, open, the start's token key, the vault hash, the vault log,
# the bitmap of its steps that have a record.
# Returns the step, the attempt, the trajectory's hash and the length of its vault log (the vault
# itself is not returned: a reader reads what it does not know yet, VAULT_SINCE).
# ARGV: fingerprint, retry flag, now, task, route, namespace, ttl, id, force-new flag, token ttl,
# the oldest time kept in the indexes, the most ids kept in `recent`.
# `begun_at` is Redis' own clock when an attempt of a step was last counted (a write-back's too,
# whatever time its step was told): the time LOST_STEPS measures the lost-step bound from, on one
# clock whatever the replicas' clocks say.
BEGIN_STEP = """
local h = KEYS[1]
local seen = redis.call('GET', KEYS[4])
if seen then
  local step, attempt = string.match(seen, '(%d+):(%d+)')
  if ARGV[9] == '1' then return {tonumber(step), tonumber(attempt), {}, 0} end
  return {tonumber(step), tonumber(attempt), redis.call('HGETALL', h), redis.call('LLEN', KEYS[6])}
end
local fp, retry, now, id = ARGV[1], ARGV[2], ARGV[3], ARGV[8]
local steps = tonumber(redis.call('HGET', h, 'steps') or '0')
local attempt = 1
local is_retry = false
if steps > 0 and ARGV[9] ~= '1' then
  if retry == '1' then
    is_retry = true
  elseif redis.call('HGET', h, 'last_fingerprint') == fp then
    is_retry = true
  end
end
if is_retry then
  attempt = redis.call('HINCRBY', h, 'attempts', 1)
else
  if steps == 0 then
    -- A trajectory begun anew under this id: a vault left by an earlier one is not its own, nor
    -- its recorded steps. Bit 0 (steps count from 1) says the bitmap holds every record since
    -- the first step: only then can LOST_STEPS read a missing bit as a step without a record.
    redis.call('DEL', KEYS[5], KEYS[6], KEYS[7])
    redis.call('SETBIT', KEYS[7], 0, 1)
    redis.call('HSET', h, 'id', id, 'created_at', now, 'task', ARGV[4], 'route', ARGV[5], 'namespace', ARGV[6])
  end
  steps = redis.call('HINCRBY', h, 'steps', 1)
  redis.call('HSET', h, 'attempts', 1, 'last_fingerprint', fp)
end
local clock = redis.call('TIME')
local begun = clock[1] .. '.' .. string.format('%06d', tonumber(clock[2]))
redis.call('HSET', h, 'last_status', 'pending', 'begun_at', begun)
if tonumber(redis.call('HGET', h, 'updated_at') or '0') < tonumber(now) then
  redis.call('HSET', h, 'updated_at', now)
end
redis.call('EXPIRE', h, tonumber(ARGV[7]))
redis.call('EXPIRE', KEYS[5], tonumber(ARGV[7]))
redis.call('EXPIRE', KEYS[6], tonumber(ARGV[7]))
redis.call('EXPIRE', KEYS[7], tonumber(ARGV[7]))
redis.call('SET', KEYS[4], steps .. ':' .. attempt, 'EX', tonumber(ARGV[10]))
-- The indexes are the gateway's own: one of another type (written by hand, another program)
-- would fail every step of every run; it is dropped and built again from here.
for i = 2, 3 do
  local kind = redis.call('TYPE', KEYS[i])['ok']
  if kind ~= 'zset' and kind ~= 'none' then redis.call('DEL', KEYS[i]) end
end
redis.call('ZADD', KEYS[2], now, id)
if redis.call('HEXISTS', h, 'closed_at') == 0 then
  redis.call('ZADD', KEYS[3], now, id)
end
-- Bounded indexes: ids whose trajectory has expired leave both; `recent` keeps the newest only.
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[11])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[11])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[12]) - 1)
-- A write-back needs the index only: the whole hash would cost it a reply per step.
if ARGV[9] == '1' then return {steps, attempt, {}, 0} end
return {steps, attempt, redis.call('HGETALL', h), redis.call('LLEN', KEYS[6])}
"""

# One step record, once: KEYS: the trajectory hash, its record list, the record's token key, the
# vault hash and log (their time-to-live follows the trajectory's), the bitmap of the steps
# whose answers are counted, and the bitmap of the steps that have a record.
# ARGV: the record, its status, the target that answered it or '', ttl, records kept, token ttl,
# its step, 'lost' for a lost step's record (router/trajectory/lost.py) or '', then pairs of
# ('i:' or 'f:' + total name, increment).
# An answer counts in `<target>_steps` by `router.trajectory.state.counts_answer`'s rule: once
# per step, whichever of its answered attempts is recorded first.
# Returns 2 for an answer its step had counted already (a repeat), else 1; 0 for a lost step's
# record refused because its step has a record (its real one came, or another replica's sweep
# wrote one first: a step is recorded lost once); for a record written already (its token), 10
# more than it returned then (kept in the token's key): a write-back of a record whose reply was
# lost learns whether it counted.
RECORD = """
local seen = redis.call('GET', KEYS[3])
if seen then return 10 + tonumber(seen) end
local step = tonumber(ARGV[7])
if ARGV[8] == 'lost' and redis.call('GETBIT', KEYS[7], step) == 1 then
  redis.call('SET', KEYS[3], '0', 'EX', tonumber(ARGV[6]))
  return 0
end
redis.call('SET', KEYS[3], '1', 'EX', tonumber(ARGV[6]))
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[5]) - 1)
redis.call('SETBIT', KEYS[7], step, 1)
local written = 1
if ARGV[3] ~= '' then
  if redis.call('SETBIT', KEYS[6], step, 1) == 1 then
    written = 2
  else
    redis.call('HINCRBY', KEYS[1], ARGV[3] .. '_steps', 1)
    if tonumber(redis.call('HGET', KEYS[1], 'answered_step') or '0') < step then
      redis.call('HSET', KEYS[1], 'answered_step', step)
    end
    if ARGV[3] == 'cloud' and tonumber(redis.call('HGET', KEYS[1], 'last_cloud_step') or '0') < step then
      redis.call('HSET', KEYS[1], 'last_cloud_step', step)
    end
  end
end
for i = 9, #ARGV, 2 do
  local name = string.sub(ARGV[i], 3)
  if string.sub(ARGV[i], 1, 1) == 'i' then
    redis.call('HINCRBY', KEYS[1], name, ARGV[i + 1])
  else
    redis.call('HINCRBYFLOAT', KEYS[1], name, ARGV[i + 1])
  end
end
redis.call('HSET', KEYS[1], 'last_status', ARGV[2])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[4]))
redis.call('EXPIRE', KEYS[4], tonumber(ARGV[4]))
redis.call('EXPIRE', KEYS[5], tonumber(ARGV[4]))
redis.call('EXPIRE', KEYS[6], tonumber(ARGV[4]))
redis.call('EXPIRE', KEYS[7], tonumber(ARGV[4]))
if written == 2 then redis.call('SET', KEYS[3], '2', 'EX', tonumber(ARGV[6])) end
return written
"""

# The steps of a trajectory counted with no record whose start is older than any step could
# still be running (router/trajectory/lost.py). Their records are not written here but by RECORD
# with its 'lost' flag, which refuses a second one; this writes only the bits of steps whose
# record it finds in the list alone.
# KEYS: the trajectory hash, the bitmap of its steps that have a record, its record list, the
# write-back mark (set, for the bound, when a replica begins writing an outage's journal back).
# ARGV: the bound (seconds since the trajectory's last step start, by Redis' clock), the most
# indexes returned.
# Returns {0} (nothing to repair: closed, gone, begun before the bitmap was kept, no gap), {1,
# seconds} (a gap, but a step may still be running or a write-back may still bring its record:
# not before that many seconds), or {2, route, updated_at, more (1 when more than ARGV[2] are
# missing), index, ...}.
LOST_STEPS = """
local h, done = KEYS[1], KEYS[2]
if redis.call('HEXISTS', h, 'closed_at') == 1 then return {0} end
local steps = tonumber(redis.call('HGET', h, 'steps') or '0')
if steps == 0 or redis.call('GETBIT', done, 0) == 0 then return {0} end
-- Bit 0 and one bit a recorded step: a count below steps + 1 is a gap (the usual case, none, is
-- told by this count alone).
if redis.call('BITCOUNT', done) > steps then return {0} end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
-- The later of Redis' clock at the last start and the replica's (`updated_at`): a step begun by
-- a gateway that sets no `begun_at` (a rolling upgrade) still moves the bound.
local begun = tonumber(redis.call('HGET', h, 'begun_at') or '0')
local updated = tonumber(redis.call('HGET', h, 'updated_at') or '0')
local wait = math.max(begun, updated) + tonumber(ARGV[1]) - now
local marked = redis.call('PTTL', KEYS[4])
if marked > 0 and marked / 1000 > wait then wait = marked / 1000 end
if wait > 0 then return {1, tostring(wait)} end
local bits = redis.call('GET', done) or ''
local missing = {}
for i = 0, math.floor(steps / 8) do
  local byte = string.byte(bits, i + 1) or 0
  if byte ~= 255 then
    for b = 0, 7 do
      local step = i * 8 + b
      if step >= 1 and step <= steps and math.floor(byte / 2 ^ (7 - b)) % 2 == 0 then
        missing[#missing + 1] = step
      end
    end
  end
end
-- A record of a gateway that kept no bitmap (during a rolling upgrade) is in the list only: a
-- step it recorded is not lost. Read only for a trajectory with a gap, once.
local wanted = {}
for _, step in ipairs(missing) do wanted[step] = true end
for _, line in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
  local step = tonumber(string.match(line, '"step":(%d+)'))
  if step and wanted[step] then
    wanted[step] = nil
    redis.call('SETBIT', done, step, 1)
  end
end
local reply = {2, redis.call('HGET', h, 'route') or '', redis.call('HGET', h, 'updated_at') or '0', 0}
for _, step in ipairs(missing) do
  if wanted[step] then
    if #reply - 4 >= tonumber(ARGV[2]) then
      reply[4] = 1
      break
    end
    reply[#reply + 1] = step
  end
end
return reply
"""

# A vault note: KEYS: the vault hash, the vault log. ARGV: key, value, keep-first flag, ttl.
# A new or changed value is logged (its key), so that readers read it once, by position.
VAULT_NOTE = """
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old and (ARGV[3] == '1' or old == ARGV[2]) then return old end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[4]))
return ARGV[2]
"""

# The vault entries logged after the first ARGV[1]: {next position, {key, value, ...}}.
VAULT_SINCE = """
local since = tonumber(ARGV[1])
local keys = redis.call('LRANGE', KEYS[2], since, -1)
local flat = {}
for _, key in ipairs(keys) do
  flat[#flat + 1] = key
  flat[#flat + 1] = redis.call('HGET', KEYS[1], key) or ''
end
return {since + #keys, flat}
"""

NOTE = """
if ARGV[3] == '1' then
  if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then
    return redis.call('HGET', KEYS[1], ARGV[1])
  end
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return ARGV[2]
"""

SET_OUTCOME = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('HSETNX', KEYS[1], 'outcome', ARGV[1])
"""

CLOSE = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[2], ARGV[3])  -- expired: it must not stay open for ever
  return nil
end
if redis.call('HSETNX', KEYS[1], 'closed_at', ARGV[1]) == 0 then return nil end
redis.call('HSET', KEYS[1], 'close_reason', ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[3])
return redis.call('HGETALL', KEYS[1])
"""

# Stitching entries edited where they are kept (router/trajectory/merges.py, whose `merged` this
# mirrors op for op; tests/test_merges.py holds the two to the same results).
# KEYS: the entries. ARGV: the time-to-live, then per key its op and three arguments.
MERGE = """
local function split(raw)
  local tokens = {}
  if raw then for token in string.gmatch(raw, '%S+') do tokens[#tokens + 1] = token end end
  return tokens
end
local function run_of(token)
  local bar = string.find(token, '|', 1, true)
  if bar then return string.sub(token, 1, bar - 1) end
  return token
end
local function has(tokens, value)
  for _, token in ipairs(tokens) do if token == value then return true end end
  return false
end
local ttl = ARGV[1]
for i, key in ipairs(KEYS) do
  local at = 2 + (i - 1) * 4
  local op, a, b, c = ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3]
  local tokens = split(redis.call('GET', key))
  local out = nil
  if op == 'drop' then
    out = {}
    for _, token in ipairs(tokens) do if run_of(token) ~= a then out[#out + 1] = token end end
    if #out == #tokens then out = nil end
  elseif op == 'append' then
    tokens[#tokens + 1] = a
    out = {}
    for j = math.max(1, #tokens - tonumber(b) + 1), #tokens do out[#out + 1] = tokens[j] end
  elseif op == 'front' then
    if not has(tokens, a) then
      out = {a}
      for j = 1, math.min(#tokens, tonumber(b) - 1) do out[#out + 1] = tokens[j] end
    end
  elseif op == 'mark' then
    local flying = {}
    local unknown = 0
    if tokens[2] == 'flight' then flying[1] = tokens[1] end
    for j = 3, #tokens do
      local count = string.match(tokens[j], '^%+(%d+)$')
      if count then unknown = unknown + tonumber(count) else flying[#flying + 1] = tokens[j] end
    end
    if b ~= 'flight' then
      local removed = false
      for j, token in ipairs(flying) do
        if token == a then table.remove(flying, j) removed = true break end
      end
      if not removed and unknown > 0 then unknown = unknown - 1 end
    end
    local keep = tonumber(c) - 1
    out = {a, b}
    for j = 1, math.min(#flying, keep) do out[#out + 1] = flying[j] end
    if #flying > keep then unknown = unknown + #flying - keep end
    if unknown > 0 then out[#out + 1] = '+' .. string.format('%d', unknown) end
  elseif op == 'note' then
    local token = a .. b
    if not has(tokens, token) then
      out = {}
      local first = 1
      if #tokens >= tonumber(c) then first = #tokens - tonumber(c) + 2 end
      for j = first, #tokens do out[#out + 1] = tokens[j] end
      out[#out + 1] = token
    end
  else
    return redis.error_reply('unknown stitching merge ' .. op)
  end
  if out then redis.call('SET', key, table.concat(out, ' '), 'EX', ttl) end
end
return #KEYS
"""
