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

-- The claim when the key is processing (its lease may have lapsed), and the whole acquire
-- on servers whose SET cannot combine NX and GET (before Redis 7.0).
-- KEYS[1] record key
-- ARGV[1] the claim: a processing record (P, lease floor, zeros, claim TTL, fingerprint,
--         token), ARGV[2] claim TTL ms
-- returns {1} acquired | {2, value} replay | {3, remaining lease ms} in progress
--         {4} fingerprint mismatch | {-1} unreadable record
local key = KEYS[1]
local value = redis.call('GET', key)
if value then
	if not has_header(value) then
		return {-1}
	end
	-- a key reused with another request is misuse, whatever the state, until it expires
	if string.sub(value, ${FINGERPRINT_AT}, ${FINGERPRINT_END})
			~= string.sub(ARGV[1], ${FINGERPRINT_AT}, ${FINGERPRINT_END}) then
		return {4}
	end
	if string.sub(value, ${STATE_AT}, ${STATE_END}) == ${COMPLETED} then
		return {2, value}
	end
	-- nil unless digits
	local floor = tonumber(string.sub(value, ${TIME_AT}, ${TIME_END}))
	local pttl = redis.call('PTTL', key)
	if #value ~= ${HEADER} or not floor or pttl < 0 then
		return {-1}
	end
	if pttl > floor then
		return {3, pttl - floor}
	end
	-- the owner's lease lapsed: take the record over
end
redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
return {1}
