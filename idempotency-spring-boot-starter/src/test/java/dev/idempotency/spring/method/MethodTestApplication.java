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

package dev.idempotency.spring.method;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import dev.idempotency.spring.Idempotent;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application instance for the tests of idempotent methods: a payments service whose
 * methods are idempotent by a key in their arguments. Every run of a method first writes
 * a row of {@code method_call} on its own connection, so that the tests count executions
 * in the database; a charge that succeeds also writes a row of {@code method_charge}, in
 * the caller's transaction if there is one.
 *
 * @author Idempotency contributors
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
class MethodTestApplication {

	static final String SCHEMA_DDL = """
			CREATE TABLE IF NOT EXISTS method_call (
				id bigserial PRIMARY KEY,
				operation text NOT NULL,
				request_id text NOT NULL
			);
			CREATE TABLE IF NOT EXISTS method_charge (
				id bigserial PRIMARY KEY,
				request_id text NOT NULL,
				amount bigint NOT NULL
			);
			""";

	/**
	 * Return the properties of an instance: the tiered store and its Redis key prefix,
	 * the policies of the service, and no auto-configured data source or Redis connection
	 * (the test gives its own).
	 * @param prefix the Redis key prefix
	 * @return the properties, to add to
	 */
	static Map<String, Object> properties(String prefix) {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("server.port", "0");
		properties.put("spring.main.banner-mode", "off");
		properties.put("spring.autoconfigure.exclude",
				"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
						+ "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration,"
						+ "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration");
		properties.put("spring.data.redis.repositories.enabled", "false");
		properties.put("idempotency.store.type", "tiered");
		properties.put("idempotency.redis.key-prefix", prefix);
		properties.put("idempotency.scope-header", "X-Tenant");
		properties.put("idempotency.policies.charges.lock-timeout", "5s");
		properties.put("idempotency.policies.charges.deterministic-exceptions", DeclinedException.class.getName());
		properties.put("idempotency.policies.patient.lock-timeout", "5s");
		properties.put("idempotency.policies.patient.in-flight-wait", "30s");
		// a statement longer than this is not stored
		properties.put("idempotency.policies.statements.max-response-body", "256");
		return properties;
	}

	/**
	 * What a charge is asked to do.
	 *
	 * @param requestId the caller's request id: the key
	 * @param amount the amount, in cents; not positive is declined
	 * @param note what the test wants of the run: {@code slow} takes 200 ms
	 */
	record ChargeCommand(String requestId, long amount, String note) {

	}

	/**
	 * What a charge returns.
	 *
	 * @param chargeId the row of the charge
	 * @param requestId the request id
	 * @param amount the amount
	 */
	record Receipt(long chargeId, String requestId, long amount) {

	}

	@Service
	static class Charges {

		private final JdbcTemplate jdbc;

		private final DataSource dataSource;

		private final Map<String, CountDownLatch> entered = new ConcurrentHashMap<>();

		private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();

		private final Set<String> failing = ConcurrentHashMap.newKeySet();

		Charges(JdbcTemplate jdbc, DataSource dataSource) {
			this.jdbc = jdbc;
			this.dataSource = dataSource;
		}

		@Idempotent(policy = "charges", key = "#command.requestId")
		Receipt charge(ChargeCommand command) throws InterruptedException {
			return run("charge", command);
		}

		@Idempotent(policy = "patient", key = "#command.requestId", operation = "Charges.charge")
		Receipt chargePatiently(ChargeCommand command) throws InterruptedException {
			return run("charge", command);
		}

		@Transactional
		@Idempotent(policy = "charges", key = "#command.requestId")
		Receipt chargeInTransaction(ChargeCommand command) throws InterruptedException {
			return run("chargeInTransaction", command);
		}

		// the fingerprint covers the amounts only: the comment may change between retries
		@Idempotent(policy = "charges", key = "#batchId", fingerprint = "#amounts")
		List<Receipt> chargeAll(String batchId, List<Long> amounts, String comment) throws InterruptedException {
			List<Receipt> receipts = new ArrayList<>();
			for (int i = 0; i < amounts.size(); i++) {
				receipts.add(run("chargeAll", new ChargeCommand(batchId + "-" + i, amounts.get(i), "")));
			}
			return receipts;
		}

		@Idempotent(policy = "charges", key = "#requestId", scope = "#tenant")
		void touch(String tenant, String requestId) {
			call("touch", requestId);
		}

		// a run writes a call row; the statement has as many characters as asked
		@Idempotent(policy = "statements", key = "#requestId", fingerprint = "#requestId")
		String statement(String requestId, int length) {
			call("statement", requestId);
			return "s".repeat(length);
		}

		// Jackson cannot write the result: its getter returns the result itself
		@Idempotent(policy = "charges", key = "#requestId")
		Loop loop(String requestId) {
			call("loop", requestId);
			return new Loop();
		}

		@Idempotent(policy = "charges", key = "#requestId")
		String scoped(String requestId) {
			call("scoped", requestId);
			return "ran";
		}

		private Receipt run(String operation, ChargeCommand command) throws InterruptedException {
			call(operation, command.requestId());
			CountDownLatch entered = this.entered.get(command.requestId());
			if (entered != null) {
				entered.countDown();
			}
			CountDownLatch gate = this.gates.get(command.requestId());
			if (gate != null && !gate.await(60, TimeUnit.SECONDS)) {
				throw new IllegalStateException("The test never released " + command.requestId());
			}
			if (this.failing.remove(command.requestId())) {
				throw new IllegalStateException("the gateway timed out");
			}
			if (command.note().equals("slow")) {
				Thread.sleep(200);
			}
			if (command.amount() <= 0) {
				throw new DeclinedException("declined: amount " + command.amount() + " is not positive");
			}
			Long id = this.jdbc.queryForObject(
					"INSERT INTO method_charge (request_id, amount) VALUES (?, ?) RETURNING id", Long.class,
					command.requestId(), command.amount());
			return new Receipt((id != null) ? id : -1, command.requestId(), command.amount());
		}

		// a row per execution, on a connection of its own: committed at once, whatever
		// the caller's transaction does
		void call(String operation, String requestId) {
			try (Connection connection = this.dataSource.getConnection();
					PreparedStatement insert = connection
						.prepareStatement("INSERT INTO method_call (operation, request_id) VALUES (?, ?)")) {
				connection.setAutoCommit(true);
				insert.setString(1, operation);
				insert.setString(2, requestId);
				insert.executeUpdate();
			}
			catch (SQLException ex) {
				throw new IllegalStateException(ex);
			}
		}

		/**
		 * Make the next run of the given request id fail, after its call row.
		 * @param requestId the request id
		 */
		void failOnce(String requestId) {
			this.failing.add(requestId);
		}

		/**
		 * Make the runs of the given request id wait until the given gate opens.
		 * @param requestId the request id
		 * @param gate the gate
		 * @return the latch that counts down once a run has entered
		 */
		CountDownLatch hold(String requestId, CountDownLatch gate) {
			CountDownLatch entered = new CountDownLatch(1);
			this.entered.put(requestId, entered);
			this.gates.put(requestId, gate);
			return entered;
		}

	}

	/**
	 * A plain {@code @Transactional} service that charges inside a savepoint
	 * ({@code PROPAGATION_NESTED}) which it rolls back, then charges again under the same
	 * key in the same transaction.
	 */
	@Service
	static class Checkout {

		private final Charges charges;

		private final TransactionTemplate savepoint;

		Checkout(Charges charges, PlatformTransactionManager transactionManager) {
			this.charges = charges;
			this.savepoint = new TransactionTemplate(transactionManager);
			this.savepoint.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
		}

		// the receipts of both charges: the first one's rolled back with its savepoint
		@Transactional
		List<Receipt> chargeAgainAfterASavepointRolledBack(ChargeCommand command) throws InterruptedException {
			Receipt first = this.savepoint.execute((status) -> {
				try {
					return this.charges.charge(command);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(ex);
				}
				finally {
					status.setRollbackOnly();
				}
			});
			Receipt second = this.charges.charge(command);
			return List.of(first, second);
		}

	}

	/**
	 * A result that Jackson can create but not write, as protobuf messages.
	 */
	public static class Loop {

		public Loop getSelf() {
			return this;
		}

	}

	@RestController
	static class ChargesController {

		private final Charges charges;

		ChargesController(Charges charges) {
			this.charges = charges;
		}

		// a handler made idempotent by a key of its own: the HTTP filter leaves it alone
		@PostMapping("/keyed/{requestId}")
		@Idempotent(policy = "charges", key = "#requestId")
		String keyed(@PathVariable String requestId) {
			this.charges.call("keyed", requestId);
			return "keyed " + System.nanoTime();
		}

		// not idempotent itself: the service method is, in the request's scope
		@PostMapping("/scoped/{requestId}")
		String scoped(@PathVariable String requestId, @RequestParam(defaultValue = "") String unused) {
			return this.charges.scoped(requestId);
		}

	}

}
