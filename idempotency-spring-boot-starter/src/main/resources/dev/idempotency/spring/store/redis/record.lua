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
-- Prelude of every script of RedisIdempotencyStore: RedisRecordScripts puts it in front of
-- each script.
--
-- The record layout is named once, in RedisRecordLayout. A script names it with ${...}
-- placeholders, which RedisRecordScripts replaces with the layout's numbers and state
-- letters when it loads the scripts (an unknown name fails it; a placeholder left in the text
-- would not compile). Redis runs a script's whole text on every call, so a Lua local here
-- would be set again on every call and captured anew by every helper that reads it: with
-- the layout in locals the completion script took 19% more of Redis' time per call
-- (docs/benchmarks/restructuring.md, "The redis first request, profiled"). Helpers are few for the same
-- reason: each is a closure created on every call.
--
-- Record layout (1-based byte positions; times are 16 ASCII digits):
--
--   1     2              18             34             50             82             98
--   +-----+--------------+--------------+--------------+--------------+--------------+-----------
--   |state| time         | created at   | claim TTL    | fingerprint  | owner token  | response
--   | P/C | 16 digits    | 16 digits    | 16 digits    | 32 bytes     | 16 bytes     | C only
--   +-----+--------------+--------------+--------------+--------------+--------------+-----------
--   |<------------------------------ header, 97 bytes ------------------------------->|
--
--   state        ${PROCESSING} processing, ${COMPLETED} completed, at ${STATE_AT}
--   time         ${TIME_AT}-${TIME_END}. P: lease floor, the key's PTTL (ms) at or below which
--                the lease has lapsed. C: expiry, epoch milliseconds of the Redis clock
--   created at   ${CREATED_AT}-${CREATED_END}, epoch milliseconds of the Redis clock; P: zeros
--                until stamped
--   claim TTL    ${CLAIM_TTL_AT}-${CLAIM_TTL_END}, the PX (ms) the record was claimed with, so
--                that an unstamped creation time is now - (claim TTL - PTTL) until the key's
--                TTL first changes
--   fingerprint  ${FINGERPRINT_AT}-${FINGERPRINT_END}
--   owner token  ${OWNER_AT}-${OWNER_END}; the header ends there: ${HEADER} bytes
--   response     the response in the StoredResponseCodec form

local function digits(number)
	return string.format('%016d', number)
end

local function now_millis()
	local time = redis.call('TIME')
	return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- whether value is long enough for a header and starts with a known state; the rest is
-- checked where it is read
local function has_header(value)
	if #value < ${HEADER} then
		return false
	end
	local state = string.sub(value, ${STATE_AT}, ${STATE_END})
	return state == ${PROCESSING} or state == ${COMPLETED}
end

-- The header of the record at key when the caller's token owns it (and, with
-- processing_only, the record is still processing): returns the header (one byte longer
-- for a completed record) and the state, or nil and the script's answer: 0 when the record
-- is absent, another owner's or (processing_only) completed, -1 when it cannot be read.
local function owned_header(key, token, processing_only)
	-- GETRANGE counts from 0 and includes its end: the header and one byte more
	local header = redis.call('GETRANGE', key, 0, ${HEADER})
	if #header == 0 then
		return nil, 0
	end
	if not has_header(header) then
		return nil, -1
	end
	local state = string.sub(header, ${STATE_AT}, ${STATE_END})
	-- a processing record is exactly a header
	if state == ${PROCESSING} and #header > ${HEADER} then
		return nil, -1
	end
	if string.sub(header, ${OWNER_AT}, ${OWNER_END}) ~= token then
		return nil, 0
	end
	if processing_only and state ~= ${PROCESSING} then
		return nil, 0
	end
	return header, state
end

-- The creation time of a processing record, stamped or derived from the claim TTL; nil
-- when its digits cannot be read.
local function created_at(key, header, now)
	local created = tonumber(string.sub(header, ${CREATED_AT}, ${CREATED_END}))
	local claim_ttl = tonumber(string.sub(header, ${CLAIM_TTL_AT}, ${CLAIM_TTL_END}))
	if not created or not claim_ttl then
		return nil
	end
	if created == 0 then
		created = now - (claim_ttl - redis.call('PTTL', key))
	end
	return created
end
