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
-- returns {} absent | {value, pttl, now}
local key = KEYS[1]
local value = redis.call('GET', key)
if not value then
	return {}
end
local time = redis.call('TIME')
return {value, redis.call('PTTL', key), tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)}
