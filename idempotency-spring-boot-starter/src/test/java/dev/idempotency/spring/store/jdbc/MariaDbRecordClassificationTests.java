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

package dev.idempotency.spring.store.jdbc;

import java.time.LocalDateTime;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for how {@link MariaDbRecordTable} classifies a record it read by the time of the
 * statement that read it: the comparisons and roundings that its statement made in SQL
 * before ({@code time <= UTC_TIMESTAMP(6)}, {@code CEIL} and {@code FLOOR} of
 * {@code TIMESTAMPDIFF(MICROSECOND, ...) / 1000}, {@code NULL} read as false and 0).
 *
 * @author Idempotency contributors
 */
class MariaDbRecordClassificationTests {

	private static final LocalDateTime READ_AT = LocalDateTime.of(2026, 12, 3, 12, 0, 0, 500_000_000);

	@Test
	void timeIsReachedAtAndBeforeTheStatementsTime() {
		assertThat(MariaDbRecordTable.reached(READ_AT, READ_AT)).isTrue();
		assertThat(MariaDbRecordTable.reached(READ_AT.minusNanos(1_000), READ_AT)).isTrue();
		assertThat(MariaDbRecordTable.reached(READ_AT.plusNanos(1_000), READ_AT)).isFalse();
	}

	@Test
	void noTimeIsNeverReached() {
		assertThat(MariaDbRecordTable.reached(null, READ_AT)).isFalse();
	}

	@Test
	void remainingTimeOfALeaseRoundsUpToTheMillisecond() {
		assertThat(MariaDbRecordTable.millisUntil(READ_AT.plusNanos(1_000), READ_AT, true)).isEqualTo(1);
		assertThat(MariaDbRecordTable.millisUntil(READ_AT.plusNanos(1_000_000), READ_AT, true)).isEqualTo(1);
		assertThat(MariaDbRecordTable.millisUntil(READ_AT.plusNanos(1_001_000), READ_AT, true)).isEqualTo(2);
		assertThat(MariaDbRecordTable.millisUntil(READ_AT.plusSeconds(30), READ_AT, true)).isEqualTo(30_000);
	}

	@Test
	void remainingTimeOfALapsedLeaseIsNotPositive() {
		// CEIL(-0.999) is 0, CEIL(-1.001) is -1: the caller takes max(0, ...)
		assertThat(MariaDbRecordTable.millisUntil(READ_AT.minusNanos(999_000), READ_AT, true)).isZero();
		assertThat(MariaDbRecordTable.millisUntil(READ_AT.minusNanos(1_001_000), READ_AT, true)).isEqualTo(-1);
	}

	@Test
	void remainingTimeToLiveRoundsDownToTheMillisecond() {
		assertThat(MariaDbRecordTable.millisUntil(READ_AT.plusNanos(999_000), READ_AT, false)).isZero();
		assertThat(MariaDbRecordTable.millisUntil(READ_AT.plusNanos(1_999_000), READ_AT, false)).isEqualTo(1);
		assertThat(MariaDbRecordTable.millisUntil(READ_AT.minusNanos(1_000), READ_AT, false)).isEqualTo(-1);
		assertThat(MariaDbRecordTable.millisUntil(READ_AT.plusDays(1), READ_AT, false)).isEqualTo(86_400_000);
	}

	@Test
	void noTimeRemainsZero() {
		assertThat(MariaDbRecordTable.millisUntil(null, READ_AT, true)).isZero();
		assertThat(MariaDbRecordTable.millisUntil(null, READ_AT, false)).isZero();
	}

	@Test
	void remainingTimeAcrossMidnightAndMonths() {
		LocalDateTime late = LocalDateTime.of(2026, 12, 31, 23, 59, 59, 999_999_000);
		assertThat(MariaDbRecordTable.millisUntil(late.plusNanos(2_000), late, true)).isEqualTo(1);
		assertThat(MariaDbRecordTable.millisUntil(late.plusNanos(2_000), late, false)).isZero();
	}

}
