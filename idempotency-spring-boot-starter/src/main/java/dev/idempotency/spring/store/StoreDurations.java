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

package dev.idempotency.spring.store;

import java.time.Duration;
import java.util.Objects;

/**
 * The one rule by which the stores of this project turn a lease or a time to live into
 * the whole milliseconds that Redis ({@code PX}) and PostgreSQL ({@code INTERVAL}) are
 * given: a positive duration is rounded <em>up</em> to the next millisecond, so that a
 * store never keeps a record or a lease for less than it was asked to (and a
 * sub-millisecond duration still gives a lease, never an already lapsed one).
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class StoreDurations {

	private StoreDurations() {
	}

	/**
	 * Return a positive duration in whole milliseconds, rounded up.
	 * @param duration the duration, positive
	 * @param name the name of the argument, for the exception messages
	 * @return the milliseconds, at least 1
	 * @throws IllegalArgumentException if the duration is zero or negative
	 */
	public static long toMillis(Duration duration, String name) {
		Objects.requireNonNull(duration, () -> "'" + name + "' must not be null");
		if (duration.isNegative() || duration.isZero()) {
			throw new IllegalArgumentException("'" + name + "' must be positive");
		}
		long millis = duration.toMillis();
		return (duration.toNanosPart() % 1_000_000 != 0) ? millis + 1 : millis;
	}

}
