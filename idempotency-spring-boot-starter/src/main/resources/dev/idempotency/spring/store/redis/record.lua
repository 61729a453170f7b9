-- Copyright 2026-present the original author or authors.
--
-- Licensed under the Apache License, Version 2.0 (the "License");
-- you may not use this file except in compliance with the License.
-- You may obtain a copy of the License at
--
--      https://www.apache.org/licenses/LICENSE-2.0
--
-- Unless required by applicable law or agreed to in writing, software
-- distributed under the License is distributed on an "AS IS" BASIS,
-- WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
-- See the License for the specific language governing permissions and
-- limitations under the License.
--
--
-- Prelude of every script of RedisIdempotencyStore: LuaScript prepends it to each script.
--
-- Record layout (1-based byte positions), see RedisIdempotencyStore:
--   1      state: P processing, C completed
--   2-17   P: lease floor, the key's PTTL (ms) at or below which the lease has lapsed
--          C: expiry, epoch milliseconds of the Redis clock
--   18-33  creation time, epoch milliseconds of the Redis clock; P: zeros until stamped
--   34-49  claim TTL (ms): the PX the record was claimed with, so that an unstamped
--          creation time is now - (claim TTL - PTTL) until the key's TTL first changes
--   50-81  request fingerprint (32 bytes)
--   82-97  owner token (16 bytes)
--   98-    C only: the response in the StoredResponseCodec form
-- Times are 16 ASCII digits.

local HEADER = 97

local function digits(number)
	return string.format('%016d', number)
end

local function now_millis()
	local time = redis.call('TIME')
	return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- The header of the record at key when the caller's token owns it: returns the header
-- (one byte longer for a completed record) and the state, or nil and the script's answer:
-- 0 when the record is absent or another owner's, -1 when it cannot be read.
local function owned_header(key, token)
	local header = redis.call('GETRANGE', key, 0, HEADER)
	if #header == 0 then
		return nil, 0
	end
	if #header < HEADER then
		return nil, -1
	end
	local state = string.sub(header, 1, 1)
	if state ~= 'P' and state ~= 'C' then
		return nil, -1
	end
	-- a processing record is exactly a header
	if state == 'P' and #header > HEADER then
		return nil, -1
	end
	if string.sub(header, 82, 97) ~= token then
		return nil, 0
	end
	return header, state
end

-- The creation time of a processing record, stamped or derived from the claim TTL; nil
-- when its digits cannot be read.
local function created_at(key, header, now)
	local created = tonumber(string.sub(header, 18, 33))
	local claim_ttl = tonumber(string.sub(header, 34, 49))
	if not created or not claim_ttl then
		return nil
	end
	if created == 0 then
		created = now - (claim_ttl - redis.call('PTTL', key))
	end
	return created
end

