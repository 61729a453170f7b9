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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import com.jayway.jsonpath.JsonPath;
import dev.idempotency.spring.web.IdempotencyFilter;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Checks that the configuration reference documents every property of the generated
 * metadata, and that property defaults agree with the filter's constants.
 *
 * @author Idempotency contributors
 */
class ConfigurationDocumentationTests {

	private static final Path METADATA = Path.of("target", "classes", "META-INF", "spring-configuration-metadata.json");

	private static final Path REFERENCE = Path.of("..", "docs", "configuration.md");

	@Test
	void everyPropertyIsDocumented() throws IOException {
		assertThat(METADATA).as("generated metadata (run the build from the module directory)").exists();
		assertThat(REFERENCE).exists();
		List<String> names = JsonPath.read(Files.readString(METADATA), "$.properties[*].name");
		assertThat(names).hasSizeGreaterThan(30);
		String reference = Files.readString(REFERENCE);
		List<String> missing = names.stream().filter((name) -> !reference.contains("`" + name + "`")).toList();
		assertThat(missing).as("properties missing from docs/configuration.md").isEmpty();
	}

	@Test
	void propertyDefaultsMatchTheFilter() {
		IdempotencyProperties properties = new IdempotencyProperties();
		assertThat(properties.getKeyHeader()).isEqualTo(IdempotencyFilter.DEFAULT_KEY_HEADER);
		assertThat(properties.getProblemTypeBase()).isEqualTo(IdempotencyFilter.DEFAULT_PROBLEM_TYPE_BASE);
		assertThat(properties.getFilter().getOrder()).isEqualTo(IdempotencyFilter.DEFAULT_ORDER);
		assertThat(properties.getResponseHeaders().getDefaultExclude())
			.isEqualTo(IdempotencyFilter.DEFAULT_EXCLUDED_RESPONSE_HEADERS);
	}

}
