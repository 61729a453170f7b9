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
-- ARGV[1] owner token (16 bytes), ARGV[2] lease ms
-- returns 1 extended | 0 not the owner or not processing | -1 unreadable record
local key = KEYS[1]
local header, refused = owned_header(key, ARGV[1], true)
if not header then
	return refused
end
local created = created_at(key, header, now_millis())
if not created then
	return -1
end
local lease = tonumber(ARGV[2])
local pttl = redis.call('PTTL', key)
-- the record must not expire while its lease is live
if pttl < lease then
	redis.call('PEXPIRE', key, lease)
	pttl = lease
end
-- the lease floor and the creation time are adjacent: one SETRANGE (which counts from 0)
redis.call('SETRANGE', key, ${TIME_AT} - 1, digits(pttl - lease) .. digits(created))
return 1
