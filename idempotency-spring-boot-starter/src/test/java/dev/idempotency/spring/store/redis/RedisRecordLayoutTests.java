/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package dev.idempotency.spring.store.redis;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link RedisRecordLayout}, and for the layout as the scripts read it.
 *
 * @author Idempotency contributors
 */
class RedisRecordLayoutTests {

	private final RequestFingerprint fingerprint = RequestFingerprint.of(sequence(32, 1));

	private final OwnerToken token = OwnerToken.fromBytes(sequence(16, 101));

	@Test
	void claimIsAProcessingHeaderWithoutCreationTime() {
		byte[] claim = RedisRecordLayout.claim(this.fingerprint, this.token, 570_000, 600_000);
		String text = new String(claim, 0, 49, StandardCharsets.US_ASCII);
		assertThat(claim).hasSize(97);
		assertThat(text).isEqualTo("P" + "0000000000570000" + "0000000000000000" + "0000000000600000");
		assertThat(Arrays.copyOfRange(claim, 49, 81)).isEqualTo(this.fingerprint.toByteArray());
		assertThat(Arrays.copyOfRange(claim, 81, 97)).isEqualTo(this.token.toBytes());
	}

	@Test
	void fieldsReadBackWhatTheClaimWrote() {
		byte[] claim = RedisRecordLayout.claim(this.fingerprint, this.token, 570_000, 600_000);
		assertThat(RedisRecordLayout.hasHeader(claim)).isTrue();
		assertThat(RedisRecordLayout.isProcessing(claim)).isTrue();
		assertThat(RedisRecordLayout.isCompleted(claim)).isFalse();
		assertThat(RedisRecordLayout.readTime(claim, RedisRecordLayout.TIME_OFFSET)).isEqualTo(570_000);
		assertThat(RedisRecordLayout.readTime(claim, RedisRecordLayout.CREATED_OFFSET)).isZero();
		assertThat(RedisRecordLayout.readTime(claim, RedisRecordLayout.CLAIM_TTL_OFFSET)).isEqualTo(600_000);
		assertThat(RedisRecordLayout.fingerprint(claim)).isEqualTo(this.fingerprint);
		assertThat(RedisRecordLayout.owner(claim)).isEqualTo(this.token);
		assertThat(RedisRecordLayout.hasFingerprint(claim, this.fingerprint)).isTrue();
		assertThat(RedisRecordLayout.hasFingerprint(claim, RequestFingerprint.of(sequence(32, 2)))).isFalse();
	}

	@Test
	void timeFieldIsSixteenDigitsEitherWay() {
		byte[] value = new byte[RedisRecordLayout.HEADER_LENGTH];
		long[] times = { 0, 1, 1_700_000_000_123L, 9_999_999_999_999_999L };
		for (long time : times) {
			RedisRecordLayout.writeTime(value, RedisRecordLayout.CREATED_OFFSET, time);
			assertThat(new String(value, RedisRecordLayout.CREATED_OFFSET, 16, StandardCharsets.US_ASCII))
				.isEqualTo(String.format("%016d", time));
			assertThat(RedisRecordLayout.readTime(value, RedisRecordLayout.CREATED_OFFSET)).isEqualTo(time);
		}
	}

	@Test
	void timeWithAnythingButDigitsIsUnreadable() {
		byte[] claim = RedisRecordLayout.claim(this.fingerprint, this.token, 570_000, 600_000);
		for (byte bad : new byte[] { 'x', ' ', '-', '/', ':', 0 }) {
			byte[] value = claim.clone();
			value[RedisRecordLayout.TIME_OFFSET + 15] = bad;
			assertThat(RedisRecordLayout.readTime(value, RedisRecordLayout.TIME_OFFSET))
				.isEqualTo(RedisRecordLayout.UNREADABLE_TIME);
			assertThat(RedisRecordLayout.readTime(value, RedisRecordLayout.CLAIM_TTL_OFFSET)).isEqualTo(600_000);
		}
	}

	@Test
	void headerNeedsItsLengthAndAKnownState() {
		byte[] claim = RedisRecordLayout.claim(this.fingerprint, this.token, 1, 2);
		assertThat(RedisRecordLayout.hasHeader(Arrays.copyOf(claim, 96))).isFalse();
		assertThat(RedisRecordLayout.hasHeader(new byte[0])).isFalse();
		byte[] completed = Arrays.copyOf(claim, 120);
		completed[RedisRecordLayout.STATE_OFFSET] = 'C';
		assertThat(RedisRecordLayout.hasHeader(completed)).isTrue();
		assertThat(RedisRecordLayout.isCompleted(completed)).isTrue();
		byte[] unknown = claim.clone();
		unknown[RedisRecordLayout.STATE_OFFSET] = 'X';
		assertThat(RedisRecordLayout.hasHeader(unknown)).isFalse();
	}

	@Test
	void scriptsReadTheLayoutInLuaPositions() {
		// Lua counts from 1 and string.sub includes its end
		assertThat(RedisRecordScripts.LAYOUT).containsEntry("STATE_AT", "1")
			.containsEntry("TIME_AT", "2")
			.containsEntry("TIME_END", "17")
			.containsEntry("CREATED_AT", "18")
			.containsEntry("CREATED_END", "33")
			.containsEntry("CLAIM_TTL_AT", "34")
			.containsEntry("CLAIM_TTL_END", "49")
			.containsEntry("FINGERPRINT_AT", "50")
			.containsEntry("FINGERPRINT_END", "81")
			.containsEntry("OWNER_AT", "82")
			.containsEntry("OWNER_END", "97")
			.containsEntry("HEADER", "97")
			.containsEntry("PROCESSING", "'P'")
			.containsEntry("COMPLETED", "'C'")
			.hasSize(15);
	}

	@Test
	void everyPlaceholderOfEveryScriptIsReplaced() {
		String complete = RedisRecordScripts.COMPLETE.getScriptAsString();
		assertThat(complete).contains("string.sub(header, 34, 97)").contains("#header > 97");
		for (var script : RedisRecordScripts.all()) {
			assertThat(script.getScriptAsString()).doesNotContainPattern("\\$\\{[A-Z_]+}");
		}
	}

	@Test
	void unknownPlaceholderFailsTheScript() {
		assertThatIllegalStateException()
			.isThrownBy(() -> RedisRecordScripts.withLayout("return string.sub(v, ${OWNER_START}, 2)", "broken"))
			.withMessage("Lua script 'broken' names ${OWNER_START}, which the record layout lacks");
		assertThat(RedisRecordScripts.withLayout("return ${HEADER} .. ${COMPLETED}", "fine"))
			.isEqualTo("return 97 .. 'C'");
	}

	private static byte[] sequence(int length, int first) {
		byte[] bytes = new byte[length];
		for (int i = 0; i < length; i++) {
			bytes[i] = (byte) (first + i);
		}
		return bytes;
	}

}
