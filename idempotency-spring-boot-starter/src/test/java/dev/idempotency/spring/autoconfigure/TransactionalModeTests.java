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

import java.util.concurrent.CompletableFuture;

import javax.sql.DataSource;

import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.tiered.TieredClaimMode;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import dev.idempotency.spring.transaction.RequestTransactions;
import dev.idempotency.spring.web.IdempotencyFilter;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.postgresql.Driver;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.test.util.ReflectionTestUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for the start-up checks of the transactional mode ({@link TransactionalMode}).
 * The stores here never connect: the checks run before any request.
 *
 * @author Idempotency contributors
 */
class TransactionalModeTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
		.withPropertyValues("idempotency.policies.accounts.transactional=true");

	@Test
	void transactionalPolicyGetsTheTransactionManagerOfTheStoresDataSource() {
		this.runner.withUserConfiguration(SameDataSource.class).run((context) -> {
			assertThat(context).hasNotFailed();
			IdempotencyFilter filter = context.getBean(IdempotencyFilter.class);
			RequestTransactions transactions = requestTransactions(filter);
			assertThat(transactions).isNotNull();
			assertThat(transactions.getTransactionManager())
				.isSameAs(context.getBean(PlatformTransactionManager.class));
			assertThat(context.getBean(JdbcIdempotencyStore.class).isTransactionalClaims()).isTrue();
		});
	}

	@Test
	void withoutATransactionalPolicyTheFilterHasNoTransactionManager() {
		new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.withUserConfiguration(SameDataSource.class)
			.run((context) -> {
				assertThat(requestTransactions(context.getBean(IdempotencyFilter.class))).isNull();
				assertThat(context.getBean(JdbcIdempotencyStore.class).isTransactionalClaims()).isFalse();
			});
	}

	// what the filter's requests share holds the request transactions
	private static @Nullable RequestTransactions requestTransactions(IdempotencyFilter filter) {
		Object requests = ReflectionTestUtils.getField(filter, "requests");
		assertThat(requests).isNotNull();
		return (RequestTransactions) ReflectionTestUtils.getField(requests, "requestTransactions");
	}

	@Test
	void inMemoryStoreFailsStartUp() {
		this.runner.run((context) -> assertThat(context).getFailure()
			.rootCause()
			.hasMessageContaining("Transactional idempotency policies [accounts]")
			.hasMessageContaining("need the jdbc or tiered store")
			.hasMessageContaining("the store is memory"));
	}

	@Test
	void transactionManagerOfAnotherDataSourceFailsStartUp() {
		this.runner.withUserConfiguration(OtherDataSource.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("need the transaction manager to manage the store's DataSource"));
	}

	@Test
	void missingTransactionManagerFailsStartUp() {
		this.runner.withUserConfiguration(NoTransactionManager.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining(
						"need exactly one PlatformTransactionManager bean, of the store's DataSource; found 0"));
	}

	@Test
	void lookupClaimOfTheTieredStoreFailsStartUp() {
		this.runner.withUserConfiguration(TieredLookupClaim.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("need idempotency.tiered.claim=durable"));
	}

	@Test
	void asynchronousHandlerOfATransactionalPolicyFailsStartUp() {
		WebApplicationContextRunner mvc = this.runner
			.withConfiguration(
					AutoConfigurations.of(WebMvcAutoConfiguration.class, DispatcherServletAutoConfiguration.class))
			.withUserConfiguration(SameDataSource.class, AsyncController.class);
		mvc.run((context) -> assertThat(context).getFailure()
			.hasMessageContaining("AsyncController#open")
			.hasMessageContaining("of the transactional policy 'accounts' is asynchronous"));
		mvc.withPropertyValues("idempotency.policies.accounts.transactional=false")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	private static DataSource dataSource(String name) {
		// never connected to
		return new SimpleDriverDataSource(new Driver(), "jdbc:postgresql://127.0.0.1:1/" + name);
	}

	@RestController
	static class AsyncController {

		@PostMapping("/accounts")
		@Idempotent("accounts")
		CompletableFuture<String> open() {
			return CompletableFuture.completedFuture("opened");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class StoreDataSource {

		@Bean
		DataSource dataSource() {
			return TransactionalModeTests.dataSource("store");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NoTransactionManager extends StoreDataSource {

		@Bean
		JdbcIdempotencyStore idempotencyStore(DataSource dataSource) {
			return new JdbcIdempotencyStore(dataSource);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SameDataSource extends NoTransactionManager {

		@Bean
		DataSourceTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OtherDataSource extends NoTransactionManager {

		@Bean
		DataSourceTransactionManager transactionManager() {
			return new DataSourceTransactionManager(TransactionalModeTests.dataSource("other"));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TieredLookupClaim extends StoreDataSource {

		@Bean
		TieredIdempotencyStore idempotencyStore(DataSource dataSource) {
			TieredIdempotencyStore store = new TieredIdempotencyStore(new InMemoryIdempotencyStore(),
					new JdbcIdempotencyStore(dataSource));
			store.setClaimMode(TieredClaimMode.LOOKUP);
			return store;
		}

		@Bean
		DataSourceTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

	}

}
