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

import java.lang.reflect.Type;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyScopes;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.Execution;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.fingerprint.FingerprintInput;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.method.StoredResults.DeterministicExceptions;
import dev.idempotency.spring.method.StoredResults.NotStorableException;
import dev.idempotency.spring.observation.DefaultIdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyEntryPoint;
import dev.idempotency.spring.observation.IdempotencyObservation;
import dev.idempotency.spring.observation.IdempotencyObservationContext;
import dev.idempotency.spring.observation.IdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyObservationDocumentation;
import dev.idempotency.spring.observation.IdempotencyOutcome;
import dev.idempotency.spring.transaction.TransactionalClaims;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ParameterizedTypeReference;
import org.springframework.util.ClassUtils;

/**
 * Runs an operation at most once per key, for code without annotations: the first call
 * under a key runs the operation and stores its result; a later call under the same key
 * with the same request gets an equal result (read back with Jackson as the declared
 * type) without running it. It is what {@link dev.idempotency.spring.Idempotent
 * &#64;Idempotent} with a {@code key} does for a method, and uses the same engine, store
 * and policies as the HTTP filter.
 *
 * <pre class="code">
 * Refund refund = idempotency.withPolicy("refunds").withOperation("refund")
 *     .execute(command.requestId(), command, Refund.class, () -&gt; gateway.refund(command));
 * </pre>
 * <p>
 * <b>Keys.</b> The keys of an operation live in a scope of their own,
 * {@code operation:<name>/<scope>}, so that they never meet the keys of HTTP requests nor
 * of another operation. The name is {@link #withOperation(String) given}, else the
 * policy's name: two call sites that use one policy without naming their operations share
 * their keys, and the second gets the first one's result for an equal key and request.
 * Give each call site an operation of its own. The scope inside it is
 * {@link #withScope(String) given}, else the one the HTTP filter would give the current
 * request (its principal, say) when the call runs in one, else the global scope.
 * <p>
 * <b>What a call may meet.</b> The same key with another request (the canonical JSON of
 * the request object differs): {@link IdempotencyKeyReusedException}. The first call
 * still running after the policy's {@code in-flight-wait}:
 * {@link IdempotentCallInProgressException}. No store under a fail-closed policy:
 * {@link IdempotencyStoreUnavailableException}. A missing or malformed key:
 * {@link InvalidIdempotencyKeyException}. A request that can be written neither as JSON
 * nor in a binary form of its own ({@code toByteArray()}, as protobuf messages have):
 * {@link InvalidIdempotentRequestException}. In none of these cases does the operation
 * run.
 * <p>
 * <b>Exceptions.</b> An operation that throws releases its key, so that a retry runs it
 * again, unless the exception is of a type that the policy lists under
 * {@code deterministic-exceptions}: such an exception is stored and thrown again (a new
 * instance of its class with its message) by every retry.
 * <p>
 * <b>Results that cannot be stored.</b> A result larger than the policy's
 * {@code max-response-body}, or one that cannot be written or read back, is returned to
 * the caller, but only that the operation ran is stored: every retry under the key throws
 * {@link IdempotentResultNotStoredException}, and the operation never runs twice.
 * <p>
 * <b>Transactions.</b> When the operation returns inside a transaction (of the caller),
 * its outcome is stored when that transaction commits, and its key released if it rolls
 * back, so that a retry never replays work that was rolled back. Inside a request to a
 * transactional endpoint, whose transaction the claim joined, the outcome is stored in
 * that transaction instead, on its connection, before its commit. Either way, a second
 * call under the same key in the same transaction gets the first one's outcome, unless
 * the transaction rolled back to a savepoint made before the first call ended: that
 * call's writes are gone, so its outcome is forgotten, its key released at once, and the
 * next call under the key runs the operation again. A policy that is
 * {@code transactional} is refused: its claim would have to join a transaction the
 * template does not own.
 * <p>
 * <b>Observations.</b> With an {@link #setObservationRegistry(ObservationRegistry)
 * observation registry}, each call is observed as the {@code idempotency.call}
 * observation of {@link IdempotencyObservationDocumentation}, tagged with its outcome and
 * where it came in ({@code template}, {@code method} or {@code kafka}).
 * <p>
 * Instances are immutable once configured and thread-safe; the {@code with...} methods
 * return views that share the engine and settings.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotencyTemplate {

	private static final Log logger = LogFactory.getLog(IdempotencyTemplate.class);

	private static final boolean TRANSACTIONS_PRESENT = ClassUtils.isPresent(
			"org.springframework.transaction.support.TransactionSynchronizationManager",
			IdempotencyTemplate.class.getClassLoader());

	private static final String CALL_METHOD = "CALL";

	private static final String JSON = "application/json";

	private static final String BINARY = "application/octet-stream";

	private static final IdempotencyObservationConvention DEFAULT_CONVENTION = new DefaultIdempotencyObservationConvention(
			DefaultIdempotencyObservationConvention.CALL_NAME);

	private final Settings settings;

	private final String policy;

	private final @Nullable String operation;

	private final @Nullable String scope;

	/**
	 * Create a template over the given engine and policies, for the
	 * {@value IdempotencyPolicy#DEFAULT_NAME} policy.
	 * @param engine the engine, never {@code null}
	 * @param policies the policies, never {@code null}
	 * @param jsonMapper writes and reads the requests and results, never {@code null}
	 */
	public IdempotencyTemplate(IdempotencyEngine engine, NamedPolicies policies, JsonMapper jsonMapper) {
		this(new Settings(Objects.requireNonNull(engine, "'engine' must not be null"),
				Objects.requireNonNull(policies, "'policies' must not be null"),
				new StoredResults(Objects.requireNonNull(jsonMapper, "'jsonMapper' must not be null")), jsonMapper),
				IdempotencyPolicy.DEFAULT_NAME, null, null);
	}

	private IdempotencyTemplate(Settings settings, String policy, @Nullable String operation, @Nullable String scope) {
		this.settings = settings;
		this.policy = policy;
		this.operation = operation;
		this.scope = scope;
	}

	/**
	 * Set the exception types that each policy stores and throws again on replay
	 * ({@code idempotency.policies.<name>.deterministic-exceptions}). Configure it before
	 * the template is used.
	 * @param deterministicExceptions the types, by policy name, never {@code null}
	 * @throws IllegalArgumentException if a type can be created neither with a
	 * {@code String} message nor without arguments
	 */
	public void setDeterministicExceptions(Map<String, List<Class<? extends Throwable>>> deterministicExceptions) {
		Map<String, DeterministicExceptions> byPolicy = new HashMap<>();
		deterministicExceptions.forEach((name, types) -> byPolicy.put(name, new DeterministicExceptions(types)));
		this.settings.setDeterministic(Map.copyOf(byPolicy));
	}

	/**
	 * Set the codecs that write and read back the results of the types Jackson does not
	 * handle (protobuf messages, Avro records): asked in their order before Jackson. The
	 * auto-configuration sets the {@link IdempotentResultCodec} beans. Configure it
	 * before the template is used.
	 * @param codecs the codecs, never {@code null}
	 * @throws IllegalArgumentException if a codec claims Jackson's content type,
	 * {@code application/json}
	 * @since 0.1.0
	 */
	public void setResultCodecs(List<IdempotentResultCodec> codecs) {
		Objects.requireNonNull(codecs, "'codecs' must not be null");
		this.settings.results = this.settings.results.withCodecs(codecs);
	}

	/**
	 * Check, at start-up, that the results of a method can be read back once stored, as
	 * what the method returned: a declared {@code Object} is refused (unless a codec
	 * supports it), as is a type that Jackson cannot create, nor one of the properties it
	 * writes for it.
	 * @param method the method, for the message
	 * @param resultType its declared result type
	 * @throws IllegalStateException if they cannot
	 */
	void checkResultType(String method, Type resultType) {
		if (resultType == void.class || resultType == Void.class) {
			return;
		}
		if (resultType == Object.class && !this.settings.results.hasCodec(resultType)) {
			throw new IllegalStateException("@Idempotent method " + method + " returns Object: a replay could not"
					+ " return what the method returned, only what Jackson reads from the stored JSON without a type"
					+ " (a LinkedHashMap for an object, an ArrayList for an array, a String, Integer, Long, BigInteger,"
					+ " Double or Boolean). To fix it, declare the type the method returns (a record, say), or declare"
					+ " an IdempotentResultCodec bean that supports Object");
		}
		JavaType type = this.settings.jsonMapper.constructType(resultType);
		String problem = this.settings.results.unreadable(resultType, type);
		if (problem != null) {
			throw new IllegalStateException("@Idempotent method " + method + " returns " + resultType.getTypeName()
					+ ", whose stored result cannot be read back (every retry would fail until the record"
					+ " expires): " + problem + ". To fix it, " + StoredResults.FIX);
		}
	}

	/**
	 * Set what gives the scope of a call that names none: by default the global scope.
	 * The auto-configuration sets the scope that the HTTP filter would give the current
	 * request, when the call runs in one. Configure it before the template is used.
	 * @param defaultScope gives the scope, already in its stored form (for example
	 * {@code principal:alice}), never {@code null}
	 */
	public void setDefaultScope(Supplier<String> defaultScope) {
		this.settings.defaultScope = Objects.requireNonNull(defaultScope, "'defaultScope' must not be null");
	}

	/**
	 * Set the registry that observes each call; by default
	 * {@link ObservationRegistry#NOOP}: no observation, at no cost. Configure it before
	 * the template is used.
	 * @param observationRegistry the registry, never {@code null}
	 * @since 0.1.0
	 * @see IdempotencyObservationDocumentation#IDEMPOTENT_CALL
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.settings.observationRegistry = Objects.requireNonNull(observationRegistry,
				"'observationRegistry' must not be null");
	}

	/**
	 * Set a convention for the observations of calls that replaces the
	 * {@link DefaultIdempotencyObservationConvention} named
	 * {@value DefaultIdempotencyObservationConvention#CALL_NAME}. Configure it before the
	 * template is used.
	 * @param observationConvention the convention, or {@code null} for the default
	 * @since 0.1.0
	 */
	public void setObservationConvention(@Nullable IdempotencyObservationConvention observationConvention) {
		this.settings.observationConvention = observationConvention;
	}

	/**
	 * Return a view of this template that uses the given policy.
	 * @param policy the name of a configured policy
	 * @return the view
	 * @throws IllegalArgumentException if no such policy is configured, or it is
	 * transactional
	 */
	public IdempotencyTemplate withPolicy(String policy) {
		this.settings.policy(policy);
		return new IdempotencyTemplate(this.settings, policy, this.operation, this.scope);
	}

	/**
	 * Return a view of this template whose keys are those of the given operation. Two
	 * operations never share a key. Defaults to the name of the policy, which every call
	 * site on that policy shares: name the operation of each call site whose keys may
	 * meet another's.
	 * @param operation the name: letters, digits, {@code .}, {@code _}, {@code -} or
	 * {@code $}
	 * @return the view
	 * @throws IllegalArgumentException if the name has another character
	 */
	public IdempotencyTemplate withOperation(String operation) {
		if (!IdempotencyScopes.isOperationName(operation)) {
			throw new IllegalArgumentException(
					"Operation name '" + operation + "' must be one or more letters, digits, '.', '_', '-' or '$'");
		}
		return new IdempotencyTemplate(this.settings, this.policy, operation, this.scope);
	}

	/**
	 * Return a view of this template whose keys are in the given scope (a tenant, say)
	 * instead of the default one. Stored as {@code custom:<scope>}, the scopes of an
	 * application's own resolver; the empty string is the global scope.
	 * @param scope the scope, never {@code null}
	 * @return the view
	 */
	public IdempotencyTemplate withScope(String scope) {
		Objects.requireNonNull(scope, "'scope' must not be null");
		return new IdempotencyTemplate(this.settings, this.policy, this.operation, IdempotencyScopes.custom(scope));
	}

	/**
	 * Run the operation once for the given key, or return the result it stored.
	 * @param <T> the result type
	 * @param key the key: 1 to 255 characters of visible ASCII
	 * @param request what the operation is asked to do: its canonical JSON is the
	 * fingerprint that tells a retry from another request under the same key; may be
	 * {@code null}
	 * @param resultType the type of the result, as Jackson reads it back
	 * @param operation the operation
	 * @return its result, or the stored one
	 * @throws IdempotencyException instead of running the operation, see the subclasses
	 */
	public <T> @Nullable T execute(String key, @Nullable Object request, Class<T> resultType,
			Supplier<? extends @Nullable T> operation) {
		return execute(key, request, (Type) resultType, operation);
	}

	/**
	 * Run the operation once for the given key, or return the result it stored, for a
	 * generic result type such as {@code List<Refund>}.
	 * @param <T> the result type
	 * @param key the key: 1 to 255 characters of visible ASCII
	 * @param request what the operation is asked to do: its canonical JSON is the
	 * fingerprint; may be {@code null}
	 * @param resultType the type of the result, as Jackson reads it back
	 * @param operation the operation
	 * @return its result, or the stored one
	 * @throws IdempotencyException instead of running the operation, see the subclasses
	 */
	public <T> @Nullable T execute(String key, @Nullable Object request, ParameterizedTypeReference<T> resultType,
			Supplier<? extends @Nullable T> operation) {
		return execute(key, request, resultType.getType(), operation);
	}

	@SuppressWarnings("unchecked")
	private <T> @Nullable T execute(String key, @Nullable Object request, Type resultType,
			Supplier<? extends @Nullable T> operation) {
		Objects.requireNonNull(resultType, "'resultType' must not be null");
		Objects.requireNonNull(operation, "'operation' must not be null");
		try {
			return (T) call(IdempotencyEntryPoint.TEMPLATE, this.policy, operationName(), this.scope, key, request,
					resultType, operation::get);
		}
		catch (RuntimeException | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			// a Supplier throws no checked exception, nor does a replay of one
			throw new IllegalStateException(ex);
		}
	}

	private String operationName() {
		return (this.operation != null) ? this.operation : this.policy;
	}

	/**
	 * Run a call once for its key: what the template and the method interceptor share.
	 * @param entryPoint where the call came in, for its observation
	 * @param policyName the policy
	 * @param operation the operation's name
	 * @param scope the scope in its stored form, or {@code null} for the default one
	 * @param clientKey the key
	 * @param request what the fingerprint covers
	 * @param resultType the declared result type
	 * @param action runs the call
	 * @return the result or the stored one
	 * @throws Throwable what the call threw, or the stored exception
	 */
	@Nullable Object call(IdempotencyEntryPoint entryPoint, String policyName, String operation, @Nullable String scope,
			@Nullable String clientKey, @Nullable Object request, Type resultType, Action action) throws Throwable {
		NamedPolicy policy = this.settings.policy(policyName);
		IdempotencyObservation observation = observe(entryPoint, policyName);
		try (Observation.Scope observed = observation.openScope()) {
			IdempotencyKey key = key(operation, scope, clientKey, observation);
			RequestFingerprint fingerprint = fingerprint(policy, key, operation, request);
			Call call = new Call(key, fingerprint, policy.maxResponseBody(), this.settings.deterministic(policyName),
					resultType, action, observation);
			if (TRANSACTIONS_PRESENT) {
				AfterTransaction.Completed completed = AfterTransaction.completed(key);
				if (completed != null) {
					// ended earlier in this transaction, which sees its own outcome
					return call.completedInThisTransaction(completed);
				}
			}
			boolean joined = TRANSACTIONS_PRESENT && TransactionalClaims.isActive();
			return this.settings.engine.begin(key, fingerprint, policy.call(joined)).handle(call);
		}
		catch (Throwable ex) {
			observation.fail(ex);
			throw ex;
		}
		finally {
			observation.stop();
		}
	}

	private IdempotencyObservation observe(IdempotencyEntryPoint entryPoint, String policyName) {
		ObservationRegistry registry = this.settings.observationRegistry;
		if (registry.isNoop()) {
			return IdempotencyObservation.NONE;
		}
		return IdempotencyObservation.start(registry, IdempotencyObservationDocumentation.IDEMPOTENT_CALL,
				this.settings.observationConvention, DEFAULT_CONVENTION,
				new IdempotencyObservationContext(entryPoint, policyName));
	}

	private IdempotencyKey key(String operation, @Nullable String scope, @Nullable String clientKey,
			IdempotencyObservation observation) {
		if (clientKey == null || clientKey.isEmpty()) {
			observation.outcome(IdempotencyOutcome.MISSING_KEY);
			throw new InvalidIdempotencyKeyException("The idempotency key of operation '" + operation + "' is missing");
		}
		if (!IdempotencyKey.isValidKey(clientKey)) {
			observation.outcome(IdempotencyOutcome.INVALID_KEY);
			throw new InvalidIdempotencyKeyException("The idempotency key of operation '" + operation
					+ "' must be 1 to " + IdempotencyKey.MAX_KEY_LENGTH + " characters of visible ASCII (0x21-0x7E)");
		}
		String inner = (scope != null) ? scope : this.settings.defaultScope.get();
		return new IdempotencyKey(IdempotencyScopes.storable(IdempotencyScopes.operation(operation, inner)), clientKey);
	}

	private RequestFingerprint fingerprint(NamedPolicy policy, IdempotencyKey key, String operation,
			@Nullable Object request) {
		byte[] body;
		String contentType;
		if (request instanceof RecordValue received) {
			// a listener's payload: its own bytes, else its JSON
			body = binaryForm(key, operation, received.value());
			contentType = BINARY;
			if (body == null) {
				body = json(key, operation, received.value());
				contentType = JSON;
			}
		}
		else {
			byte[] json = null;
			JacksonException failure = null;
			try {
				json = this.settings.jsonMapper.writeValueAsBytes(request);
			}
			catch (JacksonException ex) {
				failure = ex;
			}
			if (json != null) {
				body = json;
				contentType = JSON;
			}
			else {
				// a protobuf message, say: its own bytes
				body = binaryForm(key, operation, request);
				contentType = BINARY;
				if (body == null) {
					throw new InvalidIdempotentRequestException(
							"The request of operation '" + operation
									+ "' cannot be written as JSON for its fingerprint (" + failure.getOriginalMessage()
									+ "), and it has no binary form (toByteArray(),"
									+ " toByteBuffer()): set the fingerprint to what identifies the request",
							key, failure);
				}
			}
		}
		return policy.fingerprinter()
			.fingerprint(
					FingerprintInput.of(CALL_METHOD, operation, null, contentType, List.of(), body, 0, body.length));
	}

	private byte @Nullable [] binaryForm(IdempotencyKey key, String operation, @Nullable Object value) {
		try {
			return RecordValue.binaryForm(value);
		}
		catch (RuntimeException ex) {
			throw new InvalidIdempotentRequestException("The payload of operation '" + operation
					+ "' cannot be had in its binary form for its fingerprint: " + ex.getMessage(), key, ex);
		}
	}

	private byte[] json(IdempotencyKey key, String operation, @Nullable Object value) {
		try {
			return this.settings.jsonMapper.writeValueAsBytes(value);
		}
		catch (JacksonException ex) {
			throw new InvalidIdempotentRequestException("The payload of operation '" + operation + "' ("
					+ ((value != null) ? value.getClass().getName() : "null")
					+ ") has no binary form (byte[], String, toByteArray(), toByteBuffer()) and cannot be written as"
					+ " JSON for its fingerprint: " + ex.getOriginalMessage()
					+ "; set the fingerprint to what identifies the message", key, ex);
		}
	}

	// store the outcome (or release the key, for null) now, or in or when the caller's
	// transaction ends: work that is rolled back must not be replayed
	private void end(Execution execution, RequestFingerprint fingerprint, @Nullable StoredResponse outcome) {
		if (TRANSACTIONS_PRESENT
				&& AfterTransaction.end(this.settings.engine.store(), execution, fingerprint, outcome)) {
			return;
		}
		if (outcome != null) {
			execution.complete(outcome);
		}
		else {
			execution.release();
		}
	}

	/**
	 * One call under its key, and what it does with the engine's decision: runs, reads
	 * the stored result back, or throws.
	 */
	private final class Call implements Decision.Handler<@Nullable Object, Throwable> {

		private final IdempotencyKey key;

		private final RequestFingerprint fingerprint;

		private final int maxResultSize;

		private final DeterministicExceptions deterministic;

		private final Type declared;

		private final JavaType type;

		private final Action action;

		private final IdempotencyObservation observation;

		Call(IdempotencyKey key, RequestFingerprint fingerprint, int maxResultSize,
				DeterministicExceptions deterministic, Type declared, Action action,
				IdempotencyObservation observation) {
			this.key = key;
			this.fingerprint = fingerprint;
			this.maxResultSize = maxResultSize;
			this.deterministic = deterministic;
			this.declared = declared;
			this.type = IdempotencyTemplate.this.settings.jsonMapper.constructType(declared);
			this.action = action;
			this.observation = observation;
		}

		@Override
		public @Nullable Object execute(Decision.Execute decision) throws Throwable {
			Execution execution = decision.execution();
			this.observation.executing(execution);
			StoredResults results = IdempotencyTemplate.this.settings.results;
			Object result;
			try {
				result = this.action.run();
			}
			catch (Throwable ex) {
				IdempotencyTemplate.this.end(execution, this.fingerprint,
						this.deterministic.stores(ex) ? results.exception(ex) : null);
				throw ex;
			}
			StoredResponse stored;
			try {
				stored = results.result(result, this.declared, this.type, this.maxResultSize);
			}
			catch (NotStorableException ex) {
				// the call ran: running it again could do its work twice
				logger.error("The result of key '" + execution.key() + "' cannot be stored (" + ex.getMessage()
						+ "): only that the call ran is stored, and every retry under the key throws "
						+ IdempotentResultNotStoredException.class.getSimpleName() + " instead of running it again",
						ex.getCause());
				stored = results.notStored(ex.reason());
			}
			IdempotencyTemplate.this.end(execution, this.fingerprint, stored);
			return result;
		}

		// a second call under the key in the transaction that ended the first one
		@Nullable Object completedInThisTransaction(AfterTransaction.Completed completed) throws Throwable {
			if (!completed.fingerprint().equals(this.fingerprint)) {
				this.observation.outcome(IdempotencyOutcome.MISMATCH);
				throw new IdempotencyKeyReusedException(this.key);
			}
			this.observation.outcome(IdempotencyOutcome.REPLAYED);
			return IdempotencyTemplate.this.settings.results.read(this.key, completed.response(), this.declared,
					this.type, this.deterministic);
		}

		@Override
		public @Nullable Object replay(Decision.Replay decision) throws Throwable {
			this.observation.outcome(IdempotencyOutcome.REPLAYED);
			return IdempotencyTemplate.this.settings.results.read(this.key, decision.response(), this.declared,
					this.type, this.deterministic);
		}

		@Override
		public @Nullable Object inProgress(Decision.InProgress decision) {
			this.observation.outcome(IdempotencyOutcome.IN_PROGRESS);
			throw new IdempotentCallInProgressException(this.key, decision.retryAfter());
		}

		@Override
		public @Nullable Object mismatch(Decision.Mismatch decision) {
			this.observation.outcome(IdempotencyOutcome.MISMATCH);
			throw new IdempotencyKeyReusedException(this.key);
		}

		@Override
		public @Nullable Object unavailable(Decision.Unavailable decision) {
			this.observation.outcome(IdempotencyOutcome.STORE_UNAVAILABLE);
			throw new IdempotencyStoreUnavailableException(this.key, decision.retryAfter(), decision.cause());
		}

		@Override
		public @Nullable Object unprotected(Decision.Unprotected decision) throws Throwable {
			// fail-open: the engine has logged it; run without protection
			this.observation.outcome(IdempotencyOutcome.FAIL_OPEN);
			return this.action.run();
		}

	}

	/**
	 * A call under a key.
	 */
	@FunctionalInterface
	interface Action {

		@Nullable Object run() throws Throwable;

	}

	/**
	 * What the template and its views share.
	 */
	private static final class Settings {

		private final IdempotencyEngine engine;

		private final NamedPolicies policies;

		private volatile StoredResults results;

		private final JsonMapper jsonMapper;

		private volatile Map<String, DeterministicExceptions> deterministic = Map.of();

		private volatile Supplier<String> defaultScope = () -> IdempotencyKey.GLOBAL_SCOPE;

		private volatile ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

		private volatile @Nullable IdempotencyObservationConvention observationConvention;

		Settings(IdempotencyEngine engine, NamedPolicies policies, StoredResults results, JsonMapper jsonMapper) {
			this.engine = engine;
			this.policies = policies;
			this.results = results;
			this.jsonMapper = jsonMapper;
		}

		NamedPolicy policy(String name) {
			NamedPolicy policy = this.policies.get(name);
			if (policy == null) {
				throw new IllegalArgumentException("Idempotency policy '" + name + "' is not configured: add it under "
						+ "'idempotency.policies." + name + "' (configured policies: " + this.policies.names() + ")");
			}
			if (policy.transactional()) {
				throw new IllegalArgumentException("Idempotency policy '" + name + "' is transactional, which only "
						+ "HTTP endpoints support: use a policy that is not transactional (the outcome of a call made "
						+ "in a transaction is stored when that transaction commits)");
			}
			return policy;
		}

		DeterministicExceptions deterministic(String name) {
			return this.deterministic.getOrDefault(name, DeterministicExceptions.NONE);
		}

		void setDeterministic(Map<String, DeterministicExceptions> deterministic) {
			this.deterministic = deterministic;
		}

	}

}
