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

import java.util.Locale;

import dev.idempotency.core.store.IdempotencyStore;

/**
 * Short names of stores, as shown by the {@code store} tag of the metrics and the
 * {@code store} detail of the health contributor. Free of optional dependencies, so that
 * either can use it without the other on the class path.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotencyStoreNames {

	private IdempotencyStoreNames() {
	}

	/**
	 * Return the short name of a store: {@code memory}, {@code redis}, {@code jdbc} or
	 * {@code tiered} for the stores of this project, else the store class's simple name
	 * in lower case. A decorating store is named after its own class, not its delegate.
	 * @param store the store, never {@code null}
	 * @return the name
	 */
	public static String of(IdempotencyStore store) {
		String name = store.getClass().getSimpleName();
		switch (name) {
			case "InMemoryIdempotencyStore":
				return "memory";
			case "RedisIdempotencyStore":
				return "redis";
			case "JdbcIdempotencyStore":
				return "jdbc";
			case "TieredIdempotencyStore":
				return "tiered";
			default:
				return name.toLowerCase(Locale.ROOT);
		}
	}

}
