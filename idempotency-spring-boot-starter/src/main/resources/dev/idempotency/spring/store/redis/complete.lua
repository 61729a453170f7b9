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

-- KEYS[1] record key
-- ARGV[1] owner token (16 bytes), ARGV[2] ttl ms, ARGV[3] encoded response
-- returns 1 completed (now or earlier by the same token) | 0 not the owner | -1 unreadable record
local key = KEYS[1]
local header, state = owned_header(key, ARGV[1])
if not header then
	return state
end
if state == ${COMPLETED} then
	return 1
end
local now = now_millis()
local created = created_at(key, header, now)
if not created then
	return -1
end
local ttl = tonumber(ARGV[2])
-- the claim TTL, the fingerprint and the owner stay; the state, the expiry and the creation
-- time are new
redis.call('SET', key, ${COMPLETED} .. digits(now + ttl) .. digits(created)
	.. string.sub(header, ${CLAIM_TTL_AT}, ${HEADER}) .. ARGV[3], 'PX', ttl)
return 1
