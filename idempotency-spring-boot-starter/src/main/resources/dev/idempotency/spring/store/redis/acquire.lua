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
-- Record layout (1-based): 1 state P|C, 2-17 lease expiry, 18-33 creation time (both epoch
-- milliseconds of the Redis clock as 16 decimal digits), 34-65 fingerprint, 66-81 owner
-- token, 82- encoded response (C only). See RedisIdempotencyStore.

-- KEYS[1] record key
-- ARGV[1] fingerprint (32 bytes), ARGV[2] owner token (16 bytes), ARGV[3] lease ms, ARGV[4] ttl ms
-- returns {1} acquired | {2, value, pttl, now} replay | {3, remaining lease ms} in progress
--         {4} fingerprint mismatch | {-1} unreadable record
local key = KEYS[1]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local value = redis.call('GET', key)
if value then
	if string.len(value) < 81 then
		return {-1}
	end
	local state = string.sub(value, 1, 1)
	if state ~= 'P' and state ~= 'C' then
		return {-1}
	end
	-- a key reused with another request is misuse, whatever the state, until it expires
	if string.sub(value, 34, 65) ~= ARGV[1] then
		return {4}
	end
	if state == 'C' then
		return {2, value, redis.call('PTTL', key), now}
	end
	local lease = tonumber(string.sub(value, 2, 17))
	if not lease then
		return {-1}
	end
	if lease > now then
		return {3, lease - now}
	end
	-- the owner's lease lapsed: fall through and take the record over
end
redis.call('SET', key, 'P' .. string.format('%016d', now + tonumber(ARGV[3])) .. string.format('%016d', now)
	.. ARGV[1] .. ARGV[2], 'PX', ARGV[4])
return {1}
