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
-- each script. The record layout is named here once, as RedisRecordLayout names it for
-- Java, so that no script holds an offset of its own.
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
--   state        P processing, C completed
--   time         P: lease floor, the key's PTTL (ms) at or below which the lease has lapsed
--                C: expiry, epoch milliseconds of the Redis clock
--   created at   epoch milliseconds of the Redis clock; P: zeros until stamped
--   claim TTL    the PX (ms) the record was claimed with, so that an unstamped creation
--                time is now - (claim TTL - PTTL) until the key's TTL first changes
--   response     the response in the StoredResponseCodec form

local PROCESSING = 'P'
local COMPLETED = 'C'

local STATE_AT = 1
local TIME_AT = 2
local CREATED_AT = 18
local CLAIM_TTL_AT = 34
local FINGERPRINT_AT = 50
local OWNER_AT = 82
local HEADER = 97

local TIME_DIGITS = 16
local FINGERPRINT_LENGTH = 32
local OWNER_LENGTH = 16

local function field(value, at, length)
	return string.sub(value, at, at + length - 1)
end

local function digits(number)
	return string.format('%016d', number)
end

local function now_millis()
	local time = redis.call('TIME')
	return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local function record_state(value)
	return field(value, STATE_AT, 1)
end

-- whether value is long enough for a header and starts with a known state; the rest is
-- checked where it is read
local function has_header(value)
	if #value < HEADER then
		return false
	end
	local state = record_state(value)
	return state == PROCESSING or state == COMPLETED
end

-- nil unless 16 digits
local function record_lease_floor(value)
	return tonumber(field(value, TIME_AT, TIME_DIGITS))
end

local function record_created(value)
	return tonumber(field(value, CREATED_AT, TIME_DIGITS))
end

local function record_claim_ttl(value)
	return tonumber(field(value, CLAIM_TTL_AT, TIME_DIGITS))
end

local function record_fingerprint(value)
	return field(value, FINGERPRINT_AT, FINGERPRINT_LENGTH)
end

local function record_owner(value)
	return field(value, OWNER_AT, OWNER_LENGTH)
end

-- The completed record of a processing header: its claim TTL, fingerprint and owner are
-- kept, the rest is new.
local function completed_record(header, expires_at, created, response)
	return COMPLETED .. digits(expires_at) .. digits(created) .. string.sub(header, CLAIM_TTL_AT, HEADER) .. response
end

-- Write a processing record's lease floor and creation time, which are adjacent, with one
-- SETRANGE (whose offsets count from 0).
local function stamp_lease(key, floor, created)
	redis.call('SETRANGE', key, TIME_AT - 1, digits(floor) .. digits(created))
end

-- The header of the record at key when the caller's token owns it: returns the header
-- (one byte longer for a completed record) and the state, or nil and the script's answer:
-- 0 when the record is absent or another owner's, -1 when it cannot be read.
local function owned_header(key, token)
	-- GETRANGE counts from 0 and includes its end: the header and one byte more
	local header = redis.call('GETRANGE', key, 0, HEADER)
	if #header == 0 then
		return nil, 0
	end
	if not has_header(header) then
		return nil, -1
	end
	local state = record_state(header)
	-- a processing record is exactly a header
	if state == PROCESSING and #header > HEADER then
		return nil, -1
	end
	if record_owner(header) ~= token then
		return nil, 0
	end
	return header, state
end

-- The creation time of a processing record, stamped or derived from the claim TTL; nil
-- when its digits cannot be read.
local function created_at(key, header, now)
	local created = record_created(header)
	local claim_ttl = record_claim_ttl(header)
	if not created or not claim_ttl then
		return nil
	end
	if created == 0 then
		created = now - (claim_ttl - redis.call('PTTL', key))
	end
	return created
end
