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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.core.convert.TypeDescriptor;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Checks that the configuration reference documents every property of the generated
 * metadata, and that the defaults the metadata states are those of the properties.
 *
 * @author Idempotency contributors
 */
class ConfigurationDocumentationTests {

	private static final Path METADATA = Path.of("target", "classes", "META-INF", "spring-configuration-metadata.json");

	private static final String PREFIX = "idempotency.";

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

	// the configuration processor cannot read a default that is a constant of another
	// class, so additional metadata states those; this keeps what it states true
	@Test
	void metadataDefaultsAreTheDefaultsOfTheProperties() throws IOException {
		List<Map<String, Object>> properties = JsonPath.read(Files.readString(METADATA), "$.properties[*]");
		BeanWrapper general = new BeanWrapperImpl(new IdempotencyProperties());
		// the settings bound by classes of their own, by prefix
		Map<String, BeanWrapper> own = Map.of(PREFIX + "jdbc.", new BeanWrapperImpl(new IdempotencyJdbcProperties()),
				PREFIX + "reactive.", new BeanWrapperImpl(new IdempotencyReactiveProperties()));
		ApplicationConversionService conversion = new ApplicationConversionService();
		conversion.addConverter(new StatusSetConverter());
		List<String> checked = new ArrayList<>();
		for (Map<String, Object> property : properties) {
			String name = (String) property.get("name");
			Object value = property.get("defaultValue");
			if (value == null || !name.startsWith(PREFIX) || name.startsWith(PREFIX + "client.")) {
				continue;
			}
			String prefix = own.keySet().stream().filter(name::startsWith).findFirst().orElse(PREFIX);
			BeanWrapper bean = own.getOrDefault(prefix, general);
			String path = beanPath(name.substring(prefix.length()));
			String text = (value instanceof List<?> list)
					? String.join(",", list.stream().map(String::valueOf).toList()) : String.valueOf(value);
			Object expected = conversion.convert(text, TypeDescriptor.valueOf(String.class),
					bean.getPropertyTypeDescriptor(path));
			assertThat(bean.getPropertyValue(path)).as(name).isEqualTo(expected);
			checked.add(name);
		}
		assertThat(checked).contains("idempotency.ttl", "idempotency.non-storable-statuses", "idempotency.key-header",
				"idempotency.filter.order", "idempotency.response-headers.default-exclude",
				"idempotency.fingerprint.json", "idempotency.jdbc.initialize-schema", "idempotency.jdbc.table-name",
				"idempotency.reactive.fail-on-unprotected-handlers");
	}

	private static String beanPath(String property) {
		StringBuilder path = new StringBuilder();
		boolean upper = false;
		for (char c : property.toCharArray()) {
			if (c == '-') {
				upper = true;
			}
			else {
				path.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return path.toString();
	}

}
