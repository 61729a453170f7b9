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

package dev.idempotency.spring.observation;

import java.util.Locale;

/**
 * Where an idempotent call came in. The {@link #value() values} other than {@code http}
 * are those of the {@code entry.point} key of the {@code idempotency.call} observation;
 * requests to idempotent endpoints are the {@code idempotency.request} observation.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public enum IdempotencyEntryPoint {

	/**
	 * A request to an idempotent endpoint, handled by the idempotency filter.
	 */
	HTTP,

	/**
	 * A call of an {@code @Idempotent} bean method with a {@code key}.
	 */
	METHOD,

	/**
	 * A record handed to an {@code @Idempotent} Kafka listener.
	 */
	KAFKA,

	/**
	 * A call of {@code IdempotencyTemplate.execute} made by hand.
	 */
	TEMPLATE;

	private final String value = name().toLowerCase(Locale.ROOT);

	/**
	 * Return the tag value of this entry point, such as {@code kafka}.
	 * @return the lower-case name
	 */
	public String value() {
		return this.value;
	}

}
