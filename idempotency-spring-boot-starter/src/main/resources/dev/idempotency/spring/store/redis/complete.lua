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
-- ARGV[1] owner token (16 bytes), ARGV[2] ttl ms, ARGV[3] encoded response
-- returns 1 completed (now or earlier by the same token) | 0 not the owner | -1 unreadable record
local key = KEYS[1]
local header = redis.call('GETRANGE', key, 0, 80)
if string.len(header) == 0 then
	return 0
end
if string.len(header) < 81 then
	return -1
end
local state = string.sub(header, 1, 1)
if state ~= 'P' and state ~= 'C' then
	return -1
end
if string.sub(header, 66, 81) ~= ARGV[1] then
	return 0
end
if state == 'C' then
	return 1
end
if redis.call('STRLEN', key) ~= 81 then
	return -1
end
-- rewrite in place rather than concatenating the response into a new Lua string
redis.call('SETRANGE', key, 0, 'C0000000000000000')
redis.call('APPEND', key, ARGV[3])
redis.call('PEXPIRE', key, ARGV[2])
return 1
