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

package dev.idempotency.sample.payments;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * HTTP Basic with three DEMO users, and one for the payment service provider's webhook
 * deliveries. The idempotency filter runs after Spring Security, so each user's keys live
 * in their own scope: two users who pick the same key never see each other's responses.
 *
 * @author Idempotency contributors
 */
@Configuration(proxyBeanMethods = false)
class SecurityConfiguration {

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		http.authorizeHttpRequests((requests) -> requests
			.requestMatchers("/", "/index.html", "/app.js", "/app.css", "/favicon.ico", "/error")
			.permitAll()
			.requestMatchers("/actuator/health", "/actuator/health/**")
			.permitAll()
			.requestMatchers("/actuator/idempotency", "/actuator/idempotency/**")
			.hasRole("ADMIN")
			// the payment service provider's webhook deliveries, as a user of their own
			.requestMatchers("/webhooks/**")
			.hasRole("GATEWAY")
			.anyRequest()
			.authenticated());
		http.httpBasic(Customizer.withDefaults());
		// a stateless JSON API authenticated on every request: no session, no CSRF token
		http.csrf((csrf) -> csrf.disable());
		http.sessionManagement((session) -> session.sessionCreationPolicy(SessionCreationPolicy.STATELESS));
		return http.build();
	}

	// Demo credentials, documented in the README: never do this in production.
	@Bean
	UserDetailsService users() {
		return new InMemoryUserDetailsManager(
				User.withUsername("alice").password("{noop}alice-secret").roles("USER").build(),
				User.withUsername("bob").password("{noop}bob-secret").roles("USER").build(),
				User.withUsername("admin").password("{noop}admin-secret").roles("USER", "ADMIN").build(),
				User.withUsername("gateway").password("{noop}gateway-secret").roles("GATEWAY").build());
	}

}
