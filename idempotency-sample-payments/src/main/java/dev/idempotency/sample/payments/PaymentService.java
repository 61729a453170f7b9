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

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.OffsetDateTime;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Takes payments. The idempotency filter in front of the controller makes sure a retried
 * request does not run this twice; the service adds the database backstop of the design
 * notes: payments are unique by (owner, idempotency key), and the gateway is called with
 * a key derived from them, so even a request that got past the idempotency layer (or ran
 * again after a crash) cannot charge twice.
 *
 * @author Idempotency contributors
 */
@Service
public class PaymentService {

	private static final String COLUMNS = "id, account_id, amount, currency, description, status, created_at";

	// the reservation of a new (owner, key), none for one already recorded: PostgreSQL's
	// ON CONFLICT DO NOTHING, MariaDB's INSERT IGNORE (every value is validated and fits
	// its column, so IGNORE shortens nothing, and a failed CHECK still fails), each
	// returning the row it inserted
	private static final String RESERVE_POSTGRESQL = """
			INSERT INTO payments (id, account_id, owner, idempotency_key, amount, currency, description, status)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'PENDING')
			ON CONFLICT (owner, idempotency_key) DO NOTHING
			RETURNING %s
			""".formatted(COLUMNS);

	private static final String RESERVE_MARIADB = """
			INSERT IGNORE INTO payments (id, account_id, owner, idempotency_key, amount, currency, description, status)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'PENDING')
			RETURNING %s
			""".formatted(COLUMNS);

	private static final String FIND_BY_KEY = "SELECT " + COLUMNS
			+ " FROM payments WHERE owner = ? AND idempotency_key = ?";

	// created_at read as an OffsetDateTime, which both drivers convert in the time zone
	// of the connection (MariaDB Connector/J reads an Instant in the JVM's own instead)
	private static final RowMapper<Payment> PAYMENT = (rs, row) -> new Payment(rs.getObject("id", UUID.class),
			rs.getObject("account_id", UUID.class), rs.getLong("amount"), rs.getString("currency"),
			rs.getString("description"), rs.getString("status"),
			rs.getObject("created_at", OffsetDateTime.class).toInstant());

	private final JdbcClient jdbc;

	private final PaymentGateway gateway;

	private final TransactionTemplate transactions;

	private final SampleDatabase database;

	PaymentService(JdbcClient jdbc, PaymentGateway gateway, PlatformTransactionManager transactionManager,
			SampleDatabase database) {
		this.jdbc = jdbc;
		this.gateway = gateway;
		this.transactions = new TransactionTemplate(transactionManager);
		this.database = database;
	}

	/**
	 * Take a payment from one of the owner's accounts, in three short steps so that no
	 * database connection is held while the gateway works:
	 * <ol>
	 * <li>reserve: one transaction locks the account, checks the balance, records the
	 * payment as {@code PENDING} and debits the account; a payment already recorded for
	 * this (owner, key) is returned or resumed instead;
	 * <li>charge the gateway with a key derived from owner and key, so that a resumed
	 * payment finds its charge instead of charging again;
	 * <li>confirm: mark the payment {@code SUCCEEDED}.
	 * </ol>
	 * If the gateway fails, the reservation is undone and the failure is rethrown: the
	 * client gets a 5xx, which is not stored, and its retry runs the payment again. If
	 * the process dies between the steps, the retry (after the key's lease lapses)
	 * resumes the pending payment: one payment, one charge.
	 * @param owner the paying user
	 * @param idempotencyKey the client's idempotency key
	 * @param request what to pay
	 * @return the payment, the existing one if this owner already paid with this key
	 */
	public Payment pay(String owner, String idempotencyKey, PaymentRequest request) {
		validate(request);
		Payment payment = this.transactions.execute((status) -> reserve(owner, idempotencyKey, request));
		if ("SUCCEEDED".equals(payment.status())) {
			return payment;
		}
		String charge;
		try {
			charge = this.gateway.charge(chargeKey(owner, idempotencyKey), payment.amount(), payment.currency());
		}
		catch (GatewayException ex) {
			this.transactions.executeWithoutResult((status) -> cancel(payment));
			throw ex;
		}
		return confirm(payment, charge);
	}

	private Payment confirm(Payment payment, String charge) {
		if (this.database == SampleDatabase.MARIADB) {
			// MariaDB's UPDATE returns no rows: the row is read after it
			this.jdbc.sql("UPDATE payments SET status = 'SUCCEEDED', gateway_charge = ? WHERE id = ?")
				.params(charge, payment.id())
				.update();
			return this.jdbc.sql("SELECT " + COLUMNS + " FROM payments WHERE id = ?")
				.param(payment.id())
				.query(PAYMENT)
				.single();
		}
		return this.jdbc
			.sql("UPDATE payments SET status = 'SUCCEEDED', gateway_charge = ? WHERE id = ? RETURNING " + COLUMNS)
			.params(charge, payment.id())
			.query(PAYMENT)
			.single();
	}

	private Payment reserve(String owner, String idempotencyKey, PaymentRequest request) {
		Account account = this.jdbc
			.sql("SELECT id, owner, currency, balance FROM accounts WHERE id = ? AND owner = ? FOR UPDATE")
			.params(request.accountId(), owner)
			.query(Account.class)
			.optional()
			.orElseThrow(() -> PaymentException.notFound("Account " + request.accountId()));
		if (!account.currency().equals(request.currency())) {
			throw PaymentException
				.invalid("Currency " + request.currency() + " does not match the account's " + account.currency());
		}
		Optional<Payment> existing = findByKey(owner, idempotencyKey);
		if (existing.isPresent()) {
			return existing.get();
		}
		if (account.balance() < request.amount()) {
			throw PaymentException.insufficientFunds(account.balance(), request.amount());
		}
		Optional<Payment> inserted = this.jdbc
			.sql((this.database == SampleDatabase.MARIADB) ? RESERVE_MARIADB : RESERVE_POSTGRESQL)
			.params(UUID.randomUUID(), account.id(), owner, idempotencyKey, request.amount(), request.currency(),
					request.description())
			.query(PAYMENT)
			.optional();
		if (inserted.isEmpty()) {
			return committedByKey(owner, idempotencyKey);
		}
		this.jdbc.sql("UPDATE accounts SET balance = balance - ? WHERE id = ?")
			.params(request.amount(), account.id())
			.update();
		return inserted.get();
	}

	private void cancel(Payment payment) {
		int deleted = this.jdbc.sql("DELETE FROM payments WHERE id = ? AND status = 'PENDING'")
			.param(payment.id())
			.update();
		if (deleted == 1) {
			this.jdbc.sql("UPDATE accounts SET balance = balance + ? WHERE id = ?")
				.params(payment.amount(), payment.accountId())
				.update();
		}
	}

	/**
	 * Find a payment of the given owner.
	 * @param id the payment's id
	 * @param owner the owner
	 * @return the payment, empty if it does not exist or belongs to someone else
	 */
	public Optional<Payment> find(UUID id, String owner) {
		return this.jdbc.sql("SELECT " + COLUMNS + " FROM payments WHERE id = ? AND owner = ?")
			.params(id, owner)
			.query(PAYMENT)
			.optional();
	}

	/**
	 * List the payments of one of the owner's accounts.
	 * @param accountId the account
	 * @param owner the owner
	 * @return the payments, oldest first
	 */
	public List<Payment> list(UUID accountId, String owner) {
		return this.jdbc
			.sql("SELECT " + COLUMNS + " FROM payments WHERE account_id = ? AND owner = ? ORDER BY created_at, id")
			.params(accountId, owner)
			.query(PAYMENT)
			.list();
	}

	private Optional<Payment> findByKey(String owner, String idempotencyKey) {
		return this.jdbc.sql(FIND_BY_KEY).params(owner, idempotencyKey).query(PAYMENT).optional();
	}

	// The payment another transaction committed with this (owner, key) while the
	// reservation ran. PostgreSQL's READ COMMITTED reads it; MariaDB's REPEATABLE READ
	// would still read the transaction's snapshot, taken before that commit, so there it
	// is a locking read, which reads the latest committed row.
	private Payment committedByKey(String owner, String idempotencyKey) {
		String sql = (this.database == SampleDatabase.MARIADB) ? FIND_BY_KEY + " LOCK IN SHARE MODE" : FIND_BY_KEY;
		return this.jdbc.sql(sql).params(owner, idempotencyKey).query(PAYMENT).single();
	}

	private static void validate(PaymentRequest request) {
		if (request.accountId() == null) {
			throw PaymentException.invalid("accountId is required");
		}
		if (request.amount() <= 0) {
			throw PaymentException.invalid("amount must be a positive number of minor units");
		}
		PaymentValidation.checkCurrency(request.currency());
		if (request.description() == null || request.description().length() > PaymentValidation.MAX_DESCRIPTION) {
			throw PaymentException
				.invalid("description is required and at most " + PaymentValidation.MAX_DESCRIPTION + " characters");
		}
	}

	// As a real PSP would be called: the key is the caller's scope and key together, so
	// two users who happen to choose the same key are two different charges.
	static String chargeKey(String owner, String idempotencyKey) {
		try {
			MessageDigest digest = MessageDigest.getInstance("SHA-256");
			digest.update(owner.getBytes(StandardCharsets.UTF_8));
			digest.update((byte) 0);
			digest.update(idempotencyKey.getBytes(StandardCharsets.UTF_8));
			return "pay_" + HexFormat.of().formatHex(digest.digest(), 0, 16);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Body of {@code POST /payments}.
	 *
	 * @param accountId the account to debit
	 * @param amount amount in minor units
	 * @param currency ISO 4217 code, equal to the account's
	 * @param description what the payment is for
	 */
	public record PaymentRequest(@Nullable UUID accountId, long amount, @Nullable String currency,
			@Nullable String description) {

	}

}
