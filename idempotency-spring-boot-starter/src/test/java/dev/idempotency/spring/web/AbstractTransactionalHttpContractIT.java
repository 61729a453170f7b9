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

package dev.idempotency.spring.web;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.fingerprint.FingerprintInput;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.store.jdbc.MariaDbTestDatabase;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import dev.idempotency.spring.transaction.TransactionalClaims;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract in the transactional mode ({@code idempotency.transactional=true}:
 * every policy of the contract is transactional) on a real PostgreSQL server, with the
 * transaction manager that Spring Boot configures for the application's data source.
 * <p>
 * The outage of the store is simulated in its data source
 * ({@link OutageSimulatingDataSource}) rather than by wrapping the store bean, whose type
 * the start-up of the transactional mode checks: the request's transaction then cannot
 * begin, which is how an unavailable PostgreSQL meets a transactional request.
 * <p>
 * Where the mode answers otherwise by design, the contract says so: a request whose key
 * is claimed by a transaction not yet committed is answered {@code 409} whatever its
 * fingerprint (row 6), and the claim of an owner that crashed vanishes with its
 * transaction instead of lapsing (row 11, tested here in addition to the lapse of a
 * committed claim). The asynchronous handlers of the test application are left out: a
 * transactional policy refuses them at start-up. The context is closed after the class,
 * so that its connection pool is not kept open for the rest of the run.
 *
 * @author Idempotency contributors
 */
@DirtiesContext
@Import(AbstractTransactionalHttpContractIT.Database.class)
@TestPropertySource(properties = { "idempotency.transactional=true", "contract.outage=data-source" })
abstract class AbstractTransactionalHttpContractIT extends AbstractHttpContractIT {

	private static final TransactionDefinition NEW_TRANSACTION = new DefaultTransactionDefinition(
			TransactionDefinition.PROPAGATION_REQUIRES_NEW);

	@Autowired
	OutageSimulatingDataSource dataSource;

	@Autowired
	PlatformTransactionManager transactionManager;

	@Override
	void setStoreDown(boolean down) {
		this.dataSource.setDown(down);
	}

	@Override
	IdempotencyStore realStore() {
		return this.store;
	}

	@Override
	protected boolean transactional() {
		return true;
	}

	// a committed claim is taken over a lease after it was first found lapsed
	@Override
	protected boolean confirmsTakeover() {
		return true;
	}

	// row 11, in the transactional mode
	@Test
	void claimOfACrashedOwnerVanishesWithItsTransaction() throws Exception {
		String key = newKey();
		NamedPolicy policy = this.policies.get("crash");
		assertThat(policy).isNotNull();
		assertThat(policy.transactional()).isTrue();
		RequestFingerprint fingerprint = policy.fingerprinter()
			.fingerprint(FingerprintInput.of("POST", "/crash", null, null, List.of(), new byte[0], 0, 0));
		Duration lease = policy.engine().lockTimeout();
		// an owner whose claim is part of its open transaction
		TransactionStatus transaction = this.transactionManager.getTransaction(NEW_TRANSACTION);
		try (TransactionalClaims.Scope claims = TransactionalClaims.open(this.dataSource)) {
			AcquireResult owner = this.store.acquire(IdempotencyKey.global(key), fingerprint, OwnerToken.generate(),
					lease, Duration.ofHours(1));
			assertThat(owner).isInstanceOf(AcquireResult.Acquired.class);
			HttpResponse<byte[]> whileOpen = post("/crash", key, "");
			assertThat(whileOpen.statusCode()).isEqualTo(409);
			assertThat(whileOpen.headers().firstValue("Retry-After")).isPresent();
		}
		finally {
			// the owner crashes: PostgreSQL rolls its transaction back
			this.transactionManager.rollback(transaction);
		}
		if (this.store instanceof TieredIdempotencyStore) {
			// Redis holds the crashed owner's claim until its lease lapses
			Thread.sleep(lease.toMillis() + 300);
		}
		HttpResponse<byte[]> retry = post("/crash", key, "");
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(text(retry)).startsWith("crash 1 ");
		HttpResponse<byte[]> replay = post("/crash", key, "");
		assertThat(replay.body()).isEqualTo(retry.body());
		assertThat(replay.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(this.counter.count("crash", key)).isEqualTo(1);
	}

	@Test
	void everyPolicyOfTheContractIsTransactional() {
		for (String name : List.of(IdempotencyPolicy.DEFAULT_NAME, "crash", "brief", "open", "small", "lenient", "raw",
				"patient")) {
			NamedPolicy policy = this.policies.get(name);
			assertThat(policy).as(name).isNotNull();
			assertThat(policy.transactional()).as(name).isTrue();
		}
	}

	/**
	 * The pool of a schema or database of the test's own, and what drops it when the
	 * context closes.
	 *
	 * @param dataSource the pool
	 * @param drop drops the schema or database and closes the pool
	 */
	record TestDatabase(DataSource dataSource, Runnable drop) implements AutoCloseable {

		@Override
		public void close() {
			this.drop.run();
		}

	}

	/**
	 * The application's data source, on a schema of the test's own, in which an outage
	 * can be simulated.
	 */
	@TestConfiguration(proxyBeanMethods = false)
	static class Database {

		private static final String SCHEMA = "it_http_tx_" + Long.toHexString(System.nanoTime());

		// the pool is no bean of its own: the application has one DataSource; on
		// MariaDB (contract.database=mariadb) a database of the test's own
		@Bean(destroyMethod = "")
		OutageSimulatingDataSource dataSource(Environment environment, TestDatabase database) {
			return new OutageSimulatingDataSource(database.dataSource());
		}

		@Bean
		TestDatabase testDatabase(Environment environment) {
			if ("mariadb".equals(environment.getProperty("contract.database"))) {
				MariaDbTestDatabase database = MariaDbTestDatabase.create("it_http_tx");
				return new TestDatabase(database.dataSource(), database::close);
			}
			HikariDataSource pool = TestServers.postgres().dataSource(schema(environment));
			TieredHttpContractIT.SchemaDropper dropper = new TieredHttpContractIT.SchemaDropper(pool,
					schema(environment));
			return new TestDatabase(pool, dropper::close);
		}

		// one schema per store type
		private static String schema(Environment environment) {
			return SCHEMA + "_" + environment.getProperty("idempotency.store.type", "auto");
		}

	}

}
