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
-- ARGV[1] owner token (16 bytes)
-- returns 1 released | 0 not the owner or not processing | -1 unreadable record
local key = KEYS[1]
local header, refused = owned_header(key, ARGV[1], true)
if not header then
	return refused
end
redis.call('DEL', key)
return 1
