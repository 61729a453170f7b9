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

package dev.idempotency.sample.reliability;

import java.security.Principal;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.resource.Delay;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Counts the requests that reach the payment and account handlers, per user and
 * idempotency key: a request that the idempotency filter answers itself (a replay, a 409,
 * a 503) never gets here, so the count is the number of times a handler ran.
 *
 * @author Idempotency contributors
 */
final class HandlerRuns implements HandlerInterceptor {

	private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

	private final AtomicInteger total = new AtomicInteger();

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
		if (request.getDispatcherType() == DispatcherType.REQUEST && "POST".equals(request.getMethod())) {
			Principal principal = request.getUserPrincipal();
			String user = (principal != null) ? principal.getName() : "";
			String key = request.getHeader("Idempotency-Key");
			this.runs.computeIfAbsent(user + " " + key, (name) -> new AtomicInteger()).incrementAndGet();
			this.total.incrementAndGet();
		}
		return true;
	}

	int runs(String user, String key) {
		AtomicInteger count = this.runs.get(user + " " + key);
		return (count != null) ? count.get() : 0;
	}

	int total() {
		return this.total.get();
	}

	/**
	 * Registers the counter for {@code POST /payments} and {@code POST /accounts}, and
	 * lets Lettuce reconnect every 100 ms instead of backing off exponentially up to 30
	 * s, so that a restored Redis is used again within a fraction of a second.
	 */
	@Configuration(proxyBeanMethods = false)
	static class CountingConfiguration {

		@Bean
		HandlerRuns handlerRuns() {
			return new HandlerRuns();
		}

		@Bean
		WebMvcConfigurer handlerRunsInterceptor(HandlerRuns handlerRuns) {
			return new WebMvcConfigurer() {

				@Override
				public void addInterceptors(InterceptorRegistry registry) {
					registry.addInterceptor(handlerRuns).addPathPatterns("/payments", "/accounts");
				}

			};
		}

		@Bean
		ClientResourcesBuilderCustomizer quickRedisReconnect() {
			return (builder) -> builder.reconnectDelay(Delay.constant(Duration.ofMillis(100)));
		}

	}

}
