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

package dev.idempotency.spring.autoconfigure;

import dev.idempotency.core.engine.IdempotencyListener;
import dev.idempotency.spring.store.tiered.TieredStoreListener;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * What a GraalVM native image of an application needs from the starter beyond what
 * Spring's AOT processing finds by itself: the resources the stores load at run time (the
 * Redis store's Lua scripts, the PostgreSQL store's migration scripts) and the JDK
 * proxies that combine several listeners.
 *
 * @author Idempotency contributors
 */
class IdempotencyRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
		hints.resources().registerPattern("dev/idempotency/spring/store/redis/*.lua");
		hints.resources().registerPattern("dev/idempotency/spring/store/jdbc/migration/postgresql/*.sql");
		hints.proxies().registerJdkProxy(IdempotencyListener.class);
		hints.proxies().registerJdkProxy(TieredStoreListener.class);
	}

}
