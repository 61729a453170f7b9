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

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import dev.idempotency.core.engine.IdempotencyListener;
import dev.idempotency.spring.store.tiered.TieredStoreListener;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link IdempotencyRuntimeHints}: every resource the stores load is
 * registered, including scripts added later, found by listing the packages they live in.
 *
 * @author Idempotency contributors
 */
class IdempotencyRuntimeHintsTests {

	private final RuntimeHints hints = new RuntimeHints();

	IdempotencyRuntimeHintsTests() {
		new IdempotencyRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
	}

	@Test
	void everyLuaScriptAndMigrationScriptIsRegistered() throws IOException {
		List<String> scripts = resources("dev/idempotency/spring/store/redis/*.lua");
		List<String> migrations = resources("dev/idempotency/spring/store/jdbc/migration/postgresql/*.sql");
		assertThat(scripts).contains("dev/idempotency/spring/store/redis/acquire.lua",
				"dev/idempotency/spring/store/redis/complete.lua");
		assertThat(migrations)
			.contains("dev/idempotency/spring/store/jdbc/migration/postgresql/V1__create_idempotency_record.sql");
		for (String resource : scripts) {
			assertThat(RuntimeHintsPredicates.resource().forResource(resource)).as(resource).accepts(this.hints);
		}
		for (String resource : migrations) {
			assertThat(RuntimeHintsPredicates.resource().forResource(resource)).as(resource).accepts(this.hints);
		}
		assertThat(RuntimeHintsPredicates.resource().forResource("dev/idempotency/spring/store/redis/other.txt"))
			.rejects(this.hints);
	}

	@Test
	void theAutoConfigurationBringsTheHints() {
		ImportRuntimeHints imported = IdempotencyAutoConfiguration.class.getAnnotation(ImportRuntimeHints.class);
		assertThat(imported).isNotNull();
		assertThat(imported.value()).containsExactly(IdempotencyRuntimeHints.class);
	}

	@Test
	void listenerCompositesCanBeProxied() {
		assertThat(RuntimeHintsPredicates.proxies().forInterfaces(IdempotencyListener.class)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.proxies().forInterfaces(TieredStoreListener.class)).accepts(this.hints);
	}

	private static List<String> resources(String pattern) throws IOException {
		Resource[] found = new PathMatchingResourcePatternResolver().getResources("classpath*:" + pattern);
		String base = pattern.substring(0, pattern.lastIndexOf('/') + 1);
		return Arrays.stream(found).map((resource) -> base + resource.getFilename()).toList();
	}

}
