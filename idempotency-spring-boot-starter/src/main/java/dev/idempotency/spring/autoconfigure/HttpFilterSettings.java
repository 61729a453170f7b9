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

import java.util.ArrayList;
import java.util.List;

import dev.idempotency.spring.http.AnonymousRequests;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.util.ClassUtils;

/**
 * The settings that the servlet filter and the WebFlux filter take from the same
 * properties in the same way.
 *
 * @author Idempotency contributors
 */
final class HttpFilterSettings {

	private HttpFilterSettings() {
	}

	/**
	 * Return the response headers never stored: the default exclusions and the configured
	 * ones.
	 * @param properties the properties
	 * @return the header patterns
	 */
	static List<String> excludedResponseHeaders(IdempotencyProperties properties) {
		IdempotencyProperties.ResponseHeaders responseHeaders = properties.getResponseHeaders();
		List<String> excluded = new ArrayList<>(responseHeaders.getDefaultExclude());
		excluded.addAll(responseHeaders.getExclude());
		return excluded;
	}

	/**
	 * Return how requests without a principal are treated: as configured where the
	 * application has Spring Security (where such a request likely should have had one),
	 * else allowed.
	 * @param properties the properties
	 * @param beanFactory the bean factory, whose class loader is asked
	 * @param securityClass a class of Spring Security for the web stack at hand
	 * @return the rule
	 */
	static AnonymousRequests anonymousRequests(IdempotencyProperties properties, ListableBeanFactory beanFactory,
			String securityClass) {
		ClassLoader classLoader = (beanFactory instanceof ConfigurableBeanFactory configurable)
				? configurable.getBeanClassLoader() : null;
		return ClassUtils.isPresent(securityClass, classLoader) ? properties.getAnonymousRequests()
				: AnonymousRequests.ALLOW;
	}

}
